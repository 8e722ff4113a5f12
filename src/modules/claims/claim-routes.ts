import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../../platform/errors.ts';
import { requireWholePence } from '../../platform/money.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth } from '../companies/index.ts';
import type { PolicyholderAccess } from '../payments/index.ts';
import type { ClaimAuthor } from './claim-life-service.ts';
import {
  ClaimListSchema,
  ClaimParamsSchema,
  ClaimQuerySchema,
  ClaimSchema,
  ClaimSettingsBodySchema,
  ClaimSettingsSchema,
  ConfirmClaimSchema,
  ExposureParamsSchema,
  FaultSchema,
  HandlerSchema,
  NewExposureSchema,
  NewPaymentSchema,
  NoteBodySchema,
  PhotoParamsSchema,
  PolicyClaimItemParamsSchema,
  PolicyClaimParamsSchema,
  ReportClaimSchema,
  ReserveSchema,
  TransitionSchema,
} from './claim-schemas.ts';
import type { ClaimService } from './claim-service.ts';
import { MAX_PHOTO_BYTES, MAX_REPORTED_IN_PROGRESS, PHOTO_TYPES } from './rules/index.ts';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

const tags = ['claims'];
const security = [{ clientId: [], clientSecret: [] }];
const securityEither = [...security, { policyholderToken: [] }];
const claimRef = Type.Ref('Claim');
/** Bodies beyond this are refused unread (413); up to it, a photo over 10 MiB is answered 422. */
const PHOTO_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

interface ClaimRouteDeps {
  readonly claims: ClaimService;
  readonly clientAuth: ClientAuth;
  readonly policyholders: PolicyholderAccess;
}

/** Who acts, as a note records it: a staff member, the admin key, or the client's system. */
function authorOf(request: FastifyRequest): ClaimAuthor {
  const actor = request.actor;
  if (actor?.kind === 'staff') return { author: `staff:${actor.email}`, staffId: actor.staffId };
  if (actor?.kind === 'admin-key') return { author: 'admin-key', staffId: null };
  return { author: 'client', staffId: null };
}

/** A policyholder reaches only their own policies' claims; another's is "not found". */
function ownerCheck(deps: ClaimRouteDeps) {
  return async (request: FastifyRequest, reference: string): Promise<void> => {
    const holder = request.policyholder;
    if (holder === null) return;
    if (!(await deps.policyholders.ownsPolicy(holder.tenant, holder.userId, reference)))
      throw notFound('policy');
  };
}

const holderNote =
  ' Client credentials, or the policyholder’s own token; another company’s or policyholder’s policy or claim answers 404.';

