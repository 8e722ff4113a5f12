export type { OutboxTables, OutboxEmail } from './outbox-repository.ts';
export {
  createNotificationService,
  type NotificationService,
  SEND_EMAIL_QUEUE,
} from './notification-service.ts';
export {
  welcomeEmail,
  policyAddedEmail,
  resetCodeEmail,
  temporaryPasswordEmail,
  statementIssuedEmail,
  paymentFailedEmail,
  paymentActionRequiredEmail,
  webhookEndpointDisabledEmail,
  mileageBudgetExceededEmail,
  deviceOfflineEmail,
  type RenderedEmail,
  type StatementIssuedValues,
} from './email-templates.ts';
export { readOutbox } from './notification-service.ts';
export { notificationRoutes } from './notification-routes.ts';
export {
  policyAdjustedEmail,
  policyCancelledEmail,
  policyRenewedEmail,
  policyLapsedEmail,
  documentsIssuedEmail,
} from './email-templates.ts';
export {
  directDebitAdvanceNoticeEmail,
  directDebitGuarantee,
  directDebitMandateConfirmedEmail,
  directDebitMandateEndedEmail,
} from './direct-debit-email-templates.ts';
export type { AttachmentRef } from './outbox-repository.ts';
export type { NotificationServiceDeps } from './notification-service.ts';
export { claimCrashDetectedEmail, claimStateEmail, type ToldClaimState } from './claim-email-templates.ts';
export { quoteReferralDecidedEmail } from './quote-email-templates.ts';
export { scoreDisputeDecidedEmail } from './score-email-templates.ts';
