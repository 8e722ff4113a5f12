import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth } from '../companies/index.ts';
import {
  BindDeviceSchema,
  DeviceListSchema,
  DeviceParamsSchema,
  DeviceSchema,
  ListDevicesQuerySchema,
  ListPositionsQuerySchema,
  MAX_POSITIONS_PER_REQUEST,
  PositionBatchResultSchema,
  PositionBatchSchema,
  PositionListSchema,
} from './telematics-schemas.ts';
import type { TelematicsService } from './telematics-service.ts';

const security = [{ clientId: [], clientSecret: [] }];
const tags = ['telematics'];
/** Room for 10,000 positions with every field (~200 bytes each). */
const POSITIONS_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/** Devices, their bindings to policies, and their raw positions; per company and environment. */
export function telematicsRoutes(deps: {
  telematics: TelematicsService;
  clientAuth: ClientAuth;
}): FastifyPluginAsyncTypebox {
  const { telematics, clientAuth } = deps;
  return async (app) => {
    app.addSchema(DeviceSchema);
    const preHandler = clientAuth();
    const headers = ClientHeadersSchema;

    app.post(
      '/devices',
      {
        preHandler,
        schema: {
          operationId: 'devices.bind',
          tags,
          summary: 'Bind a device to a policy',
          description:
            'Binds the device (created on first use) to the policy from now. A device is bound to one policy at a time and a policy has one device at a time: this ends the device’s previous binding and the policy’s previous device’s (`device.unbound` for each), keeping the history; `device.bound` is recorded. 201 with the device; 200 when it was bound to that policy already (its `kind` and `vin` are updated, nothing else changes). 404 for an unknown policy; 409 `POLICY_NOT_ACTIVE` for a cancelled or lapsed one.',
          security,
          headers,
          body: BindDeviceSchema,
          response: {
            201: Type.Ref('Device'),
            200: Type.Ref('Device'),
            ...problemResponses(401, 404, 409, 422),
          },
        },
      },
      async (request, reply) => {
        const { created, device } = await telematics.bind(tenantOf(request), request.body);
        return reply
          .code(created ? 201 : 200)
          .header('location', `/devices/${encodeURIComponent(device.device_id)}`)
          .send(device);
      },
    );

    app.get(
      '/devices',
      {
        preHandler,
        schema: {
          operationId: 'devices.list',
          tags,
          summary: 'List devices',
          description:
            'The company’s devices by `device_id`, only those ever bound to `policy_reference` when given (404 for an unknown policy). Pages of `limit` (default 100, at most 500); pass `next_cursor` as `after` for the next.',
          security,
          headers,
          querystring: ListDevicesQuerySchema,
          response: { 200: DeviceListSchema, ...problemResponses(401, 404, 422) },
        },
      },
      async (request) => telematics.list(tenantOf(request), request.query),
    );

    app.get(
      '/devices/:device_id',
      {
        preHandler,
        schema: {
          operationId: 'devices.get',
          tags,
          summary: 'Read a device',
          description:
            'With its bindings (oldest first), `last_seen_at` and `status`. Another company’s or environment’s device answers 404.',
          security,
          headers,
          params: DeviceParamsSchema,
          response: { 200: Type.Ref('Device'), ...problemResponses(401, 404, 422) },
        },
      },
      async (request) => telematics.get(tenantOf(request), request.params.device_id),
    );

    app.delete(
      '/devices/:device_id',
      {
        preHandler,
        schema: {
          operationId: 'devices.unbind',
          tags,
          summary: 'Unbind a device',
          description:
            'Ends its binding now (`device.unbound`); positions for later times are then rejected. 200 with the device, also when it was not bound.',
          security,
          headers,
          params: DeviceParamsSchema,
          response: { 200: Type.Ref('Device'), ...problemResponses(401, 404, 422) },
        },
      },
      async (request) => telematics.unbind(tenantOf(request), request.params.device_id),
    );

    app.post(
      '/telematics/positions',
      {
        preHandler,
        bodyLimit: POSITIONS_BODY_LIMIT_BYTES,
        schema: {
          operationId: 'telematics.positions.create',
          tags,
          summary: 'Send a device’s positions',
          description: `Up to ${MAX_POSITIONS_PER_REQUEST.toLocaleString('en-GB')} positions of one device (more: 422 naming \`/body/positions\`). Each is checked on its own: \`rejected\` lists those refused with their index and reason (\`invalid_time\`, \`in_future\`: more than 5 minutes ahead of the server, \`outside_binding\`: at a time the device was bound to no policy, \`out_of_range\`); the rest are stored with the policy the device was bound to at their time. A device and a second identify a position: one stored already (or repeated in the request) counts in \`duplicates\` and changes nothing, so a batch can be resent safely. 202; 404 for an unknown device (another company’s or environment’s included); 422 for a malformed body.`,
          security,
          headers,
          body: PositionBatchSchema,
          response: { 202: PositionBatchResultSchema, ...problemResponses(401, 404, 413, 422) },
        },
      },
      async (request, reply) =>
        reply.code(202).send(await telematics.ingest(tenantOf(request), request.body)),
    );

    app.get(
      '/devices/:device_id/positions',
      {
        preHandler,
        schema: {
          operationId: 'devices.positions',
          tags,
          summary: 'A device’s raw positions',
          description:
            'Positions with `from` ≤ `time` ≤ `to` (UNIX seconds), oldest first, `limit` a page (default 1,000, at most 10,000); when a page is full, `next_from` is the `from` of the next.',
          security,
          headers,
          params: DeviceParamsSchema,
          querystring: ListPositionsQuerySchema,
          response: { 200: PositionListSchema, ...problemResponses(401, 404, 422) },
        },
      },
      async (request) => telematics.positions(tenantOf(request), request.params.device_id, request.query),
    );
  };
}
