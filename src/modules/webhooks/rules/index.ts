export {
  EVENT_CATALOGUE,
  SUBSCRIBABLE_EVENT_TYPES,
  TEST_EVENT_TYPE,
  envelopeSchema,
  openApiWebhooks,
  type EventDefinition,
} from './event-catalogue.ts';
export { messageBody, signedHeaders, signingSecrets, type WebhookEvent } from './message.ts';
export { DEFAULT_RETRY_SCHEDULE_MS, isDelivered, nextAttemptAt } from './retry-schedule.ts';
export { subscribes } from './subscriptions.ts';
export { checkEndpointUrl, urlPolicyFor, type UrlCheck, type UrlPolicy } from './url-safety.ts';
