import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { AppError } from '../../platform/errors.ts';
import type { JsonBodyLimits } from '../../platform/http/body-limits.ts';
import { fieldErrors, problemResponses } from '../../platform/http/problem.ts';
import { bodyValidator, type BodyValidator } from '../../platform/http/schema-compilers.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth, type Tenant } from '../companies/index.ts';
import { ROUTE_MAX_CHARACTERS } from './rules/index.ts';
import {
  BATCH_MAX_JOURNEYS,
  BatchInputSchema,
  BatchResultSchema,
  JourneyInputSchema,
  JourneyListSchema,
  JourneyReferenceParamsSchema,
  JourneySchema,
  ListJourneysQuerySchema,
  VoidJourneySchema,
  type JourneyInput,
} from './journey-schemas.ts';
import type { BatchItem } from './journey-ingestion-service.ts';
import type { JourneyService } from './journey-service.ts';
import { Type } from 'typebox';

/**
 * What the policyholder login (auth module) provides for routes a policyholder's token may call. Until it
 * is passed to `journeyRoutes`, the read routes serve client credentials only.
 */
export interface PolicyholderAuth {
  /** An onRequest hook: verifies `Authorization: Bearer <access_token>` (401 when bad) and resolves who it names. */
  readonly authenticate: onRequestAsyncHookHandler;
  /** After `authenticate`: the tenant the token was issued in and the policyholder's user id (`users.id`). */
  readonly policyholderOf: (request: FastifyRequest) => { readonly tenant: Tenant; readonly userId: string };
}

/** The body limit of a single journey: its largest route plus room for the other fields. */
const JOURNEY_BODY_LIMIT_BYTES = 1_280_000;
/** The body limit of a batch: a day of a busy device's journeys (it bounds a batch's work to well under a second). */
const BATCH_BODY_LIMIT_BYTES = 16 * 1024 * 1024;
/** A journey's values and keys: the object and a key and a value for each field. */
const JOURNEY_TOKENS = 1 + 2 * Object.keys(JourneyInputSchema.properties).length;
/**
 * Beyond the default limits on a body's shape, twice what these routes take, so that a body just over
 * (1,001 journeys) is still answered by validation, naming the field: a route's characters, and for a
 * batch its journeys and their values.
 */
const JOURNEY_JSON_LIMITS: Partial<JsonBodyLimits> = { stringCharacters: 2 * ROUTE_MAX_CHARACTERS };
const BATCH_JSON_LIMITS: Partial<JsonBodyLimits> = {
  stringCharacters: 2 * ROUTE_MAX_CHARACTERS,
  itemsPerArray: 2 * BATCH_MAX_JOURNEYS,
  tokens: 2 * (2 + BATCH_MAX_JOURNEYS * JOURNEY_TOKENS),
};

/**
 * Batch items are validated one by one with the same Ajv settings as request bodies (no coercion,
 * defaults applied, every error listed, no NaN or ±Infinity), so a bad item fails alone and reads like
 * a bad POST /journeys. Compiled at the first batch, as the routes' own validators are.
 */
