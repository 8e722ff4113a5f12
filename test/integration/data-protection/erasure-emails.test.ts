import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { asTenant, type DataEnvironment } from '../../../src/modules/companies/index.ts';
import { SEND_EMAIL_QUEUE } from '../../../src/modules/notifications/index.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { inTransaction } from '../../../src/platform/db/database.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { onPostgres } from '../../support/database.ts';
import { make } from '../../support/factories.ts';
import { startSmtpServer } from '../../support/smtp.ts';

// An erasure and the account's emails still to be sent: whatever was queued before, during or just after
// the erasure (by a transaction that read the address before it committed), nothing reaches the
// original address. Emails go through a real SMTP server; the jobs are run by hand, in the order a
// worker could run them, with the example policy's term in force (2025-06-01 to 2026-05-31).

const clock = fixedClock('2025-07-20T12:00:00Z');
type Company = Awaited<ReturnType<typeof createCompany>>;

let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let acme: Company;
let acmeId: string;

before(async () => {
  smtp = await startSmtpServer();
  // ROLE=api: no worker runs the jobs behind the test's back.
  t = await createTestApp({ env: { SMTP_URL: smtp.url }, overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  acmeId = (
    await t.container.database.db
      .selectFrom('companies')
      .select('id')
      .where('client_id', '=', acme.client_id)
      .executeTakeFirstOrThrow()
  ).id;
});
after(async () => {
  await t.close();
  await smtp.close();
});

/** A policy for `email`, then its cancellation (which queues an email and the final statement's job). */
async function cancelledPolicy(email: string) {
  const policy = await make.policy(t.app, acme, { proposer: { email } });
  const cancelled = await t.app.inject({
    method: 'DELETE',
    url: `/policys/${policy.reference}`,
    headers: acme.sandbox,
    payload: { reason: 'sold the car' },
  });
  assert.equal(cancelled.statusCode, 200, cancelled.body);
  const user = await t.container.database.db
    .selectFrom('users')
    .select('id')
    .where('user_reference', '=', policy.userReference)
    .executeTakeFirstOrThrow();
  return { reference: policy.reference, userReference: policy.userReference, userId: user.id };
}

const erase = (userReference: string) =>
  t.app.inject({
    method: 'POST',
    url: `/admin/policyholders/${userReference}/erase`,
    headers: t.adminHeaders,
    payload: { reason: 'the policyholder asked', force: true },
  });

/** Runs each job of `queue` still waiting, as a worker would, and marks it done. */
async function runQueued(queue: string, work: (data: unknown) => Promise<void>): Promise<void> {
  const { rows } = await sql<{ id: string; data: unknown }>`
    select id, data from pgboss.job where name = ${queue} and state in ('created', 'retry')
    order by created_on`.execute(t.container.database.db);
  for (const job of rows) {
    await work(job.data);
    await sql`update pgboss.job set state = 'completed', completed_on = now() where name = ${queue} and id = ${job.id}`.execute(
      t.container.database.db,
    );
  }
}

/** The final statements, then the email jobs: what a worker does after a cancellation. */
async function runJobs(): Promise<void> {
  await runQueued('statements.final', (data) => {
    const job = data as {
      companyId: string;
      environment: DataEnvironment;
      policyReference: string;
      endAt: string;
    };
    return t.container.services.statements.issueFinal(
      asTenant(job.companyId, job.environment),
      job.policyReference,
      new Date(job.endAt),
    );
  });
  await runQueued(SEND_EMAIL_QUEUE, (data) => {
    const job = data as { emailIds?: string[]; emailId?: string };
    return t.container.services.notifications.deliver(
      job.emailIds ?? (job.emailId === undefined ? [] : [job.emailId]),
      0,
    );
  });
}

/** Nothing was sent to `email`, and the outbox keeps no email addressed to it. */
async function nothingFor(email: string): Promise<void> {
  assert.deepEqual(
    smtp.received.filter((m) => m.to.includes(email)).map((m) => /^Subject: (.*)$/m.exec(m.raw)?.[1]),
    [],
    `emails sent to ${email}`,
  );
  const kept = await sql<{ template: string; status: string }>`
    select template, status from outbox_emails where lower(recipient) = ${email}`.execute(
    t.container.database.db,
  );
  assert.deepEqual(kept.rows, [], `emails to ${email} in the outbox`);
}

describe('an erasure and the emails still to be sent', () => {
  test('cancel, erase at once, then the jobs: nothing reaches the original address', async () => {
    const email = 'ada.firstcancel@example.com';
    const policy = await cancelledPolicy(email);
    assert.equal((await erase(policy.userReference)).statusCode, 200);
    await runJobs();
    await nothingFor(email);
    // The final statement was still issued (money is kept), only its email was not sent.
    const statements = await t.app.inject({
      method: 'GET',
      url: `/statements?policy_reference=${policy.reference}`,
      headers: acme.sandbox,
    });
    assert.equal(statements.statusCode, 200, statements.body);
    assert.match(statements.body, /"policy_version_reference"/);
  });

  test('a statement email whose address was read before the erasure committed is neither kept nor sent', async () => {
    const email = 'ada.staleread@example.com';
    const policy = await cancelledPolicy(email);
    assert.equal((await erase(policy.userReference)).statusCode, 200);
    // What the final statement's transaction does when it waited behind the erasure for the policy's
    // lock: its address and name were read before the erasure committed.
    const queued = await inTransaction(t.container.database.db, (trx) =>
      t.container.services.notifications.queueEmails(trx, [
        {
          scope: { companyId: acmeId, environment: 'sandbox' },
          to: email,
          userId: policy.userId,
          template: 'statement-issued',
          data: {
            firstNames: 'Ada',
            policyReference: policy.reference,
            periodStartOn: '2025-07-01',
            periodEndOn: '2025-07-20',
            journeyCount: 0,
            distanceMiles: 0,
            usagePremiumPence: 0,
            subscriptionPremiumPence: 0,
            totalPremiumPence: 0,
            billedPremiumPence: 0,
            currency: 'GBP',
            payment: 'none',
          },
        },
      ]),
    );
    assert.deepEqual(queued, []);
    await runJobs();
    await nothingFor(email);
  });

  test('an email job that runs after the erasure sends nothing for the erased account, and leaves no address', async () => {
    const email = 'ada.latejob@example.com';
    const policy = await cancelledPolicy(email);
    assert.equal((await erase(policy.userReference)).statusCode, 200);
    // A pending email for the account that the erasure did not see: committed just after it looked.
    const id = '0b9e3c52-5a41-4d2e-9d8e-0c7f1e2d3a4b';
    await sql`
      insert into outbox_emails (id, company_id, environment, template, recipient, subject, text_body,
        html_body, status, created_at, user_id)
      values (${id}, ${acmeId}, 'sandbox', 'policy-cancelled', ${email}, 'Your policy has been cancelled',
        'Hello Ada', '<p>Hello Ada</p>', 'pending', ${clock.now()}, ${policy.userId})`.execute(
      t.container.database.db,
    );
    await t.container.services.notifications.deliver([id], 0);
    await nothingFor(email);
    const withdrawn = await t.container.database.db
      .selectFrom('outbox_emails')
      .select(['recipient', 'status', 'text_body', 'last_error'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(withdrawn, {
      recipient: `erased-${policy.userReference.toLowerCase()}@erased.invalid`,
      status: 'failed',
      text_body: null,
      last_error: 'not sent: the recipient was erased',
    });
  });

  test(
    'the final statement billed while the erasure runs (it waits for the policy) sends nothing to the original address',
    { skip: !onPostgres && 'PostgreSQL only: PGlite runs one transaction at a time' },
    async () => {
      const email = 'ada.race@example.com';
      const policy = await cancelledPolicy(email);
      const database = t.container.database;
      // A third connection holds the cancellation email's row, so that the erasure, once it has locked
      // the account and its policies, waits there: the window in which the final statement starts.
      const holder = new pg.Client({ connectionString: database.connectionString });
      await holder.connect();
      const waiting = async (count: number) => {
        const deadline = Date.now() + 15_000;
        for (;;) {
          const { rows } = await holder.query<{ waiting: number }>(
            `select count(*)::int as waiting from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock'`,
          );
          if ((rows[0]?.waiting ?? 0) >= count) return;
          assert.ok(Date.now() < deadline, `${String(count)} transactions waiting for a lock`);
          await sleep(20);
        }
      };
      try {
        await holder.query('begin');
        await holder.query(
          `select 1 from outbox_emails where template = 'policy-cancelled' and recipient = $1 for update`,
          [email],
        );
        const erasing = erase(policy.userReference);
        await waiting(1);
        // The final statement's job: it reads the policyholder's address with the policy's lock, for which
        // it waits behind the erasure.
        const [final] = (
          await sql<{ data: { endAt: string } }>`
            select data from pgboss.job where name = 'statements.final' and data ->> 'policyReference' = ${policy.reference}`.execute(
            database.db,
          )
        ).rows;
        assert.ok(final);
        const billing = t.container.services.statements.issueFinal(
          asTenant(acmeId, 'sandbox'),
          policy.reference,
          new Date(final.data.endAt),
        );
        await waiting(2);
        // Meanwhile another email for the account, queued while the erasure has not committed.
        const during = await inTransaction(database.db, (trx) =>
          t.container.services.notifications.queueEmails(trx, [
            {
              scope: { companyId: acmeId, environment: 'sandbox' },
              to: email,
              userId: policy.userId,
              template: 'policy-lapsed',
              email: { subject: 'Your policy has ended', text: 'Hello Ada', html: '<p>Hello Ada</p>' },
            },
          ]),
        );
        assert.equal(during.length, 1);
        await holder.query('commit');
        assert.equal((await erasing).statusCode, 200);
        await billing;
        await sql`update pgboss.job set state = 'completed' where name = 'statements.final'`.execute(
          database.db,
        );
        await runJobs();
        await nothingFor(email);
      } finally {
        await holder.end();
      }
    },
  );
});
