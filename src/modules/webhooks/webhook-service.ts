import { createWebhookContext, type WebhookDeps } from './webhook-context.ts';
import { createDeliveryService } from './webhook-delivery-service.ts';
import { createDispatchService } from './webhook-dispatch-service.ts';
import { createEndpointService } from './webhook-endpoint-service.ts';

export type { WebhookDeps, WebhookLogger } from './webhook-context.ts';

/**
 * Webhook endpoints, the fan-out of committed events to them, and signed delivery with retries.
 * Events reach the fan-out through a trigger-fed queue table (migration 0006), so the request that
 * caused an event only inserts one row; all network work happens in the worker, outside transactions.
 * Each family of use cases lives in its own file; this composes them.
 */
export function createWebhookService(deps: WebhookDeps) {
  const ctx = createWebhookContext(deps);
  return {
    ...createEndpointService(ctx),
    ...createDeliveryService(ctx),
    ...createDispatchService(ctx),
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