function itemValidator() {
  let validate: BodyValidator | undefined;
  return (item: unknown, index: number): BatchItem => {
    validate ??= bodyValidator({ schema: JourneyInputSchema, url: '/journeys' });
    if (validate(item)) return { ok: true, input: item as JourneyInput };
    const errors = fieldErrors(validate.errors ?? [], `body/journeys/${index}`);
    return {
      ok: false,
      error: new AppError(
        'VALIDATION_FAILED',
        `The journey is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
        { errors },
      ),
    };
  };
}

const tags = ['journeys'];
const clientSecurity = [{ clientId: [], clientSecret: [] }];

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/** What the route families share: the service, the two ways in, and how the reads are documented. */
interface JourneyRouteContext {
  readonly journeys: JourneyService;
  readonly clientOnly: onRequestAsyncHookHandler;
  /** Client credentials, or a policyholder's token where the auth module gave its check. */
  readonly readers: onRequestAsyncHookHandler;
  readonly readSecurity: Array<Record<string, string[]>>;
  readonly readersNote: string;
  /** A policyholder's request: the tenant and user its token names; undefined for a client's. */
  readonly policyholderOf: (request: FastifyRequest) => { tenant: Tenant; userId: string } | undefined;
  readonly validateItem: (item: unknown, index: number) => BatchItem;
}

/** POST /journeys and POST /journeys/batch. */
function registerJourneyWrites(app: App, ctx: JourneyRouteContext): void {
  app.post(
    '/journeys',
    {
      onRequest: ctx.clientOnly,
      bodyLimit: JOURNEY_BODY_LIMIT_BYTES,
      config: { jsonBodyLimits: JOURNEY_JSON_LIMITS },
      schema: {
        operationId: 'journeys.create',
        tags,
        summary: 'Send a journey',
        description: [
          'Decodes the route, measures it on the WGS84 ellipsoid (whole metres), names its start and end from the offline reverse geocoder, and rates it: the `usage_rate` of the policy version in force at `start_time` × the distance in the policy’s unit (`pricing.usage_unit`, miles by default), rounded once, half to even, to pence. 201 with the journey; a `journey.created` event is recorded.',
          'The same `provider_reference` again for the same policy answers 200 with the journey stored the first time (the body is not compared).',
          'Once stored, the journey is checked against the policy’s mileage budget and its product’s daily and annual caps: `usage.budget_exceeded`, `usage.daily_cap_reached` and `usage.annual_cap_reached` events, each once per period (see PUT /policys/{policy_reference}/mileage-budget).',
          'Rejected with 422 `VALIDATION_FAILED` (undecodable route, fewer than 2 or more than 100,000 points, coordinates out of range, `end_time` not after `start_time`, `end_time` in the future beyond 5 minutes of clock skew), 422 `JOURNEY_OUTSIDE_COVER` (starts before the policy’s first term or at or after its current `end_date`), 409 `POLICY_NOT_ACTIVE` (starts at or after the effective time of the policy’s cancellation or lapse; earlier journeys are still taken and rated as the policy then stood), 409 `JOURNEY_OVERLAP` (overlaps a journey of the policy that is not void; touching end to start is fine), 404 (unknown policy).',
        ].join('\n\n'),
        security: clientSecurity,
        headers: ClientHeadersSchema,
        body: JourneyInputSchema,
        response: {
          200: { ...Type.Ref('Journey'), description: 'Already stored under this `provider_reference`.' },
          201: { ...Type.Ref('Journey'), description: 'Stored.' },
          ...problemResponses(401, 404, 409, 413, 422),
        },
      },
    },
    async (request, reply) => {
      const result = await ctx.journeys.create(tenantOf(request), request.body);
      if (result.created)
        void reply.header('location', `/journeys/${encodeURIComponent(result.journey.journey_reference)}`);
      return reply.code(result.created ? 201 : 200).send(result.journey);
    },
  );

  app.post(
    '/journeys/batch',
    {
      onRequest: ctx.clientOnly,
      bodyLimit: BATCH_BODY_LIMIT_BYTES,
      config: { jsonBodyLimits: BATCH_JSON_LIMITS },
      schema: {
        operationId: 'journeys.createBatch',
        tags,
        summary: 'Send many journeys at once',
        description: `For devices that upload a day at a time: up to 1,000 journeys (body up to 16 MiB), each handled exactly as POST /journeys would, in order and in its own transaction. One item failing never undoes another: the answer is 200 with a result per item, whose \`status\` is what POST /journeys would have answered (201, 200, 404, 409, 422 …), with the journey (without \`route\`) or the error. A journey overlapping an earlier item of the same batch is rejected like any other overlap.`,
        security: clientSecurity,
        headers: ClientHeadersSchema,
        body: BatchInputSchema,
        response: { 200: BatchResultSchema, ...problemResponses(401, 413, 422) },
      },
    },
    async (request) => {
      const items = request.body.journeys.map((item, index) => ctx.validateItem(item, index));
      const outcomes = await ctx.journeys.createBatch(tenantOf(request), items);
      let created = 0;
      let existing = 0;
      for (const outcome of outcomes) {
        if (outcome.status === 201) created++;
        else if (outcome.status === 200) existing++;
        if (outcome.cause !== undefined)
          request.log.error({ err: outcome.cause, index: outcome.index }, 'batch journey failed');
      }
      return {
        results: outcomes.map(({ cause: _cause, ...shown }) => shown),
        created,
        existing,
        rejected: outcomes.length - created - existing,
      };
    },
  );
}

