import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth } from '../companies/index.ts';
import {
  CreateWebhookSchema,
  DeliveriesQuerySchema,
  DeliveryListSchema,
  DeliveryParamsSchema,
  DeliverySchema,
  EventParamsSchema,
  ReplayBodySchema,
  ReplayResultSchema,
  TestResultSchema,
  UpdateWebhookSchema,
  WebhookListSchema,
  WebhookParamsSchema,
  WebhookSchema,
  WebhookWithSecretSchema,
} from './webhook-schemas.ts';
import type { WebhookService } from './webhook-service.ts';

type App = Parameters<FastifyPluginAsyncTypebox>[0];

const security = [{ clientId: [], clientSecret: [] }];
const tags = ['webhooks'];
const headers = ClientHeadersSchema;

interface RouteContext {
  readonly webhooks: WebhookService;
  readonly onRequest: ReturnType<ClientAuth>;
}

/** Registration and reads of an endpoint. */
function registerEndpointRoutes(app: App, { webhooks, onRequest }: RouteContext): void {
  app.post(
    '/webhooks',
    {
      onRequest,
      schema: {
        operationId: 'webhooks.create',
        tags,
        summary: 'Register a webhook endpoint',
        description:
          'Events of this company and environment are POSTed to `url` as JSON `{id, type, created, environment, data}`, signed as Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The signing `secret` is in this answer only. A 2xx within 15 seconds acknowledges a delivery; otherwise it is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. An endpoint that fails everything for 3 days is disabled and the company emailed (at its `contact_email`). At most 20 endpoints per company and environment (409 beyond).',
        security,
        headers,
        body: CreateWebhookSchema,
        response: { 201: Type.Ref('WebhookEndpointWithSecret'), ...problemResponses(401, 409, 422) },
      },
    },
    async (request, reply) => {
      const endpoint = await webhooks.create(tenantOf(request), request.body);
      return reply
        .code(201)
        .header('location', `/webhooks/${encodeURIComponent(endpoint.id)}`)
        .send(endpoint);
    },
  );

  app.get(
    '/webhooks',
    {
      onRequest,
      schema: {
        operationId: 'webhooks.list',
        tags,
        summary: 'List webhook endpoints',
        description: 'Without their secrets.',
        security,
        headers,
        response: { 200: WebhookListSchema, ...problemResponses(401, 422) },
      },
    },
    async (request) => ({ webhooks: await webhooks.list(tenantOf(request)) }),
  );

  app.get(
    '/webhooks/:id',
    {
      onRequest,
      schema: {
        operationId: 'webhooks.get',
        tags,
        summary: 'Read a webhook endpoint',
        description: 'Another company’s or environment’s endpoint answers 404.',
        security,
        headers,
        params: WebhookParamsSchema,
        response: { 200: Type.Ref('WebhookEndpoint'), ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => webhooks.get(tenantOf(request), request.params.id),
  );
}

/** Changes to an endpoint: its settings, its deletion, its signing secret. */
function registerEndpointChangeRoutes(app: App, { webhooks, onRequest }: RouteContext): void {
  app.patch(
    '/webhooks/:id',
    {
      onRequest,
      schema: {
        operationId: 'webhooks.update',
        tags,
        summary: 'Change a webhook endpoint',
        description:
          'Any of `url`, `events` (null: every type), `description` and `enabled`. A new URL applies to pending retries too. Disabling ends the pending deliveries (retry or replay them later); enabling forgets the failing streak.',
        security,
        headers,
        params: WebhookParamsSchema,
        body: UpdateWebhookSchema,
        response: { 200: Type.Ref('WebhookEndpoint'), ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => webhooks.update(tenantOf(request), request.params.id, request.body),
  );

  app.delete(
    '/webhooks/:id',
    {
      onRequest,
      schema: {
        operationId: 'webhooks.delete',
        tags,
        summary: 'Delete a webhook endpoint',
        description: 'Deletes the endpoint and its delivery log; nothing more is sent to it.',
        security,
        headers,
        params: WebhookParamsSchema,
        response: {
          204: Type.Null({ description: 'Deleted.' }),
          ...problemResponses(401, 404, 422),
        },
      },
    },
    async (request, reply) => {
      await webhooks.remove(tenantOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/secret/rotate',
    {
      onRequest,
      schema: {
        operationId: 'webhooks.rotateSecret',
        tags,
        summary: 'Rotate the signing secret',
        description:
          'Issues a new secret, shown in this answer only. For 24 hours the old secret keeps signing too: `webhook-signature` then carries two `v1,…` signatures, so receivers can switch over without missing a message.',
        security,
        headers,
        params: WebhookParamsSchema,
        response: { 200: Type.Ref('WebhookEndpointWithSecret'), ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => webhooks.rotateSecret(tenantOf(request), request.params.id),
  );
}

/** The delivery log, and deliveries sent on request: a test event, a retry, an event's replay. */
function registerDeliveryRoutes(app: App, { webhooks, onRequest }: RouteContext): void {
  app.post(
    '/webhooks/:id/test',
    {
      onRequest,
      schema: {
        operationId: 'webhooks.test',
        tags,
        summary: 'Send a test event',
        description:
          'Records a `webhook.test` event and queues it for this endpoint only, signed and retried like any other; follow it in the delivery log. A disabled endpoint answers 409.',
        security,
        headers,
        params: WebhookParamsSchema,
        response: { 202: TestResultSchema, ...problemResponses(401, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await webhooks.sendTest(tenantOf(request), request.params.id)),
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      onRequest,
      schema: {
        operationId: 'webhooks.deliveries',
        tags,
        summary: 'The delivery log of an endpoint',
        description:
          'Deliveries newest first, each with its attempts (status, response code, duration, first 1 KiB of the answer or the error). Page with `after` = the previous `next_cursor`; filter with `status`.',
        security,
        headers,
        params: WebhookParamsSchema,
        querystring: DeliveriesQuerySchema,
        response: { 200: DeliveryListSchema, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) =>
      webhooks.deliveries(tenantOf(request), request.params.id, {
        limit: request.query.limit ?? 20,
        after: request.query.after,
        status: request.query.status,
      }),
  );

  app.post(
    '/webhooks/:id/deliveries/:delivery_id/retry',
    {
      onRequest,
      schema: {
        operationId: 'webhooks.retryDelivery',
        tags,
        summary: 'Retry a delivery now',
        description:
          'Makes the delivery due at once, whatever its status (a succeeded one is sent again, with the same `webhook-id`). A failed delivery gets one more attempt. A disabled endpoint answers 409.',
        security,
        headers,
        params: DeliveryParamsSchema,
        response: { 202: Type.Ref('WebhookDelivery'), ...problemResponses(401, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(await webhooks.retryDelivery(tenantOf(request), request.params.id, request.params.delivery_id)),
  );

  app.post(
    '/events/:event_id/replay',
    {
      onRequest,
      schema: {
        operationId: 'events.replay',
        tags,
        summary: 'Send an event again',
        description:
          'Queues the event, with its original id, for every enabled endpoint that subscribes to its type or already received it; or, with `webhook_id`, for that endpoint only. Receivers that deduplicate on the id will ignore it if they processed it before.',
        security,
        headers,
        params: EventParamsSchema,
        body: ReplayBodySchema,
        response: { 202: ReplayResultSchema, ...problemResponses(401, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await webhooks.replayEvent(tenantOf(request), request.params.event_id, request.body?.webhook_id),
        ),
  );
}

/** Webhook endpoints, their delivery log, and event replay; per company and environment. */
export function webhookRoutes(deps: {
  webhooks: WebhookService;
  clientAuth: ClientAuth;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(WebhookSchema);
    app.addSchema(WebhookWithSecretSchema);
    app.addSchema(DeliverySchema);
    const context = { webhooks: deps.webhooks, onRequest: deps.clientAuth() };
    registerEndpointRoutes(app, context);
    registerEndpointChangeRoutes(app, context);
    registerDeliveryRoutes(app, context);
  };
}
