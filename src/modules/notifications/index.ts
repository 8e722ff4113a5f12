export type { OutboxTables, OutboxEmail } from './outbox-repository.ts';
export {
  createNotificationService,
  type NotificationService,
  SEND_EMAIL_QUEUE,
} from './notification-service.ts';
export { welcomeEmail, policyAddedEmail, type RenderedEmail } from './email-templates.ts';
