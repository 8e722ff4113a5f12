export {
  createLogMailer,
  createSmtpMailer,
  MailServerUnavailableError,
  type SmtpTimeouts,
  type EmailAttachment,
  type EmailMessage,
  type Mailer,
} from './mailer.ts';