/** The policy's claims: read, confirm or cancel a draft, report one, photos. */
function registerPolicyClaims(app: App, deps: ClaimRouteDeps): void {
  const { claims } = deps;
  const checkOwner = ownerCheck(deps);
  const common = { onRequest: deps.policyholders.authenticate };
  app.get(
    '/policys/:policy_reference/claims',
    {
      ...common,
      schema: {
        operationId: 'claims.listOfPolicy',
        tags,
        summary: 'A policy’s claims',
        description: `Newest incident first, with state, crash file, cover in force, exposures and payments (staff’s notes left out).${holderNote}`,
        security: securityEither,
        headers: ClientHeadersSchema,
        params: PolicyClaimParamsSchema,
        response: { 200: ClaimListSchema, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => {
      await checkOwner(request, request.params.policy_reference);
      return claims.listOfPolicy(tenantOf(request), request.params.policy_reference);
    },
  );

  app.post(
    '/policys/:policy_reference/claims',
    {
      ...common,
      schema: {
        operationId: 'claims.report',
        tags,
        summary: 'Report a claim',
        description: `A claim with no crash behind it: when, where (a point picked on a map), what happened, other parties, and the answers on injuries, other vehicles and police. 201, open at once, with the policy version in force at that time; \`claim.opened\`. 422 for a time in the future or before the policy began; with the policyholder’s token, 409 while the policy has ${String(MAX_REPORTED_IN_PROGRESS)} reported claims in progress (not closed, rejected or withdrawn). With \`report_reference\`, the same report sent again (its answer lost, or sent twice) opens nothing more: 200 with the claim it opened.${holderNote}`,
        security: securityEither,
        headers: ClientHeadersSchema,
        params: PolicyClaimParamsSchema,
        body: ReportClaimSchema,
        response: { 200: claimRef, 201: claimRef, ...problemResponses(401, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await checkOwner(request, request.params.policy_reference);
      const { claim, replayed } = await claims.report(
        tenantOf(request),
        request.params.policy_reference,
        request.body,
        request.policyholder === null ? 'client' : 'policyholder',
      );
      return reply.code(replayed ? 200 : 201).send(claim);
    },
  );

  app.get(
    '/policys/:policy_reference/claims/:claim_reference',
    {
      ...common,
      schema: {
        operationId: 'claims.getOfPolicy',
        tags,
        summary: 'A claim of the policy',
        description: `The claim, its \`next_states\` and what happens next (\`respond_by\` for a draft).${holderNote}`,
        security: securityEither,
        headers: ClientHeadersSchema,
        params: PolicyClaimItemParamsSchema,
        response: { 200: claimRef, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const { policy_reference: reference, claim_reference: claimId } = request.params;
      await checkOwner(request, reference);
      return claims.getOfPolicy(tenantOf(request), reference, claimId);
    },
  );
}

/** A policyholder's answers to a draft, and the photos' bytes. */
function registerPolicyAnswers(app: App, deps: ClaimRouteDeps): void {
  const { claims } = deps;
  const checkOwner = ownerCheck(deps);
  const common = { onRequest: deps.policyholders.authenticate };
  app.post(
    '/policys/:policy_reference/claims/:claim_reference/confirm',
    {
      ...common,
      schema: {
        operationId: 'claims.confirm',
        tags,
        summary: 'I’ve had an accident',
        description: `Confirms a draft opened by a crash, with the answers: injuries, other vehicles, police (and optionally what happened and other parties). The claim becomes open (\`claim.updated\`). 409 unless it is a draft.${holderNote}`,
        security: securityEither,
        headers: ClientHeadersSchema,
        params: PolicyClaimItemParamsSchema,
        body: ConfirmClaimSchema,
        response: { 200: claimRef, ...problemResponses(401, 404, 409, 422) },
      },
    },
    async (request) => {
      const { policy_reference: reference, claim_reference: claimId } = request.params;
      await checkOwner(request, reference);
      return claims.confirm(tenantOf(request), reference, claimId, request.body);
    },
  );

  app.post(
    '/policys/:policy_reference/claims/:claim_reference/cancel',
    {
      ...common,
      schema: {
        operationId: 'claims.cancel',
        tags,
        summary: 'False alarm',
        description: `Withdraws a draft opened by a crash that was no accident (\`claim.updated\`). 409 unless it is a draft.${holderNote}`,
        security: securityEither,
        headers: ClientHeadersSchema,
        params: PolicyClaimItemParamsSchema,
        response: { 200: claimRef, ...problemResponses(401, 404, 409, 422) },
      },
    },
    async (request) => {
      const { policy_reference: reference, claim_reference: claimId } = request.params;
      await checkOwner(request, reference);
      return claims.cancel(tenantOf(request), reference, claimId);
    },
  );

  app.get(
    '/policys/:policy_reference/claims/:claim_reference/photos/:photo_id',
    {
      ...common,
      schema: {
        operationId: 'claims.photo',
        tags,
        summary: 'A photo of the claim',
        description: `The photo’s bytes, with the type told by its content.${holderNote}`,
        security: securityEither,
        headers: ClientHeadersSchema,
        params: PhotoParamsSchema,
        response: {
          200: {
            description: 'The photo.',
            content: Object.fromEntries(PHOTO_TYPES.map((t) => [t, { schema: {} }])),
          },
          ...problemResponses(401, 404, 422),
        },
      },
    },
    async (request, reply) => {
      const { policy_reference: reference, claim_reference: claimId, photo_id: photoId } = request.params;
      await checkOwner(request, reference);
      const photo = await claims.photo(tenantOf(request), reference, claimId, photoId);
      return reply
        .header('content-type', photo.contentType)
        .header('x-content-type-options', 'nosniff')
        .send(photo.content);
    },
  );
}

/** POST …/photos: its own scope takes any body as bytes, so the type is judged by content alone. */
async function registerPhotoUpload(app: App, deps: ClaimRouteDeps): Promise<void> {
  const checkOwner = ownerCheck(deps);
  await app.register(async (uploads) => {
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
      done(null, body);
    });
    uploads.post(
      '/policys/:policy_reference/claims/:claim_reference/photos',
      {
        onRequest: deps.policyholders.authenticate,
        bodyLimit: PHOTO_BODY_LIMIT_BYTES,
        schema: {
          operationId: 'claims.addPhoto',
          tags,
          summary: 'Attach a photo',
          description: `The photo’s bytes as the body (any content type; the type is judged by the bytes): JPEG, PNG, HEIC or WebP, at most ${String(MAX_PHOTO_BYTES / 1024 / 1024)} MiB, stored with the claim. 201 with the claim; 422 for anything else or anything larger (413 beyond 16 MiB, refused unread); 409 on a closed, rejected or withdrawn claim.${holderNote}`,
          security: securityEither,
          headers: ClientHeadersSchema,
          params: PolicyClaimItemParamsSchema,
          body: {
            content: Object.fromEntries(
              [...PHOTO_TYPES, 'application/octet-stream'].map((t) => [
                t,
                { schema: { description: 'The photo’s bytes.' } },
              ]),
            ),
          },
          response: { 201: claimRef, ...problemResponses(401, 404, 409, 413, 422) },
        },
      },
      async (request, reply) => {
        const { policy_reference: reference, claim_reference: claimId } = request.params as {
          policy_reference: string;
          claim_reference: string;
        };
        await checkOwner(request, reference);
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        return reply.code(201).send(await deps.claims.addPhoto(tenantOf(request), reference, claimId, body));
      },
    );
  });
}

/** The company's claims for staff and claims systems: the queue, a claim, its life. */
function registerStaffClaims(app: App, deps: ClaimRouteDeps): void {
  const { claims } = deps;
  const onRequest = deps.clientAuth();
  const base = { security, headers: ClientHeadersSchema, tags };
  app.get(
    '/claims',
    {
      onRequest,
      schema: {
        ...base,
        operationId: 'claims.queue',
        summary: 'The claims queue',
        description:
          'The company’s claims: drafts (new first notices of loss) first, then by the incident’s time, newest first; `state` and `referred` (unanswered drafts sent to staff) filter. Staff sessions with any role may read.',
        querystring: ClaimQuerySchema,
        response: { 200: ClaimListSchema, ...problemResponses(401, 422) },
      },
    },
    async (request) => claims.queue(tenantOf(request), request.query),
  );

  app.get(
    '/claims/:claim_reference',
    {
      onRequest,
      schema: {
        ...base,
        operationId: 'claims.get',
        summary: 'A claim',
        description: 'With exposures, payments, photos and notes. Another company’s claim answers 404.',
        params: ClaimParamsSchema,
        response: { 200: claimRef, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => claims.get(tenantOf(request), request.params.claim_reference),
  );

  app.post(
    '/claims/:claim_reference/transitions',
    {
      onRequest,
      schema: {
        ...base,
        operationId: 'claims.transition',
        summary: 'Change a claim’s state',
        description:
          'A change the state table allows (docs/api.md); 409 otherwise, naming the states allowed next. Settling needs every exposure settled by its final payment. A `reason` is kept as a note. Records `claim.closed` on closing, `claim.updated` otherwise. Staff role `claims` (or `admin`).',
        params: ClaimParamsSchema,
        body: TransitionSchema,
        response: { 200: claimRef, ...problemResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request) =>
      claims.transition(tenantOf(request), request.params.claim_reference, request.body, authorOf(request)),
  );

  app.put(
    '/claims/:claim_reference/handler',
    {
      onRequest,
      schema: {
        ...base,
        operationId: 'claims.assignHandler',
        summary: 'Assign a handler',
        description:
          'An active staff member with the `claims` or `admin` role (422 otherwise). Staff role `claims`.',
        params: ClaimParamsSchema,
        body: HandlerSchema,
        response: { 200: claimRef, ...problemResponses(401, 403, 404, 422) },
      },
    },
    async (request) =>
      claims.assignHandler(tenantOf(request), request.params.claim_reference, request.body.staff_id),
  );

  app.put(
    '/claims/:claim_reference/fault',
    {
      onRequest,
      schema: {
        ...base,
        operationId: 'claims.setFault',
        summary: 'Record fault',
        description:
          'Whether the policyholder was at fault, in any state; a `reason` is kept as a note, and the change is in the audit trail. An at-fault claim settled in a term steps back the no-claims years at renewal (the product’s `no_claims_step_back`). Records `claim.updated`. Staff role `claims` (or `admin`).',
        params: ClaimParamsSchema,
        body: FaultSchema,
        response: { 200: claimRef, ...problemResponses(401, 403, 404, 422) },
      },
    },
    async (request) =>
      claims.setFault(tenantOf(request), request.params.claim_reference, request.body, authorOf(request)),
  );
}

/** Exposures, reserves, payments and notes. */
function registerClaimWork(app: App, deps: ClaimRouteDeps): void {
  const { claims } = deps;
  const onRequest = deps.clientAuth();
  const base = { security, headers: ClientHeadersSchema, tags };
  app.post(
    '/claims/:claim_reference/exposures',
    {
      onRequest,
      schema: {
        ...base,
        operationId: 'claims.addExposure',
        summary: 'Add an exposure',
        description:
          'An exposure (own vehicle, other vehicle, injury, windscreen, theft) with its first reserve, on a draft, open or reopened claim (409 otherwise). Staff role `claims`.',
        params: ClaimParamsSchema,
        body: NewExposureSchema,
        response: { 201: claimRef, ...problemResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await claims.addExposure(
            tenantOf(request),
            request.params.claim_reference,
            request.body.kind,
            requireWholePence(request.body.reserve, '/body/reserve'),
          ),
        ),
  );

  app.put(
    '/claims/:claim_reference/exposures/:exposure_id/reserve',
    {
      onRequest,
      schema: {
        ...base,
        operationId: 'claims.setReserve',
        summary: 'Set an exposure’s reserve',
        description:
          'Never below what the exposure has paid, never once it is settled (409). Staff role `claims`.',
        params: ExposureParamsSchema,
        body: ReserveSchema,
        response: { 200: claimRef, ...problemResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request) =>
      claims.setReserve(
        tenantOf(request),
        request.params.claim_reference,
        request.params.exposure_id,
        requireWholePence(request.body.reserve, '/body/reserve'),
      ),
  );

  app.post(
    '/claims/:claim_reference/exposures/:exposure_id/payments',
    {
      onRequest,
      schema: {
        ...base,
        operationId: 'claims.pay',
        summary: 'Pay on an exposure',
        description:
          'A partial or final payment on an open or reopened claim. Never above what the reserve leaves (409: raise the reserve first); none after the final one, which settles the exposure. With `payment_reference`, the same payment sent again (its answer lost) records nothing more: 200 with the claim. Staff role `claims`.',
        params: ExposureParamsSchema,
        body: NewPaymentSchema,
        response: { 200: claimRef, 201: claimRef, ...problemResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const { claim_reference: claim, exposure_id: exposure } = request.params;
      const amount = requireWholePence(request.body.amount, '/body/amount');
      const paid = await claims.pay(tenantOf(request), claim, exposure, { ...request.body, amount });
      return reply.code(paid.replayed ? 200 : 201).send(paid.claim);
    },
  );

  app.post(
    '/claims/:claim_reference/notes',
    {
      onRequest,
      schema: {
        ...base,
        operationId: 'claims.addNote',
        summary: 'Add a note',
        description: 'A note on the claim, kept with who wrote it. Staff role `claims`.',
        params: ClaimParamsSchema,
        body: NoteBodySchema,
        response: { 201: claimRef, ...problemResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await claims.addNote(
            tenantOf(request),
            request.params.claim_reference,
            request.body.text,
            authorOf(request),
          ),
        ),
  );
}

/** GET and PUT /claims-settings. */
function registerSettings(app: App, deps: ClaimRouteDeps): void {
  const onRequest = deps.clientAuth();
  const base = { security, headers: ClientHeadersSchema, tags };
  app.get(
    '/claims-settings',
    {
      onRequest,
      schema: {
        ...base,
        operationId: 'claims.settings',
        summary: 'Claim settings',
        description:
          'The hours a policyholder has to confirm or cancel a draft opened by a crash before it goes to staff (24 unless set), and the years an ended claim’s personal data is kept before it is pseudonymised (6 unless set).',
        response: { 200: ClaimSettingsSchema, ...problemResponses(401) },
      },
    },
    async (request) => deps.claims.settings(tenantOf(request)),
  );
  app.put(
    '/claims-settings',
    {
      onRequest,
      schema: {
        ...base,
        operationId: 'claims.updateSettings',
        summary: 'Set the claim settings',
        description:
          'The response hours for drafts opened from now on (1 to 720); the retention years (1 to 100), when given, for every ended claim (absent: kept as set). Staff role `admin`.',
        body: ClaimSettingsBodySchema,
        response: { 200: ClaimSettingsSchema, ...problemResponses(401, 403, 422) },
      },
    },
    async (request) => deps.claims.updateSettings(tenantOf(request), request.body),
  );
}

/** Claims: a policy's (clients and policyholders) and the company's (staff and claims systems). */
export function claimRoutes(deps: ClaimRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(ClaimSchema);
    registerPolicyClaims(app, deps);
    registerPolicyAnswers(app, deps);
    await registerPhotoUpload(app, deps);
    registerStaffClaims(app, deps);
    registerClaimWork(app, deps);
    registerSettings(app, deps);
  };
}
