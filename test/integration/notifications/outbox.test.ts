import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { createSmtpMailer, MailServerUnavailableError } from '../../../src/integrations/mail/index.ts';
import { inTransaction } from '../../../src/platform/db/database.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { startSmtpServer } from '../../support/smtp.ts';

// The outbox sends emails in batches, a job each: a retry sends only what failed, through a real SMTP
// server that defers one mailbox until it is let through, and refuses another for good.
const refused = new Set<string>();
const deferred = new Set<string>();
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let t: TestApp;

before(async () => {
  smtp = await startSmtpServer({ refused, deferred });
  t = await createTestApp({ env: { SMTP_URL: smtp.url } });
});
after(async () => {
  await t.close();
  await smtp.close();
});

const email = (n: number) => ({
  scope: null,
  template: 'test',
  to: `reader${String(n)}@example.com`,
  email: { subject: `Hello ${String(n)}`, text: 'Hello.', html: '<p>Hello.</p>' },
});

test('emails go out in batches; a retry sends only those that failed', async () => {
  const db = t.container.database.db;
  const { notifications } = t.container.services;
  const ids = await inTransaction(db, (trx) => notifications.queueEmails(trx, [1, 2, 3].map(email)));
  deferred.add('reader3@example.com');
  await assert.rejects(notifications.deliver(ids, 0), /mailbox busy/);
  assert.deepEqual(smtp.received.map((m) => m.to[0]).sort(), ['reader1@example.com', 'reader2@example.com']);
  const [third] = await notifications.emailsTo('reader3@example.com');
  assert.deepEqual({ status: third?.status, attempts: third?.attempts }, { status: 'pending', attempts: 1 });

  deferred.clear();
  await notifications.deliver(ids, 1);
  assert.deepEqual(
    smtp.received.map((m) => m.to[0]).sort(),
    ['reader1@example.com', 'reader2@example.com', 'reader3@example.com'],
    'each sent once',
  );
  assert.equal((await notifications.emailsTo('reader3@example.com'))[0]?.status, 'sent');
});

test('a mailbox the server refuses for good fails at once and is not retried; the others go', async () => {
  const db = t.container.database.db;
  const { notifications } = t.container.services;
  const ids = await inTransaction(db, (trx) => notifications.queueEmails(trx, [4, 5].map(email)));
  refused.add('reader4@example.com');
  try {
    // The job succeeds: nothing in it would go better at a retry.
    await notifications.deliver(ids, 0);
  } finally {
    refused.clear();
  }
  const [fourth] = await notifications.emailsTo('reader4@example.com');
  assert.deepEqual({ status: fourth?.status, attempts: fourth?.attempts }, { status: 'failed', attempts: 1 });
  const [row] = (
    await sql<{ last_error: string }>`select last_error from outbox_emails where id = ${ids[0]}`.execute(db)
  ).rows;
  assert.match(row?.last_error ?? '', /refused the email.*550/);
  assert.equal((await notifications.emailsTo('reader5@example.com'))[0]?.status, 'sent');
  // A later run of the same job (a redelivery) sends nothing more.
  await notifications.deliver(ids, 1);
  assert.equal(smtp.received.filter((m) => m.to[0] === 'reader4@example.com').length, 0);
});

test('a thousand emails queued together make forty jobs, not a thousand', async () => {
  const db = t.container.database.db;
  const count = async () =>
    Number(
      (
        await sql<{
          n: string;
        }>`select count(*) as n from pgboss.job where name = 'notifications.send-email'`.execute(db)
      ).rows[0]?.n,
    );
  const before = await count();
  await inTransaction(db, (trx) =>
    t.container.services.notifications.queueEmails(
      trx,
      Array.from({ length: 1000 }, (_, i) => email(100 + i)),
    ),
  );
  assert.equal((await count()) - before, 40);
});

