import nodemailer from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';

export interface EmailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** The mail port: real SMTP, or the log when no SMTP is configured. */
export interface Mailer {
  readonly kind: 'smtp' | 'log';
  send(message: EmailMessage): Promise<void>;
  close(): void;
}

export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl, { from });
  return {
    kind: 'smtp',
    async send(message) {
      await transport.sendMail({
        from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
      });
    },
    close: () => {
      transport.close();
    },
  };
}

/**
 * With no SMTP server the message is written to the log (at info, text part only) and kept in the
 * outbox table, so a developer on the embedded defaults can still read a temporary password.
 */
export function createLogMailer(logger: FastifyBaseLogger): Mailer {
  return {
    kind: 'log',
    async send(message) {
      logger.info(
        { email: { to: message.to, subject: message.subject, body: message.text } },
        'email (no SMTP_URL configured)',
      );
    },
    close: () => undefined,
  };
}
