import type { Executor } from '../../schema.ts';
import {
  MailRefusedError,
  MailServerUnavailableError,
  type EmailAttachment,
  type Mailer,
} from '../../integrations/mail/index.ts';
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { renderLater, type LaterTemplate, type RenderedEmail } from './email-templates.ts';
import {
  findEmailForDelivery,
  insertEmails,
  listEmails,
  listRecentEmails,
  type AttachmentRef,
  type OutboxEmail,
  type OutboxEntry,
  markEmailAttemptFailed,
  markEmailDelivered,
  withdrawEmail,
} from './outbox-repository.ts';

export const SEND_EMAIL_QUEUE = 'notifications.send-email';

/** An email that no attempt could send (it fails at once, not after the retries). */
class UnsendableEmail extends Error {}
const RETRY_LIMIT = 8;
/**
 * Emails sent by one job, one after another. A billing chunk queues a thousand statement emails; a job
 * each was a fifth of its database writes (bench/billing.ts). Small enough that a batch over a slow
 * SMTP server finishes well inside the job's expiry, and that four jobs at once keep mail flowing.
 */
const EMAILS_PER_JOB = 25;

/** A stored email as it reads: one whose content is rendered when sent shows rendered. */
function withContent<E extends OutboxEmail>(email: E): E {
  const later = email.html === null ? renderLater(email.template, email.data) : undefined;
  return later === undefined ? email : { ...email, ...later };
}

/**
 * The newest emails in the outbox (for operators: with no SMTP server, the outbox is where a temporary
 * password is read). A sent email's body was dropped when it went out, so only its subject shows.
 */
export async function readOutbox(
  db: Executor,
  filter: { recipient?: string | undefined; limit: number },
): Promise<OutboxEntry[]> {
  return (await listRecentEmails(db, filter)).map((email) =>
    email.status === 'sent' ? email : withContent(email),
  );
}

/** Addresses under the `.invalid` top-level domain, which RFC 2606 reserves as never resolving. */
const UNDELIVERABLE = /\.invalid$/i;

/** Emails go through the outbox: written in the caller's transaction, sent by a job after commit, retried with backoff. */

export interface NotificationServiceDeps {
  db: Executor;
  clock: Clock;
  jobs: Jobs;
  mailer: Mailer;
  /** Reads the documents an email carries when it is sent (the documents module); those gone are left out. */
  loadAttachments?: (db: Executor, refs: readonly AttachmentRef[]) => Promise<EmailAttachment[]>;
  /**
   * The policyholders' link to a policy's documents in the web app, for a tenant (undefined when the
   * service does not know the app's address): the emails that announce a change carry it.
   */
  documentLinks?: (
    trx: Executor,
    scope: { companyId: string; environment: string },
  ) => Promise<((policyReference: string) => string) | undefined>;
}

const renderedOf = (email: OutboxEmail): RenderedEmail | undefined =>
  email.subject === null || email.text === null || email.html === null
    ? undefined
    : { subject: email.subject, text: email.text, html: email.html };

/** An email stored as a template's values, rendered now (undefined for one stored rendered). */
const renderedLater = (email: OutboxEmail): RenderedEmail | undefined =>
  email.html === null ? renderLater(email.template, email.data) : undefined;

/** An email to queue: rendered now, or a later template's values; its account and attachments when known. */
type QueuedEmail = {
  scope: { companyId: string; environment: string } | null;
  to: string;
  userId?: string;
  attachments?: readonly AttachmentRef[];
} & ({ template: string; email: RenderedEmail } | { template: LaterTemplate; data: object });

