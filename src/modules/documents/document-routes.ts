import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { create as contentDisposition } from 'content-disposition';
import { Type } from 'typebox';
import { notFound } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth } from '../companies/index.ts';
import type { PolicyholderAccess } from '../payments/index.ts';
import {
  DocumentListSchema,
  DocumentParamsSchema,
  DocumentSchema,
  DocumentSettingsBodySchema,
  DocumentSettingsSchema,
  PolicyDocumentsParamsSchema,
  ReissueBodySchema,
  ReissueParamsSchema,
} from './document-schemas.ts';
import type { DocumentService } from './document-service.ts';
import type { DocumentSettings } from './document-repository.ts';

const security = [{ clientId: [], clientSecret: [] }];
type TypedApp = Parameters<FastifyPluginAsyncTypebox>[0];

interface DocumentRouteDeps {
  readonly documents: DocumentService;
  readonly clientAuth: ClientAuth;
  /** Client credentials, or a policyholder's token for their own policies. */
  readonly policyholders: PolicyholderAccess;
}

const settingsView = (settings: DocumentSettings) => ({
  attach_to_emails: settings.attachToEmails,
  updated_at: settings.updatedAt?.toISOString() ?? null,
});

/** GET /policys/:policy_reference/documents and GET /documents/:document_id: clients and policyholders. */
function registerReads(app: TypedApp, deps: DocumentRouteDeps): void {
  const { documents, policyholders } = deps;
  /** A policyholder reaches only their own policies' documents; another's is "not found". */
  const checkOwner = async (request: FastifyRequest, reference: string, what: string): Promise<void> => {
    const holder = request.policyholder;
    if (holder === null) return;
    if (!(await policyholders.ownsPolicy(holder.tenant, holder.userId, reference))) throw notFound(what);
  };

  app.get(
    '/policys/:policy_reference/documents',
    {
      onRequest: policyholders.authenticate,
      schema: {
        operationId: 'documents.list',
        tags: ['documents'],
        summary: 'A policy’s documents',
        description:
          'Every document issued for the policy (certificate of motor insurance, schedule, IPID, statement of fact, renewal and cancellation notices, statements, credit notes), the current certificate first, then newest first. Documents are made by the worker shortly after the change that owes them commits. Client credentials, or the policyholder’s own token; another company’s or policyholder’s policy answers 404.',
        security: [...security, { policyholderToken: [] }],
        headers: ClientHeadersSchema,
        params: PolicyDocumentsParamsSchema,
        response: { 200: DocumentListSchema, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => {
      await checkOwner(request, request.params.policy_reference, 'policy');
      return { documents: await documents.list(tenantOf(request), request.params.policy_reference) };
    },
  );

  app.get(
    '/documents/:document_id',
    {
      onRequest: policyholders.authenticate,
      schema: {
        operationId: 'documents.get',
        tags: ['documents'],
        summary: 'A document’s PDF',
        description:
          'The PDF as issued (its SHA-256 is the listed `sha256`), served inline with its file name in `Content-Disposition` (RFC 6266, with `filename*` for names beyond ASCII). Client credentials, or the policyholder’s own token; another company’s or policyholder’s document answers 404.',
        security: [...security, { policyholderToken: [] }],
        headers: ClientHeadersSchema,
        params: DocumentParamsSchema,
        response: {
          200: {
            description: 'The PDF.',
            content: { 'application/pdf': { schema: Type.String({ format: 'binary' }) } },
          },
          ...problemResponses(401, 404, 422),
        },
      },
    },
    async (request, reply) => {
      const { document, policyReference, content } = await documents.file(
        tenantOf(request),
        request.params.document_id,
      );
      await checkOwner(request, policyReference, 'Document');
      // The type provider types the body from the schema; the bytes are sent as they are.
      return reply
        .type('application/pdf')
        .header('content-disposition', contentDisposition(document.fileName, { type: 'inline' }))
        .header('cache-control', 'private, max-age=3600, immutable')
        .header('etag', `"${document.sha256}"`)
        .send(Buffer.from(content) as never);
    },
  );
}

/** POST reissue, and the company's document settings: integrations, and staff sessions by role. */
function registerActions(app: TypedApp, deps: DocumentRouteDeps): void {
  const { documents, clientAuth } = deps;
  app.post(
    '/policys/:policy_reference/documents/:document_id/reissue',
    {
      onRequest: clientAuth(),
      // The request is the audit record (who, why, which policy); the document rows are not copied.
      config: { auditRows: false },
      schema: {
        operationId: 'documents.reissue',
        tags: ['documents'],
        summary: 'Reissue a document',
        description:
          'Issues a new document with the same subject (the same policy version, statement, refund or void) rendered now with the current template; the original stays as issued, and the new one names it in `reissue_of`. Audited with its `reason`. Client credentials, or a staff session of `operations` or `admin`. 404 when the policy or document is not the company’s, or the document is not the policy’s; 409 for a renewal notice of terms stored for automatic renewal once those terms are gone (the renewal withdrawn), and for a certificate that is not the policy’s current one (superseded by an adjustment or renewal, or the policy cancelled, lapsed or past its term: a certificate issued again certifies cover now).',
        security,
        headers: ClientHeadersSchema,
        params: ReissueParamsSchema,
        body: ReissueBodySchema,
        response: { 201: DocumentSchema, ...problemResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const { policy_reference: reference, document_id: id } = request.params;
      const reissued = await documents.reissue(tenantOf(request), reference, id, request.body.reason);
      return reply.code(201).header('location', reissued.url).send(reissued);
    },
  );

  app.get(
    '/documents/settings',
    {
      onRequest: clientAuth(),
      schema: {
        operationId: 'documents.settings',
        tags: ['documents'],
        summary: 'The company’s document settings',
        security,
        headers: ClientHeadersSchema,
        response: { 200: DocumentSettingsSchema, ...problemResponses(401) },
      },
    },
    async (request) => settingsView(await documents.settings(tenantOf(request))),
  );

  app.put(
    '/documents/settings',
    {
      onRequest: clientAuth(),
      schema: {
        operationId: 'documents.updateSettings',
        tags: ['documents'],
        summary: 'Set the company’s document settings',
        description:
          'Per environment. `attach_to_emails`: each change’s documents are also emailed to the policyholder as attachments (default false: the emails link the web app’s documents page). Client credentials, or a staff session of `admin`.',
        security,
        headers: ClientHeadersSchema,
        body: DocumentSettingsBodySchema,
        response: { 200: DocumentSettingsSchema, ...problemResponses(401, 403, 422) },
      },
    },
    async (request) =>
      settingsView(
        await documents.saveSettings(tenantOf(request), { attachToEmails: request.body.attach_to_emails }),
      ),
  );
}

/** The documents routes. */
export function documentRoutes(deps: DocumentRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    registerActions(app, deps);
    registerReads(app, deps);
  };
}