test('a statement email is stored as its values and rendered when it is sent', async () => {
  const db = t.container.database.db;
  const { notifications } = t.container.services;
  const values = {
    firstNames: 'Amelia',
    policyReference: 'amber-falcon-river',
    periodStartOn: '2025-06-01',
    periodEndOn: '2025-06-30',
    journeyCount: 12,
    distanceMiles: 321.06,
    usagePremiumPence: 1284,
    subscriptionPremiumPence: 2999,
    totalPremiumPence: 4283,
    billedPremiumPence: 4283,
    currency: 'GBP',
  };
  const ids = await inTransaction(db, (trx) =>
    notifications.queueEmails(trx, [
      { scope: null, template: 'statement-issued', to: 'amelia@example.com', data: values },
    ]),
  );
  const stored = await sql<{ subject: string | null; html_body: string | null }>`
    select subject, html_body from outbox_emails where id = ${ids[0]}`.execute(db);
  assert.deepEqual(stored.rows[0], { subject: null, html_body: null });
  const [pending] = await notifications.emailsTo('amelia@example.com');
  assert.equal(pending?.subject, 'Your statement for 2025-06-01 to 2025-06-30', 'shown rendered');

  await notifications.deliver(ids, 0);
  const [received] = await smtp.waitFor('amelia@example.com');
  assert.ok(received?.text.includes('Subject: Your statement for 2025-06-01 to 2025-06-30'));
  assert.ok(
    received?.text.includes('Amount to pay: =C2=A342.83') || received?.text.includes('Amount to pay: £42.83'),
  );
  const [sent] = await notifications.emailsTo('amelia@example.com');
  assert.deepEqual(
    { status: sent?.status, subject: sent?.subject },
    {
      status: 'sent',
      subject: 'Your statement for 2025-06-01 to 2025-06-30',
    },
  );
});

test('an email no attempt could send fails at once, with the reason', async () => {
  const db = t.container.database.db;
  const id = '01900000-0000-7000-8000-000000000001';
  await sql`
    insert into outbox_emails (id, template, recipient, data, status, created_at)
    values (${id}, 'retired-template', 'nobody@example.com', '{}', 'pending', now())`.execute(db);
  await t.container.services.notifications.deliver([id], 0);
  const row = await sql<{ status: string; last_error: string | null }>`
    select status, last_error from outbox_emails where id = ${id}`.execute(db);
  const [stored] = row.rows;
  assert.equal(stored?.status, 'failed');
  assert.match(String(stored.last_error), /nothing to send for template retired-template/);
});

test('an SMTP server that stops answering holds a batch for one bounded send; the rest wait, and all go later', async () => {
  const silent = { on: true };
  const hung = await startSmtpServer({ silent });
  const sendMs = 1_000;
  const own = await createTestApp({
    overrides: {
      mailer: createSmtpMailer(hung.url, 'test@example.com', { connectMs: 500, idleMs: sendMs, sendMs }),
    },
  });
  try {
    const db = own.container.database.db;
    const { notifications } = own.container.services;
    const ids = await inTransaction(db, (trx) => notifications.queueEmails(trx, [11, 12, 13].map(email)));
    const startedAt = Date.now();
    await assert.rejects(notifications.deliver(ids, 0), MailServerUnavailableError);
    // NOTE: the send runs in its row's transaction; on PGlite every other query waits meanwhile.
    assert.ok(
      Date.now() - startedAt < 2 * sendMs,
      `a batch given up after ${String(Date.now() - startedAt)} ms`,
    );
    const attempts = async () =>
      (
        await sql<{ recipient: string; status: string; attempts: number }>`
          select recipient, status, attempts from outbox_emails order by recipient`.execute(db)
      ).rows.map((r) => `${r.recipient} ${r.status} ${String(r.attempts)}`);
    assert.deepEqual(await attempts(), [
      'reader11@example.com pending 1',
      'reader12@example.com pending 0',
      'reader13@example.com pending 0',
    ]);

    silent.on = false;
    await notifications.deliver(ids, 1);
    assert.deepEqual(hung.received.map((m) => m.to[0]).sort(), [
      'reader11@example.com',
      'reader12@example.com',
      'reader13@example.com',
    ]);
    assert.deepEqual(await attempts(), [
      'reader11@example.com sent 2',
      'reader12@example.com sent 1',
      'reader13@example.com sent 1',
    ]);
  } finally {
    await own.close();
    await hung.close();
  }
});
