import type { FastifyBaseLogger } from 'fastify';
import type { Transporter } from 'nodemailer';

export interface EmailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** Files sent with the email (a policy's documents, where the company chose attachments). */
  readonly attachments?: readonly EmailAttachment[] | undefined;
}

export interface EmailAttachment {
  readonly filename: string;
  readonly content: Uint8Array;
  readonly contentType: string;
}

/** The mail port: real SMTP, or the log when no SMTP is configured. */
export interface Mailer {
  readonly kind: 'smtp' | 'log';
  send(message: EmailMessage): Promise<void>;
  close(): void;
}

export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  // nodemailer is loaded at the first email, by the worker that sends it: API processes never do.
  let transport: Promise<Transporter> | undefined;
  const opened = () =>
    (transport ??= import('nodemailer').then((nodemailer) =>
      nodemailer.default.createTransport(smtpUrl, { from }),
    ));
  return {
    kind: 'smtp',
    async send(message) {
      await (
        await opened()
      ).sendMail({
        from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        ...(message.attachments === undefined || message.attachments.length === 0
          ? {}
          : {
              attachments: message.attachments.map((a) => ({
                filename: a.filename,
                content: Buffer.from(a.content),
                contentType: a.contentType,
              })),
            }),
      });
    },
    close: () => {
      void transport?.then((opened) => {
        opened.close();
      });
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
        {
          email: {
            to: message.to,
            subject: message.subject,
            attachments: message.attachments?.map((a) => a.filename),
          },
        },
        'email kept in the outbox, not sent (no SMTP_URL): read it with GET /admin/emails or npm run cli -- emails',
      );
    },
    close: () => undefined,
  };
}
