import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import '../../platform/http/actor.ts';
import { ClientHeadersSchema, tenantOf } from '../companies/index.ts';
import type { DisputeService } from './dispute-service.ts';
import {
  AdminDisputeParamsSchema,
  AdminDisputeQuerySchema,
  DisputeDecisionSchema,
  DisputeListSchema,
  DisputeParamsSchema,
  DisputeSchema,
  NewDisputeSchema,
  PolicyParamsSchema,
} from './score-schemas.ts';
import type { ScoreReader } from './score-service.ts';

const readerOf = (request: FastifyRequest): ScoreReader =>
  request.policyholder === null
    ? { kind: 'client' }
    : { kind: 'policyholder', userId: request.policyholder.userId };

const disputeRef = Type.Ref('ScoreDispute');
const clientSecurity = [{ clientId: [], clientSecret: [] }, { policyholderToken: [] }];
const adminSecurity = [{ adminKey: [] }];

/** A policyholder's disputes of driving events, and the staff queue that decides them. */
export function disputeRoutes(deps: {
  disputes: DisputeService;
  /** Client credentials or a policyholder's token (the auth module's `clientOrPolicyholder`). */
  authenticate: onRequestAsyncHookHandler;
  adminAuth: onRequestAsyncHookHandler;
}): FastifyPluginAsyncTypebox {
  const { disputes, authenticate, adminAuth } = deps;
  return async (app) => {
    app.addSchema(DisputeSchema);
    app.post(
      '/policys/:policy_reference/score-events/:event_reference/disputes',
      {
        onRequest: authenticate,
        schema: {
          operationId: 'scores.dispute',
          tags: ['scores'],
          summary: 'Dispute a driving event',
          description:
            'The policyholder disputes one event of a trip (I was a passenger, a GPS error, or in their words). Staff accept it (the event no longer counts and the trip’s and month’s scores are worked out again) or reject it with a reason; the policyholder is emailed either way. A month with a pending dispute is not used for pricing until it is decided. An event disputes once: 409 `EVENT_ALREADY_DISPUTED` after. Another company’s or policyholder’s event answers 404.',
          security: clientSecurity,
          headers: ClientHeadersSchema,
          params: DisputeParamsSchema,
          body: NewDisputeSchema,
          response: { 201: disputeRef, ...problemResponses(401, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        const { policy_reference, event_reference } = request.params;
        const dispute = await disputes.open(
          tenantOf(request),
          readerOf(request),
          policy_reference,
          event_reference,
          request.body,
        );
        return reply.code(201).send(dispute);
      },
    );
    app.get(
      '/policys/:policy_reference/score-disputes',
      {
        onRequest: authenticate,
        schema: {
          operationId: 'scores.listDisputes',
          tags: ['scores'],
          summary: 'The policy’s disputes of driving events',
          description: 'Newest first. Client credentials, or the policyholder’s own token.',
          security: clientSecurity,
          headers: ClientHeadersSchema,
          params: PolicyParamsSchema,
          response: { 200: DisputeListSchema, ...problemResponses(401, 404) },
        },
      },
      async (request) => ({
        disputes: await disputes.list(tenantOf(request), readerOf(request), request.params.policy_reference),
      }),
    );
    app.get(
      '/admin/score-disputes',
      {
        onRequest: adminAuth,
        schema: {
          operationId: 'scores.disputeQueue',
          tags: ['admin'],
          summary: 'Disputed driving events, by state',
          description:
            'Every company’s disputes in one state (default `pending`), oldest first, at most 500, each with its `company_reference`.',
          security: adminSecurity,
          querystring: AdminDisputeQuerySchema,
          response: { 200: DisputeListSchema, ...problemResponses(401, 403, 422) },
        },
      },
      async (request) => ({ disputes: await disputes.queue(request.query.state ?? 'pending') }),
    );
    app.get(
      '/admin/score-disputes/:dispute_reference',
      {
        onRequest: adminAuth,
        schema: {
          operationId: 'scores.getDispute',
          tags: ['admin'],
          summary: 'One dispute of a driving event',
          security: adminSecurity,
          params: AdminDisputeParamsSchema,
          response: { 200: disputeRef, ...problemResponses(401, 403, 404) },
        },
      },
      async (request) => disputes.get(request.params.dispute_reference),
    );
    app.post(
      '/admin/score-disputes/:dispute_reference/decision',
      {
        onRequest: adminAuth,
        schema: {
          operationId: 'scores.decideDispute',
          tags: ['admin'],
          summary: 'Accept or reject a disputed driving event',
          description:
            'An operations or admin staff member accepts (the event no longer counts; the trip’s and month’s scores are worked out again in the same transaction) or rejects a pending dispute, with a reason. The decision and the scores it changed are in the staff audit trail; the policyholder is emailed either way and `score.dispute_decided` is sent. 409 `DISPUTE_DECIDED` when it was decided already; 403 for the admin API key, which is no staff member.',
          security: adminSecurity,
          params: AdminDisputeParamsSchema,
          body: DisputeDecisionSchema,
          response: { 200: disputeRef, ...problemResponses(401, 403, 404, 409, 422) },
        },
      },
      async (request) => {
        const actor = request.actor;
        if (actor?.kind !== 'staff')
          throw new AppError('FORBIDDEN', 'A dispute is decided by a staff member (operations or admin)');
        return disputes.decide(
          request.params.dispute_reference,
          { staffId: actor.staffId, email: actor.email },
          request.body,
        );
      },
    );
  };
}
