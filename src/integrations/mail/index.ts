export {
  createLogMailer,
  createSmtpMailer,
  type EmailAttachment,
  type EmailMessage,
  type Mailer,
} from './mailer.ts';