export function createNotificationService(deps: NotificationServiceDeps) {
  const { db, clock, jobs, mailer } = deps;
  const attachmentsOf = async (trx: Executor, email: OutboxEmail) =>
    email.attachments.length === 0 ? undefined : deps.loadAttachments?.(trx, email.attachments);
  jobs.define({
    name: SEND_EMAIL_QUEUE,
    options: {
      retryLimit: RETRY_LIMIT,
      retryDelay: 5,
      retryBackoff: true,
      retryDelayMax: 3600,
      expireInSeconds: 600,
    },
  });

  const deliver = async (emailId: string, attempt: number): Promise<void> => {
    let failure: Error | undefined;
    await inTransaction(db, async (trx) => {
      const email = await findEmailForDelivery(trx, emailId);
      if (email === undefined || email.status !== 'pending') return;
      // Queued while its account was being erased (the erasure could not see it yet): never sent.
      if (email.erasedAs !== null) {
        await withdrawEmail(trx, emailId, email.erasedAs);
        return;
      }
      let later: RenderedEmail | undefined;
      try {
        later = renderedLater(email);
        const content = later ?? renderedOf(email);
        // Neither stored content nor values a template knows: no retry can send it.
        if (content === undefined)
          throw new UnsendableEmail(`nothing to send for template ${email.template}`);
        await mailer.send({ to: email.recipient, ...content, attachments: await attachmentsOf(trx, email) });
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
        return;
      }
      await markEmailDelivered(trx, emailId, mailer.kind === 'smtp' ? 'sent' : 'logged', clock.now(), later);
    });
    if (failure !== undefined) {
      // Recorded outside the delivery transaction, which has already ended.
      // Refused for good (no content to send, or the server's permanent refusal of the recipient or the
      // message): failed now, not retried for hours.
      const permanent = failure instanceof UnsendableEmail || failure instanceof MailRefusedError;
      await markEmailAttemptFailed(db, emailId, failure.message, permanent || attempt >= RETRY_LIMIT);
      if (!permanent) throw failure;
    }
  };

  /**
   * Sends a job's emails that are still pending; those sent stay sent when the job is retried, so a
   * retry sends only what failed. Throws when any failed, for the job runner to retry them later; an
   * SMTP server not reached or not answering ends the batch at the first email it held.
   */
  const deliverAll = async (emailIds: readonly string[], attempt: number): Promise<void> => {
    const failures: Error[] = [];
    for (const emailId of emailIds) {
      try {
        await deliver(emailId, attempt);
      } catch (error) {
        failures.push(error instanceof Error ? error : new Error(String(error)));
        // The rest would wait as long for a server that is not there; they stay pending, unattempted,
        // for the job's retry.
        if (error instanceof MailServerUnavailableError) break;
      }
    }
    if (failures.length === 1) throw failures[0] as Error;
    if (failures.length > 1)
      throw new AggregateError(
        failures,
        `${String(failures.length)} of ${String(emailIds.length)} emails failed`,
      );
  };

  /**
   * Emails rendered now (`email`), or values (`data`) of a `LATER_TEMPLATES` template, rendered when
   * each is sent. `userId`: the account an email is for; an email for an erased account is neither
   * queued nor, should the erasure commit after it was queued, sent.
   */
  async function queueEmails(trx: Executor, emails: readonly QueuedEmail[]): Promise<string[]> {
    const at = clock.now();
    // A recipient in `.invalid` (RFC 2606; an erased account's pseudonym) can never be reached: not queued.
    const deliverable = emails.filter((queued) => !UNDELIVERABLE.test(queued.to));
    if (deliverable.length === 0) return [];
    const ids = await insertEmails(
      trx,
      deliverable.map((queued) => ({
        companyId: queued.scope?.companyId ?? null,
        environment: queued.scope?.environment ?? null,
        template: queued.template,
        recipient: queued.to,
        userId: queued.userId,
        attachments: queued.attachments,
        content: 'email' in queued ? queued.email : { data: queued.data },
        at,
      })),
    );
    const batches = [];
    for (let i = 0; i < ids.length; i += EMAILS_PER_JOB)
      batches.push({ emailIds: ids.slice(i, i + EMAILS_PER_JOB) });
    await jobs.enqueueMany(trx, SEND_EMAIL_QUEUE, batches);
    return ids;
  }

  return {
    /** Queues an email in `trx`; nothing is sent unless the transaction commits. */
    async queueEmail(
      trx: Executor,
      scope: { companyId: string; environment: string } | null,
      template: string,
      to: string,
      email: RenderedEmail,
      /** The account the email is for, so that an erasure finds it (see queueEmails). */
      userId?: string,
      /** Stored documents sent with it. */
      attachments?: readonly AttachmentRef[],
    ): Promise<string | undefined> {
      const extra = { ...(userId === undefined ? {} : { userId }), ...(attachments && { attachments }) };
      const [id] = await queueEmails(trx, [{ scope, template, to, email, ...extra }]);
      return id;
    },

    /** The web app's documents link of a tenant's policies (see NotificationServiceDeps.documentLinks). */
    documentLinks: deps.documentLinks ?? (() => Promise.resolve(undefined)),

    /** Many emails in the caller's transaction, in two statements (a billing chunk sends one a policy). */
    queueEmails,

    /** Sends queued emails still pending; throws on a transport failure so the job runner retries them. */
    deliver: deliverAll,

    async registerWorkers(): Promise<void> {
      // `emailId`: one email a job, as jobs queued before batches were.
      await jobs.work<{ emailIds?: string[]; emailId?: string }>(
        SEND_EMAIL_QUEUE,
        async (data, job) =>
          deliverAll(data.emailIds ?? (data.emailId === undefined ? [] : [data.emailId]), job.retryCount),
        { concurrency: 4 },
      );
    },

    /** The outbox for one recipient (tests and operators), emails still to be rendered shown rendered. */
    async emailsTo(recipient: string): Promise<OutboxEmail[]> {
      return (await listEmails(db, { recipient })).map(withContent);
    },
  };
}

export type NotificationService = ReturnType<typeof createNotificationService>;
