export type { WebhookTables } from './webhook-repository.ts';
export { createWebhookService, type WebhookService } from './webhook-service.ts';
export { webhookRoutes } from './webhook-routes.ts';
export { listEventPartitions } from './event-partitions.ts';
export {
  EVENT_CATALOGUE,
  SUBSCRIBABLE_EVENT_TYPES,
  envelopeSchema,
  openApiWebhooks,
  type EventDefinition,
} from './rules/index.ts';
