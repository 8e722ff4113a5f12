import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { AppError, notFound } from '../../platform/errors.ts';
import { jsonBodyLimitsOf } from '../../platform/http/body-limits.ts';
import { parseJsonBody, problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth, type Tenant } from '../companies/index.ts';
import {
  BindDeviceSchema,
  DeviceListSchema,
  DeviceParamsSchema,
  DeviceSchema,
  ListDevicesQuerySchema,
  GpxUploadSchema,
  ListPositionsQuerySchema,
  MAX_POSITIONS_PER_REQUEST,
  PositionBatchResultSchema,
  POSITIONS_BODY_LIMIT_BYTES,
  POSITIONS_JSON_LIMITS,
  PositionBatchSchema,
  PositionListSchema,
  PositionUploadQuerySchema,
  TrackGeoJsonSchema,
  type PositionBatch,
  type PositionUploadQuery,
  type TrackGeoJson,
  type DeviceView,
  ListOdometerQuerySchema,
  OdometerReadingInputSchema,
  OdometerReadingListSchema,
  OdometerReadingSchema,
} from './telematics-schemas.ts';
import type { TelematicsService } from './telematics-service.ts';
import { registerCrashEvents } from './crash-routes.ts';
import { positionsFromGeoJson, positionsFromGpx } from './rules/position-uploads.ts';

const security = [{ clientId: [], clientSecret: [] }];
const securityEither = [...security, { policyholderToken: [] }];
const tags = ['telematics'];
const JSON_TYPE = 'application/json';
const GPX_TYPE = 'application/gpx+xml';
const GEOJSON_TYPE = 'application/geo+json';