/** GET /journeys and GET /journeys/:journey_reference, for clients and policyholders. */
function registerJourneyReads(app: App, ctx: JourneyRouteContext): void {
  app.get(
    '/journeys',
    {
      onRequest: ctx.readers,
      schema: {
        operationId: 'journeys.list',
        tags,
        summary: 'List a policy’s journeys',
        description: `Journeys of \`policy_reference\` (required with client credentials), void ones included, oldest start first, optionally only those starting within [\`from\`, \`to\`] (UNIX seconds, both inclusive). Pages of \`limit\` (default 100, at most 500); pass \`next_cursor\` as \`after\` for the next.${ctx.readersNote}`,
        security: ctx.readSecurity,
        headers: ClientHeadersSchema,
        querystring: ListJourneysQuerySchema,
        response: { 200: JourneyListSchema, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const holder = ctx.policyholderOf(request);
      if (holder !== undefined)
        return ctx.journeys.listForPolicyholder(holder.tenant, holder.userId, request.query);
      return ctx.journeys.list(tenantOf(request), request.query);
    },
  );

  app.get(
    '/journeys/:journey_reference',
    {
      onRequest: ctx.readers,
      schema: {
        operationId: 'journeys.get',
        tags,
        summary: 'Read a journey',
        description: `Another company’s or environment’s journey answers 404.${ctx.readersNote}`,
        security: ctx.readSecurity,
        headers: ClientHeadersSchema,
        params: JourneyReferenceParamsSchema,
        response: { 200: Type.Ref('Journey'), ...problemResponses(401, 404) },
      },
    },
    async (request) => {
      const holder = ctx.policyholderOf(request);
      if (holder !== undefined)
        return ctx.journeys.getForPolicyholder(
          holder.tenant,
          holder.userId,
          request.params.journey_reference,
        );
      return ctx.journeys.get(tenantOf(request), request.params.journey_reference);
    },
  );
}

/** POST /journeys/:journey_reference/void. */
function registerJourneyVoid(app: App, ctx: JourneyRouteContext): void {
  app.post(
    '/journeys/:journey_reference/void',
    {
      onRequest: ctx.clientOnly,
      schema: {
        operationId: 'journeys.void',
        tags,
        summary: 'Void a journey',
        description:
          'Marks the journey void: it is never billed, and if a statement has already billed it, the next statement credits its premium. An audit record keeps the reason, time and request id, and a `journey.voided` event says whether it had been billed. Voiding a void journey changes nothing and answers 200 with it as it is (the first reason stands).',
        security: clientSecurity,
        headers: ClientHeadersSchema,
        params: JourneyReferenceParamsSchema,
        body: VoidJourneySchema,
        response: { 200: Type.Ref('Journey'), ...problemResponses(401, 404, 422) },
      },
    },
    async (request) =>
      ctx.journeys.void(tenantOf(request), request.params.journey_reference, request.body, {
        requestId: request.id,
      }),
  );
}

/** The routes' shared context: a request is a policyholder's or a client's, and reads take either. */
function routeContext(
  journeys: JourneyService,
  clientOnly: onRequestAsyncHookHandler,
  policyholderAuth: PolicyholderAuth | undefined,
): JourneyRouteContext {
  // NOTE: a request with an Authorization header and no client_secret is a policyholder's (their apps
  // send the public client_id everywhere); any other is a client's, so a client's credentials are never
  // ignored for a stray Authorization header. The same rule as the auth module's clientOrPolicyholder.
  const isPolicyholder = (request: FastifyRequest): boolean => {
    const secret = request.headers['client_secret'];
    return (
      policyholderAuth !== undefined &&
      request.headers.authorization !== undefined &&
      !(typeof secret === 'string' && secret.trim() !== '')
    );
  };
  const readers: onRequestAsyncHookHandler =
    policyholderAuth === undefined
      ? clientOnly
      : async function clientOrPolicyholder(request, reply) {
          await (isPolicyholder(request) ? policyholderAuth.authenticate : clientOnly).call(
            this,
            request,
            reply,
          );
        };
  return {
    journeys,
    clientOnly,
    readers,
    readSecurity:
      policyholderAuth === undefined ? clientSecurity : [...clientSecurity, { policyholderToken: [] }],
    readersNote:
      policyholderAuth === undefined
        ? ''
        : ' With a policyholder’s access token (`Authorization: Bearer …` and no `client_secret`), only journeys of that policyholder’s own policies; another’s answer 404.',
    policyholderOf: (request) =>
      policyholderAuth !== undefined && isPolicyholder(request)
        ? policyholderAuth.policyholderOf(request)
        : undefined,
    validateItem: itemValidator(),
  };
}

/** POST /journeys, POST /journeys/batch, GET /journeys, GET /journeys/:journey_reference, POST /journeys/:journey_reference/void. */
export function journeyRoutes(deps: {
  journeys: JourneyService;
  clientAuth: ClientAuth;
  /** The policyholder token check, from the auth module; absent → the read routes take client credentials only. */
  policyholderAuth?: PolicyholderAuth | undefined;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(JourneySchema);
    const ctx = routeContext(deps.journeys, deps.clientAuth(), deps.policyholderAuth);
    registerJourneyWrites(app, ctx);
    registerJourneyReads(app, ctx);
    registerJourneyVoid(app, ctx);
  };
}
