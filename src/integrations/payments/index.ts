export {
  BACS_FAILURE_CODES,
  IDEMPOTENCY_METADATA_KEY,
  type AttachPaymentMethodInput,
  type ChargeOffSessionInput,
  type ChargeResult,
  type CollectDirectDebitInput,
  type CollectionResult,
  type CreateBacsSetupIntentInput,
  type CreateCustomerInput,
  type CreatedSetupIntent,
  type CreatePaymentIntentInput,
  type CreatedPaymentIntent,
  type Customer,
  type Mandate,
  type PaymentDispute,
  type PaymentError,
  type PaymentEvent,
  type PaymentGateway,
  type PaymentIntent,
  type PaymentIntentStatus,
  type PaymentMetadata,
  type PaymentMethod,
  type PaymentMethodType,
  type Refund,
  type RefundInput,
  type RefundStatus,
  type RefundUpdate,
  type SetupIntent,
  type SetupIntentStatus,
} from './gateway.ts';
export { createStripeGateway, toAppError, type StripeGatewayOptions } from './stripe-gateway.ts';
export { stripeSandboxPlugin, type StripeSandboxOptions } from './sandbox/sandbox-plugin.ts';
export { stripeSignatureHeader, type SandboxWebhookTarget } from './sandbox/webhooks.ts';
export {
  createMemorySandboxStore,
  type MemorySandboxStore,
  type IdempotencyRecord,
  type ObjectMatch,
  type SandboxObject,
  type SandboxStore,
  type StoredResponse,
} from './sandbox/store.ts';
export { createKyselySandboxStore, type SandboxTables } from './sandbox/kysely-store.ts';
export * as sandboxMigration from './sandbox/sandbox-migration.ts';
export { SANDBOX_API_VERSION, TEST_CARDS } from './sandbox/objects.ts';
export { createGateways, SANDBOX_SECRET_KEY, type Gateways, type GatewaySettings } from './gateways.ts';
