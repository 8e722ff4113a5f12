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
 * With no SMTP server nothing is sent: the email stays whole in the outbox table, where
 * `GET /admin/emails` and `npm run cli -- emails` show it. NOTE: only the recipient and subject are
 * logged; the body can hold a temporary password or a reset code, and logs travel further than the
 * database (aggregators, support tickets).
 */
export function createLogMailer(logger: FastifyBaseLogger): Mailer {
  return {
    kind: 'log',
    async send(message) {
      logger.info(
        { email: { to: message.to, subject: message.subject } },
        'email kept in the outbox, not sent (no SMTP_URL): read it with GET /admin/emails or npm run cli -- emails',
      );
    },
    close: () => undefined,
  };
}
