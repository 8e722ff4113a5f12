export { createLogMailer, createSmtpMailer, type EmailMessage, type Mailer } from './mailer.ts';
