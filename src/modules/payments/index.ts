export type { PaymentTables, PaymentRecord } from './payment-repository.ts';
export {
  createPaymentService,
  type PaymentService,
  type PaymentGateways,
  type ChargeOutcome,
  SETTLE_QUEUE,
  COLLECT_DUE_QUEUE,
} from './payment-service.ts';
export { paymentRoutes, stripeWebhookRoutes, type PolicyholderAccess } from './payment-routes.ts';
export { directDebitRoutes } from './direct-debit-routes.ts';
export { SETUPS_SEARCHED } from './direct-debit-service.ts';
export {
  adjustmentAmountPence,
  cancellationAmountPence,
  carriedForward,
  MINIMUM_CHARGE_MINOR_UNITS,
  remainingShare,
} from './rules/index.ts';
export { eraseMandateHolders } from './mandate-repository.ts';
export type { QuotePayments, QuotePaymentOpening } from './quote-payments.ts';
