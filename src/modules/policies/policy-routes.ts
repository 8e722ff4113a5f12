import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { problemResponses } from '../../platform/http/problem.ts';
import { requireWholePence } from '../../platform/money.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth } from '../companies/index.ts';
import { PolicyInputSchema, PolicyResponseSchema, RenewalInputSchema } from './policy-schemas.ts';
import type { PolicyService } from './policy-service.ts';

const policyLocation = (reference: string): string => `/policys/${encodeURIComponent(reference)}`;

const ReferenceParams = Type.Object({
  policy_reference: Type.String({ minLength: 1, maxLength: 100, examples: ['amber-falcon-river'] }),
});

const paymentAmount = Type.Number({
  minimum: -100_000_000,
  maximum: 100_000_000,
  description:
    'Pounds, at most 2 decimals: positive refunds the policyholder, negative charges them. Absent: old upfront_premium × remaining share − cancel_fee − admin_fee, neither fee deducted in the term’s 14-day cooling-off period (ICOBS 7.2.1R).',
});

const CancelBody = Type.Object(
  {
    effective_date: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 4_102_444_800,
        description:
          'UNIX seconds; defaults to now. Before the start cancels from inception. Not before the end of the last statement’s period (409).',
      }),
    ),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    payment_amount: Type.Optional(paymentAmount),
  },
  { additionalProperties: false },
);
const CancelByBody = Type.Object(
  {
    policy_reference: Type.String({ minLength: 1, maxLength: 100 }),
    effective_date: Type.Optional(Type.Integer({ minimum: 0, maximum: 4_102_444_800 })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    payment_amount: Type.Optional(paymentAmount),
  },
  { additionalProperties: false },
);
const security = [{ clientId: [], clientSecret: [] }];
const tags = ['policies'];

const cancelDescription =
  'Writes a `cn` version effective at `effective_date` (default now; a date before the start cancels from inception; after the end answers 422) and marks the policy cancelled. A statement already issued billed the cover up to its period’s end, so a time before the end of the last statement’s period answers 409 naming the earliest accepted at `/body/effective_date`. A `policy.cancelled` event is recorded for the final statement and the refund.';

/**
 * A cancellation's body with its `payment_amount` in whole pence (422 otherwise): the settlement reads
 * it as pence, and JSON Schema's `multipleOf: 0.01` divides in binary floats (it refuses 1.15).
 */
function inWholePence<Body extends { payment_amount?: number | undefined }>(body: Body): Body {
  if (body.payment_amount !== undefined) requireWholePence(body.payment_amount, '/body/payment_amount');
  return body;
}

type App = Parameters<FastifyPluginAsyncTypebox>[0];
type AuthHook = ReturnType<ClientAuth>;

/** POST /policys: a new policy, or an adjustment of one. */
function registerSubmission(app: App, policies: PolicyService, onRequest: AuthHook): void {
  app.post(
    '/policys',
    {
      onRequest,
      schema: {
        operationId: 'policies.submit',
        tags,
        summary: 'Create a policy, or adjust one',
        description: [
          'Without `policy.policy_reference`: creates the policy (201) with a first `nb` version, and the policyholder’s account in the same transaction. The welcome email (username and temporary password) is sent after commit; when the email already has an account in this company and environment, the policy joins it and a “policy added” email is sent instead.',
          'With `policy.policy_reference` naming an existing policy: a mid-term adjustment (200) writing an `mta` version with the whole new snapshot, effective at `effective_date` (default now). Adjusting a cancelled or lapsed policy answers 409.',
        ].join('\n\n'),
        security,
        headers: ClientHeadersSchema,
        body: PolicyInputSchema,
        response: {
          200: PolicyResponseSchema,
          201: PolicyResponseSchema,
          ...problemResponses(401, 404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const result = await policies.submit(tenantOf(request), request.body);
      if (result.created) void reply.header('location', policyLocation(result.policy.policy_reference));
      return reply.code(result.created ? 201 : 200).send(result.policy);
    },
  );
}

/** GET /policys/:policy_reference. */
function registerPolicyReads(app: App, policies: PolicyService, onRequest: AuthHook): void {
  app.get(
    '/policys/:policy_reference',
    {
      onRequest,
      schema: {
        operationId: 'policies.get',
        tags,
        summary: 'Read a policy',
        description:
          'The latest snapshot with every version, oldest first (including `st` statement versions). Another company’s or environment’s policy answers 404.',
        security,
        headers: ClientHeadersSchema,
        params: ReferenceParams,
        response: { 200: PolicyResponseSchema, ...problemResponses(401, 404) },
      },
    },
    async (request) => policies.get(tenantOf(request), request.params.policy_reference),
  );
}

/** POST /policys/:policy_reference/welcome-email. */
function registerWelcomeEmail(app: App, policies: PolicyService, onRequest: AuthHook): void {
  app.post(
    '/policys/:policy_reference/welcome-email',
    {
      onRequest,
      schema: {
        operationId: 'policies.resendWelcome',
        tags: ['policies'],
        summary: 'Send the welcome email again, with a new temporary password',
        description:
          'For a policyholder who has not signed in yet (lost or expired temporary password): the previous temporary password stops working. 409 once they have chosen their own password (they use "Forgot password").',
        security,
        headers: ClientHeadersSchema,
        params: ReferenceParams,
        response: {
          202: Type.Object({ sent_to: Type.String({ description: 'The address the email goes to.' }) }),
          ...problemResponses(401, 403, 404, 409, 422),
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await policies.resendWelcome(tenantOf(request), request.params.policy_reference)),
  );
}

/** DELETE /policys/:policy_reference and DELETE /policys (the reference in the body). */
function registerCancellations(app: App, policies: PolicyService, onRequest: AuthHook): void {
  app.delete(
    '/policys/:policy_reference',
    {
      onRequest,
      schema: {
        operationId: 'policies.cancel',
        tags,
        summary: 'Cancel a policy',
        description: cancelDescription,
        security,
        headers: ClientHeadersSchema,
        params: ReferenceParams,
        body: Type.Union([CancelBody, Type.Null()], { description: 'Optional.' }),
        response: { 200: PolicyResponseSchema, ...problemResponses(401, 404, 409, 422) },
      },
    },
    async (request) =>
      policies.cancel(tenantOf(request), request.params.policy_reference, inWholePence(request.body ?? {})),
  );

  app.delete(
    '/policys',
    {
      onRequest,
      schema: {
        operationId: 'policies.cancelByBody',
        tags,
        summary: 'Cancel a policy named in the body',
        description: `The original service’s form: \`{policy_reference, effective_date?, reason?}\` in the body. ${cancelDescription}`,
        security,
        headers: ClientHeadersSchema,
        body: CancelByBody,
        response: { 200: PolicyResponseSchema, ...problemResponses(401, 404, 409, 422) },
      },
    },
    async (request) => {
      const { policy_reference: reference, ...rest } = inWholePence(request.body);
      return policies.cancel(tenantOf(request), reference, rest);
    },
  );
}

/** POST /policys/:policy_reference/renewals. */
function registerRenewals(app: App, policies: PolicyService, onRequest: AuthHook): void {
  app.post(
    '/policys/:policy_reference/renewals',
    {
      onRequest,
      schema: {
        operationId: 'policies.renew',
        tags,
        summary: 'Renew a policy for a new term',
        description:
          'Writes an `rn` version now (201) for the new term: the body is the policy object of POST /policys, every block optional but `pricing` (blocks sent replace the current ones, the rest carry over; `policy.start_date`/`end_date` set the term, by default 1 s after the current end to the same Europe/London anniversary; `policy_year` defaults to the current + 1). The older body `{pricing, start_date?, end_date?}` still works. Written before its term starts, the renewal waits: the policy reads as the current term with the renewal under `renewal`; a second renewal replaces the first (kept, `superseded`). For a policy with `auto_renew` whose term has not ended, the terms are kept instead (202) and the daily job renews at `end_date`; a `payment` block (the renewal premium, checked with the processor as at binding) writes the renewal at once. A live policy whose term ends without stored terms lapses (`ls`). A lapsed policy is renewed only from the end of its last term (the lapse is superseded); otherwise, and for cancelled policies, 409.',
        security,
        headers: ClientHeadersSchema,
        params: ReferenceParams,
        body: RenewalInputSchema,
        response: {
          201: PolicyResponseSchema,
          202: PolicyResponseSchema,
          ...problemResponses(401, 404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const result = await policies.renew(tenantOf(request), request.params.policy_reference, request.body);
      return reply
        .code(result.scheduled ? 202 : 201)
        .header('location', policyLocation(result.policy.policy_reference))
        .send(result.policy);
    },
  );
}

/** POST /policys, GET /policys/:policy_reference, DELETE /policys[/:policy_reference], POST /policys/:policy_reference/renewals. */
export function policyRoutes(deps: {
  policies: PolicyService;
  clientAuth: ClientAuth;
}): FastifyPluginAsyncTypebox {
  const { policies, clientAuth } = deps;
  return async (app) => {
    const onRequest = clientAuth();
    registerSubmission(app, policies, onRequest);
    registerPolicyReads(app, policies, onRequest);
    registerWelcomeEmail(app, policies, clientAuth());
    registerCancellations(app, policies, onRequest);
    registerRenewals(app, policies, onRequest);
  };
}
