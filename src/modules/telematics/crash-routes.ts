import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import { problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf } from '../companies/index.ts';
import { CrashEventResultSchema, CrashEventSchema } from './crash-schemas.ts';
import type { CrashService } from './crash-service.ts';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/** POST /telematics/events: a device's crash, which opens a draft claim (the claims module's first notice of loss). */
export function registerCrashEvents(
  app: App,
  deps: { crashes: CrashService; onRequest: onRequestAsyncHookHandler },
): void {
  app.post(
    '/telematics/events',
    {
      onRequest: deps.onRequest,
      schema: {
        operationId: 'telematics.events',
        tags: ['telematics'],
        summary: 'Report a crash felt by a device',
        description:
          'A device’s crash (`type: "crash"`), for the policy the device was bound to at `time`. The same body (without `device_id`) may be published over MQTT to `milepost/{client_id}/{environment}/devices/{device_id}/events`, acknowledged once stored. One device’s reports within 2 minutes of each other are one crash: 201 for a new crash, 200 with `duplicate: true` and the stored crash otherwise. Each crash opens a draft claim within seconds (worker), holding the crash file, and emails the policyholder. 422 naming the field for a bad body, a time in the future or one when the device was bound to no policy; 404 for an unknown device.',
        security: [{ clientId: [], clientSecret: [] }],
        headers: ClientHeadersSchema,
        body: CrashEventSchema,
        response: {
          201: CrashEventResultSchema,
          200: CrashEventResultSchema,
          ...problemResponses(401, 404, 422),
        },
      },
    },
    async (request, reply) => {
      const result = await deps.crashes.recordCrash(tenantOf(request), request.body);
      return reply.code(result.duplicate ? 200 : 201).send(result);
    },
  );
}
