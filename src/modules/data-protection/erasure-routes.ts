import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { problemResponses } from '../../platform/http/problem.ts';
import type { ErasureService } from './erasure-service.ts';

export const EraseBodySchema = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 500,
      description:
        'Why the account is erased (the request, a legal instruction): kept in the audit trail with the request. Name no one in it.',
      examples: ['Erasure request of 2031-03-02, retention period over'],
    }),
    force: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Erase now, before the retention period after the last policy end has passed (a legal instruction).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ErasureResultSchema = Type.Object({
  user_reference: Type.String(),
  erased_at: Type.String({ format: 'date-time' }),
  forced: Type.Boolean({ description: 'True when erased with `force` before the retention period ended.' }),
  policy_references: Type.Array(Type.String(), { description: 'The policies whose records were erased.' }),
  journeys_erased: Type.Integer({ description: 'Journeys that lost their routes and places.' }),
  positions_deleted: Type.Integer({ description: 'Raw telematics positions deleted.' }),
  emails_erased: Type.Integer({
    description: 'Emails to them whose recipient, bodies and data were erased.',
  }),
  audit_records_scrubbed: Type.Integer({
    description: 'Audit records whose before/after values held their personal data.',
  }),
  quotes_erased: Type.Integer({
    description: 'Quotes asked for with their addresses or bound to their policies, pseudonymised.',
  }),
  documents_deleted: Type.Integer({ description: 'Issued documents (PDFs) of their policies deleted.' }),
  documents_kept: Type.Array(
    Type.Object({
      document_id: Type.String({ format: 'uuid' }),
      policy_reference: Type.String(),
      kind: Type.String({ description: '`certificate` or `schedule`.' }),
      keep_until: Type.String({ format: 'date-time', description: 'Six years after the term ended.' }),
      reason: Type.String({ description: 'The law that requires keeping it.' }),
    }),
    {
      description:
        'Documents the law requires keeping, kept as issued: a term’s certificate and schedule until six years after the term ends (docs/data-protection.md).',
    },
  ),
  claims_kept: Type.Array(
    Type.Object({
      claim_reference: Type.String({ format: 'uuid' }),
      state: Type.String({ description: '`draft`, `open` or `reopened`.' }),
      reason: Type.String({ description: 'The legal hold recorded on the claim.' }),
    }),
    {
      description:
        'Claims still in progress, kept whole under a legal hold recorded on each (UK GDPR Art. 17(3)(e)); the other claims lose their places, traces, free text, notes and photos, their money kept.',
    },
  ),
});

export interface ErasureRouteDeps {
  readonly erasure: ErasureService;
  readonly adminAuth: onRequestAsyncHookHandler;
}

/** `POST /admin/policyholders/{user_reference}/erase`. */
export function erasureRoutes(deps: ErasureRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/admin/policyholders/:user_reference/erase',
      {
        onRequest: deps.adminAuth,
        // NOTE: the request is recorded once (actor, action, resource, reason) by the staff access hook;
        // the rows it changes are not copied into the trail, which would keep the very values erased.
        config: { auditRows: false },
        schema: {
          operationId: 'policyholders.erase',
          tags: ['admin'],
          summary: 'Erase a policyholder',
          description:
            'Erases a policyholder’s personal data (UK GDPR art. 17) in one transaction: the account (it can no longer sign in), the proposer, named drivers, address and vehicle identity in every version of their policies, their journeys’ routes and places, raw positions, emails, events and audit records naming them. Financial records (versions’ pricing, statements, payments, credits) stay, with pseudonyms. Allowed once every policy of theirs has ended and `RETENTION_AFTER_END_DAYS` have passed since the last end, or with `force: true`. Emits `account.erased`. See docs/data-protection.md.',
          security: [{ adminKey: [] }],
          params: Type.Object(
            { user_reference: Type.String({ minLength: 1, maxLength: 100 }) },
            { additionalProperties: false },
          ),
          body: EraseBodySchema,
          response: {
            200: ErasureResultSchema,
            ...problemResponses(401, 403, 404, 409, 422),
          },
        },
      },
      async (request) => {
        const result = await deps.erasure.erase(request.params.user_reference, {
          reason: request.body.reason,
          force: request.body.force ?? false,
        });
        return {
          user_reference: result.userReference,
          erased_at: result.erasedAt.toISOString(),
          forced: result.forced,
          policy_references: [...result.policyReferences],
          journeys_erased: result.journeysErased,
          positions_deleted: result.positionsDeleted,
          emails_erased: result.emailsErased,
          audit_records_scrubbed: result.auditRecordsScrubbed,
          quotes_erased: result.quotesErased,
          documents_deleted: result.documentsDeleted,
          documents_kept: result.documentsKept.map((d) => ({
            document_id: d.documentId,
            policy_reference: d.policyReference,
            kind: d.kind,
            keep_until: d.keepUntil.toISOString(),
            reason: d.reason,
          })),
          claims_kept: result.claimsKept.map((c) => ({
            claim_reference: c.claimId,
            state: c.state,
            reason: c.reason,
          })),
        };
      },
    );
  };
}
