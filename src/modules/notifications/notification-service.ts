import type { Executor } from '../../schema.ts';
import type { Mailer } from '../../integrations/mail/index.ts';
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import type { RenderedEmail } from './email-templates.ts';
import {
  findEmailForDelivery,
  insertEmails,
  listEmails,
  markEmailAttemptFailed,
  markEmailDelivered,
} from './outbox-repository.ts';

export const SEND_EMAIL_QUEUE = 'notifications.send-email';
const RETRY_LIMIT = 8;

/** Emails go through the outbox: written in the caller's transaction, sent by a job after commit, retried with backoff. */
export function createNotificationService(deps: { db: Executor; clock: Clock; jobs: Jobs; mailer: Mailer }) {
  const { db, clock, jobs, mailer } = deps;
  jobs.define({
    name: SEND_EMAIL_QUEUE,
    options: {
      retryLimit: RETRY_LIMIT,
      retryDelay: 5,
      retryBackoff: true,
      retryDelayMax: 3600,
      expireInSeconds: 120,
    },
  });

  const deliver = async (emailId: string, attempt: number): Promise<void> => {
    let failure: Error | undefined;
    await inTransaction(db, async (trx) => {
      const email = await findEmailForDelivery(trx, emailId);
      if (email === undefined || email.status !== 'pending' || email.text === null || email.html === null)
        return;
      try {
        await mailer.send({
          to: email.recipient,
          subject: email.subject,
          text: email.text,
          html: email.html,
        });
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
        return;
      }
      await markEmailDelivered(trx, emailId, mailer.kind === 'smtp' ? 'sent' : 'logged', clock.now());
    });
    if (failure !== undefined) {
      // Recorded outside the delivery transaction, which has already ended.
      await markEmailAttemptFailed(db, emailId, failure.message, attempt >= RETRY_LIMIT);
      throw failure;
    }
  };

  async function queueEmails(
    trx: Executor,
    emails: ReadonlyArray<{
      scope: { companyId: string; environment: string } | null;
      template: string;
      to: string;
      email: RenderedEmail;
    }>,
  ): Promise<string[]> {
    const at = clock.now();
    const ids = await insertEmails(
      trx,
      emails.map(({ scope, template, to, email }) => ({
        companyId: scope?.companyId ?? null,
        environment: scope?.environment ?? null,
        template,
        recipient: to,
        subject: email.subject,
        text: email.text,
        html: email.html,
        at,
      })),
    );
    await jobs.enqueueMany(
      trx,
      SEND_EMAIL_QUEUE,
      ids.map((emailId) => ({ emailId })),
    );
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
    ): Promise<string> {
      const [id] = await queueEmails(trx, [{ scope, template, to, email }]);
      return id as string;
    },

    /** Many emails in the caller's transaction, in two statements (a billing chunk sends one a policy). */
    queueEmails,

    /** Sends one queued email; throws on a transport failure so the job runner retries it. */
    deliver,

    async registerWorkers(): Promise<void> {
      await jobs.work<{ emailId: string }>(
        SEND_EMAIL_QUEUE,
        async (data, job) => deliver(data.emailId, job.retryCount),
        { concurrency: 4 },
      );
    },

    /** The outbox for one recipient (tests and operators). */
    emailsTo: (recipient: string) => listEmails(db, { recipient }),
  };
}

export type NotificationService = ReturnType<typeof createNotificationService>;
