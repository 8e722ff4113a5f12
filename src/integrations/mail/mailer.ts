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

/**
 * The SMTP server could not be reached, or stopped answering: no other email would get through now
 * either, so the caller stops its batch and retries later.
 */
export class MailServerUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MailServerUnavailableError';
  }
}

/**
 * The SMTP server refused this email for good: a permanent (5yz, RFC 5321 §4.2.1) reply to its
 * recipient or to its content. Sending it again would be refused again, so it is not retried. A 5yz to
 * the connection, the sign-in or the sender is not this: it refuses every email alike (a server
 * misconfigured), and those are retried until an operator puts it right.
 */
export class MailRefusedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MailRefusedError';
  }
}

/** Whether nodemailer's error is a permanent refusal of the email's recipient or content. */
function refusesTheEmail(error: unknown): boolean {
  const { code, command, responseCode } = error as {
    code?: unknown;
    command?: unknown;
    responseCode?: unknown;
  };
  return (
    (code === 'EENVELOPE' || code === 'EMESSAGE') &&
    (command === 'RCPT TO' || command === 'DATA') &&
    typeof responseCode === 'number' &&
    responseCode >= 500 &&
    responseCode < 600
  );
}

/** How long an SMTP exchange may take (milliseconds). */
export interface SmtpTimeouts {
  /** A connection made, or the server's greeting received. */
  readonly connectMs: number;
  /** Silence from the server in the middle of the exchange. */
  readonly idleMs: number;
  /** One email, from connecting to the server's acceptance. */
  readonly sendMs: number;
}

/**
 * NOTE: nodemailer waits 2 minutes for a connection and 10 minutes of silence mid-message. An email is
 * sent inside its outbox row's transaction (the row lock keeps two workers from sending it twice), so
 * a server that accepted the message and went silent held a database connection, and on the embedded
 * database its only session, so every request of the process, for 10 minutes an email.
 */
const SMTP_TIMEOUTS: SmtpTimeouts = { connectMs: 10_000, idleMs: 20_000, sendMs: 30_000 };

/** nodemailer's codes for a server not reached or not answering (not a refused recipient or message). */
const UNAVAILABLE_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ETLS', 'EABORT']);

export function createSmtpMailer(
  smtpUrl: string,
  from: string,
  timeouts: SmtpTimeouts = SMTP_TIMEOUTS,
): Mailer {
  // nodemailer is loaded at the first email, by the worker that sends it: API processes never do.
  let transport: Promise<Transporter> | undefined;
  const opened = () =>
    (transport ??= import('nodemailer').then((nodemailer) =>
      // Timeouts given in the URL's query (`?socketTimeout=…`) win over these.
      nodemailer.default.createTransport(
        {
          url: smtpUrl,
          connectionTimeout: timeouts.connectMs,
          greetingTimeout: timeouts.connectMs,
          dnsTimeout: timeouts.connectMs,
          socketTimeout: timeouts.idleMs,
        },
        { from },
      ),
    ));
  return {
    kind: 'smtp',
    async send(message) {
      const mail = {
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
        // nodemailer closes the connection when the signal aborts (its types do not list the option).
        signal: AbortSignal.timeout(timeouts.sendMs),
      };
      try {
        await (await opened()).sendMail(mail);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) {
          const reason =
            code === 'EABORT'
              ? `the SMTP server did not take the email within ${String(timeouts.sendMs)} ms`
              : `the SMTP server is unavailable: ${(error as Error).message}`;
          throw new MailServerUnavailableError(reason, { cause: error });
        }
        if (refusesTheEmail(error))
          throw new MailRefusedError(`the SMTP server refused the email: ${(error as Error).message}`, {
            cause: error,
          });
        throw error;
      }
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
