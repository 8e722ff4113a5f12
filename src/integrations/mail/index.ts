export {
  createLogMailer,
  createSmtpMailer,
  MailRefusedError,
  MailServerUnavailableError,
  type SmtpTimeouts,
  type EmailAttachment,
  type EmailMessage,
  type Mailer,
} from './mailer.ts';