const mediaTypeOf = (header: string | undefined): string =>
  (header ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';

const invalidRequest = (path: string, message: string): AppError =>
  new AppError('VALIDATION_FAILED', `The request is invalid: ${path} ${message}`, {
    errors: [{ path, message }],
  });

/** The batch a validated body stands for: a JSON batch as it is; a GPX or GeoJSON track converted. */
function batchOf(mediaType: string, body: unknown, query: PositionUploadQuery): PositionBatch {
  if (mediaType === JSON_TYPE) {
    const batch = body as PositionBatch;
    if (query.device_id !== undefined && query.device_id !== batch.device_id)
      throw invalidRequest('/querystring/device_id', 'must equal /body/device_id');
    return batch;
  }
  if (query.device_id === undefined)
    throw invalidRequest('/querystring/device_id', 'is required with a GPX or GeoJSON body');
  const converted =
    mediaType === GPX_TYPE
      ? positionsFromGpx(body as string, MAX_POSITIONS_PER_REQUEST)
      : positionsFromGeoJson(body as TrackGeoJson, MAX_POSITIONS_PER_REQUEST);
  if (!converted.ok)
    throw converted.kind === 'malformed'
      ? new AppError('MALFORMED_BODY', converted.message)
      : invalidRequest(converted.path, converted.message);
  return { device_id: query.device_id, positions: converted.positions };
}

/** How the device reads tell a policyholder from a client and check a policyholder's policies. */
export interface DeviceReaders {
  /** Client credentials, or a policyholder's bearer token (the auth module's `clientOrPolicyholder`). */
  readonly authenticate: onRequestAsyncHookHandler;
  readonly ownsPolicy: (tenant: Tenant, userId: string, policyReference: string) => Promise<boolean>;
}

/**
 * A device as a policyholder may see it: only their own policies' bindings. NOTE: a dongle moves between
 * policies, so a device once theirs may be another policyholder's before or since: that binding, and a
 * sighting outside their own bindings, are someone else's and are left out.
 */
async function holdersView(device: DeviceView, owns: (reference: string) => Promise<boolean>) {
  const references = [...new Set(device.bindings.map((b) => b.policy_reference))];
  const own = new Set<string>();
  for (const reference of references) if (await owns(reference)) own.add(reference);
  const bindings = device.bindings.filter((b) => own.has(b.policy_reference));
  if (bindings.length === 0) return undefined;
  const seenMs = device.last_seen_at === null ? undefined : Date.parse(device.last_seen_at);
  const seenWhileOwn =
    seenMs !== undefined &&
    bindings.some(
      (b) => Date.parse(b.bound_at) <= seenMs && (b.unbound_at === null || seenMs < Date.parse(b.unbound_at)),
    );
  const boundToOwn = device.policy_reference !== null && own.has(device.policy_reference);
  return {
    ...device,
    bindings,
    last_seen_at: seenWhileOwn ? device.last_seen_at : null,
    ...(boundToOwn ? {} : { policy_reference: null, status: 'unbound' as const }),
  };
}

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/** What the route families share: the service, who may call them, and how the reads are documented. */
interface TelematicsRouteContext {
  readonly telematics: TelematicsService;
  /** Client credentials. */
  readonly onRequest: onRequestAsyncHookHandler;
  readonly readers: DeviceReaders | undefined;
  /** The device reads' check: client credentials, or a policyholder's token where `readers` is given. */
  readonly readAuth: onRequestAsyncHookHandler;
  readonly readSecurity: Array<Record<string, string[]>>;
  readonly readersNote: string;
  /** The policyholder's ownership check, or undefined for a client's request. */
  readonly ownerCheck: (request: FastifyRequest) => ((reference: string) => Promise<boolean>) | undefined;
}

/** POST /devices. */
function registerDeviceBinding(app: App, ctx: TelematicsRouteContext): void {
  app.post(
    '/devices',
    {
      onRequest: ctx.onRequest,
      schema: {
        operationId: 'devices.bind',
        tags,
        summary: 'Bind a device to a policy',
        description:
          'Binds the device (created on first use) to the policy from now. A device is bound to one policy at a time and a policy has one device at a time: this ends the device’s previous binding and the policy’s previous device’s (`device.unbound` for each), keeping the history; `device.bound` is recorded. 201 with the device; 200 when it was bound to that policy already (its `kind` and `vin` are updated, nothing else changes). 404 for an unknown policy; 409 `POLICY_NOT_ACTIVE` for a cancelled or lapsed one.',
        security,
        headers: ClientHeadersSchema,
        body: BindDeviceSchema,
        response: {
          201: Type.Ref('Device'),
          200: Type.Ref('Device'),
          ...problemResponses(401, 404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const { created, device } = await ctx.telematics.bind(tenantOf(request), request.body);
      return reply
        .code(created ? 201 : 200)
        .header('location', `/devices/${encodeURIComponent(device.device_id)}`)
        .send(device);
    },
  );
}

/** GET /devices and GET /devices/:device_id, for clients and policyholders. */
function registerDeviceReads(app: App, ctx: TelematicsRouteContext): void {
  app.get(
    '/devices',
    {
      onRequest: ctx.readAuth,
      schema: {
        operationId: 'devices.list',
        tags,
        summary: 'List devices',
        description: `The company’s devices by \`device_id\`, only those ever bound to \`policy_reference\` when given (404 for an unknown policy). Pages of \`limit\` (default 100, at most 500); pass \`next_cursor\` as \`after\` for the next.${ctx.readersNote}${ctx.readers === undefined ? '' : ' A policyholder must give `policy_reference` (422 without it).'}`,
        security: ctx.readSecurity,
        headers: ClientHeadersSchema,
        querystring: ListDevicesQuerySchema,
        response: { 200: DeviceListSchema, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const owns = ctx.ownerCheck(request);
      if (owns === undefined) return ctx.telematics.list(tenantOf(request), request.query);
      const reference = request.query.policy_reference;
      if (reference === undefined)
        throw invalidRequest('/querystring/policy_reference', 'is required with a policyholder’s token');
      if (!(await owns(reference))) throw notFound('policy');
      const page = await ctx.telematics.list(tenantOf(request), request.query);
      const devices = [];
      for (const device of page.devices) {
        const shown = await holdersView(device, owns);
        if (shown !== undefined) devices.push(shown);
      }
      return { ...page, devices };
    },
  );

  app.get(
    '/devices/:device_id',
    {
      onRequest: ctx.readAuth,
      schema: {
        operationId: 'devices.get',
        tags,
        summary: 'Read a device',
        description: `With its bindings (oldest first), \`last_seen_at\` and \`status\`. Another company’s or environment’s device answers 404.${ctx.readersNote}`,
        security: ctx.readSecurity,
        headers: ClientHeadersSchema,
        params: DeviceParamsSchema,
        response: { 200: Type.Ref('Device'), ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const device = await ctx.telematics.get(tenantOf(request), request.params.device_id);
      const owns = ctx.ownerCheck(request);
      if (owns === undefined) return device;
      const shown = await holdersView(device, owns);
      if (shown === undefined) throw notFound('device');
      return shown;
    },
  );
}

/** DELETE /devices/:device_id. */
function registerDeviceUnbinding(app: App, ctx: TelematicsRouteContext): void {
  app.delete(
    '/devices/:device_id',
    {
      onRequest: ctx.onRequest,
      schema: {
        operationId: 'devices.unbind',
        tags,
        summary: 'Unbind a device',
        description:
          'Ends its binding now (`device.unbound`); positions for later times are then rejected. 200 with the device, also when it was not bound.',
        security,
        headers: ClientHeadersSchema,
        params: DeviceParamsSchema,
        response: { 200: Type.Ref('Device'), ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => ctx.telematics.unbind(tenantOf(request), request.params.device_id),
  );
}

/** POST /telematics/positions, in JSON, GPX or GeoJSON. */
async function registerPositionUploads(app: App, ctx: TelematicsRouteContext): Promise<void> {
  // The positions route takes three body types; its own scope keeps the XML and GeoJSON parsers (and
  // the 415 for anything else) off the other routes.
  await app.register(async (uploads) => {
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser([JSON_TYPE, GEOJSON_TYPE], { parseAs: 'buffer' }, (request, body, done) => {
      try {
        done(null, parseJsonBody(body, jsonBodyLimitsOf(request)));
      } catch (error) {
        done(error as AppError, undefined);
      }
    });
    uploads.addContentTypeParser(GPX_TYPE, { parseAs: 'string' }, (_request, body, done) => {
      done(null, typeof body === 'string' ? body : body.toString('utf8'));
    });

    uploads.post(
      '/telematics/positions',
      {
        onRequest: ctx.onRequest,
        bodyLimit: POSITIONS_BODY_LIMIT_BYTES,
        config: { jsonBodyLimits: POSITIONS_JSON_LIMITS },
        schema: {
          operationId: 'telematics.positions.create',
          tags,
          summary: 'Send a device’s positions',
          description: `Up to ${MAX_POSITIONS_PER_REQUEST.toLocaleString('en-GB')} positions of one device (more: 422 naming \`/body/positions\`). Each is checked on its own: \`rejected\` lists those refused with their index and reason (\`invalid_time\`, \`in_future\`: more than 5 minutes ahead of the server, \`outside_binding\`: at a time the device was bound to no policy, \`out_of_range\`); the rest are stored with the policy the device was bound to at their time. A device and a second identify a position: one stored already (or repeated in the request) counts in \`duplicates\` and changes nothing, so a batch can be resent safely. Three body types: \`application/json\` (the batch below); \`application/gpx+xml\`, a GPX 1.1 document whose track points (\`trkpt\` with \`lat\`, \`lon\` and \`time\`) are the positions, in document order (a DOCTYPE, XML that is not well-formed and a document that is not GPX answer 422); \`application/geo+json\`, a LineString Feature with one time per coordinate in \`properties.coordTimes\`, or a FeatureCollection of them (positions concatenated; coordinates and times differing in number answer 422). For the last two the device is \`?device_id=\` (422 naming \`/querystring/device_id\` without it). 202; 404 for an unknown device (another company’s or environment’s included); 415 for another content type; 422 for a malformed body.`,
          security,
          headers: ClientHeadersSchema,
          querystring: PositionUploadQuerySchema,
          body: {
            content: {
              [JSON_TYPE]: { schema: PositionBatchSchema },
              [GPX_TYPE]: { schema: GpxUploadSchema },
              [GEOJSON_TYPE]: { schema: TrackGeoJsonSchema },
            },
          },
          response: { 202: PositionBatchResultSchema, ...problemResponses(401, 404, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const batch = batchOf(
          mediaTypeOf(request.headers['content-type']),
          request.body,
          // The type provider infers nothing from a per-content-type body; Fastify has validated both.
          request.query as PositionUploadQuery,
        );
        return reply.code(202).send(await ctx.telematics.ingest(tenantOf(request), batch));
      },
    );
  });
}

/** POST and GET /telematics/odometer. */
function registerOdometerReadings(app: App, ctx: TelematicsRouteContext): void {
  app.post(
    '/telematics/odometer',
    {
      onRequest: ctx.onRequest,
      schema: {
        operationId: 'telematics.odometer.create',
        tags,
        summary: 'Send an odometer reading',
        description:
          'A reading of a policy’s odometer, named by exactly one of `policy_reference` and `device_id` (then the policy the device was bound to at `time`; 422 when it was bound to none), in exactly one of `reading_metres` and `reading_miles` (kept as whole metres). Statements compare the readings around their periods with the GPS distance (their `odometer` block; the product’s `billing_distance_source` decides which is billed). 201 with the reading; 200 with the stored one when the policy has a reading at that second already (a repeat changes nothing). 422 `ODOMETER_NOT_MONOTONIC` when it is below an earlier reading of the policy or above a later one, `ODOMETER_IMPLAUSIBLE` when it is farther from either than a car drives at 300 km/h (2 km on top); 422 for both or neither of a pair, an unreadable `time` or one more than 5 minutes ahead; 404 for an unknown policy or device (another company’s or environment’s included).',
        security,
        headers: ClientHeadersSchema,
        body: OdometerReadingInputSchema,
        response: {
          201: Type.Ref('OdometerReading'),
          200: Type.Ref('OdometerReading'),
          ...problemResponses(401, 404, 422),
        },
      },
    },
    async (request, reply) => {
      const { created, reading } = await ctx.telematics.recordOdometer(tenantOf(request), request.body);
      return reply.code(created ? 201 : 200).send(reading);
    },
  );

  app.get(
    '/telematics/odometer',
    {
      onRequest: ctx.onRequest,
      schema: {
        operationId: 'telematics.odometer.list',
        tags,
        summary: 'A policy’s odometer readings',
        description:
          'Oldest first, pages of `limit` (default 100, at most 500); pass `next_cursor` as `after` for the next. 404 for an unknown policy.',
        security,
        headers: ClientHeadersSchema,
        querystring: ListOdometerQuerySchema,
        response: { 200: OdometerReadingListSchema, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => ctx.telematics.odometerReadings(tenantOf(request), request.query),
  );
}

/** GET /devices/:device_id/positions. */
function registerPositionReads(app: App, ctx: TelematicsRouteContext): void {
  app.get(
    '/devices/:device_id/positions',
    {
      onRequest: ctx.onRequest,
      schema: {
        operationId: 'devices.positions',
        tags,
        summary: 'A device’s raw positions',
        description:
          'Positions with `from` ≤ `time` ≤ `to` (UNIX seconds), oldest first, `limit` a page (default 1,000, at most 10,000); when a page is full, `next_from` is the `from` of the next.',
        security,
        headers: ClientHeadersSchema,
        params: DeviceParamsSchema,
        querystring: ListPositionsQuerySchema,
        response: { 200: PositionListSchema, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => ctx.telematics.positions(tenantOf(request), request.params.device_id, request.query),
  );
}

/** The routes' shared context: device reads take a policyholder's token where `readers` is given. */
function routeContext(
  telematics: TelematicsService,
  onRequest: onRequestAsyncHookHandler,
  readers: DeviceReaders | undefined,
): TelematicsRouteContext {
  return {
    telematics,
    onRequest,
    readers,
    readAuth: readers?.authenticate ?? onRequest,
    readSecurity: readers === undefined ? security : securityEither,
    readersNote:
      readers === undefined
        ? ''
        : ' With a policyholder’s access token (`Authorization: Bearer …` and no `client_secret`), only devices ever bound to that policyholder’s own policies, showing only those bindings (a device now bound to another policy reads as `unbound`); another’s answer 404.',
    ownerCheck: (request) => {
      const holder = request.policyholder;
      if (holder === null || readers === undefined) return undefined;
      return (reference: string) => readers.ownsPolicy(holder.tenant, holder.userId, reference);
    },
  };
}

/** Devices, their bindings to policies, and their raw positions; per company and environment. */
export function telematicsRoutes(deps: {
  telematics: TelematicsService;
  clientAuth: ClientAuth;
  /** Lets a policyholder's token read their own policies' devices; absent → client credentials only. */
  readers?: DeviceReaders | undefined;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(DeviceSchema);
    app.addSchema(OdometerReadingSchema);
    const ctx = routeContext(deps.telematics, deps.clientAuth(), deps.readers);
    registerDeviceBinding(app, ctx);
    registerDeviceReads(app, ctx);
    registerDeviceUnbinding(app, ctx);
    await registerPositionUploads(app, ctx);
    registerOdometerReadings(app, ctx);
    registerPositionReads(app, ctx);
    registerCrashEvents(app, { crashes: deps.telematics, onRequest: ctx.onRequest });
  };
}
