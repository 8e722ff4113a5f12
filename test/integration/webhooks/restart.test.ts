import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { after, before, test } from 'node:test';
import type { Mailer } from '../../../src/integrations/mail/index.ts';
import { createWebhookService } from '../../../src/modules/webhooks/index.ts';
import { claimDueDeliveries } from '../../../src/modules/webhooks/webhook-delivery-repository.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { inTransaction, type DatabaseHandle } from '../../../src/platform/db/database.ts';
import type { Database } from '../../../src/schema.ts';
import { createCompany, createTestApp } from '../../support/app.ts';
import { createTestDatabase } from '../../support/database.ts';
import { make } from '../../support/factories.ts';
import { startReceiver, verified } from './receiver.ts';

let database: DatabaseHandle<Database>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** The same database for several containers in turn: closing one container must not close it. */
let kept: DatabaseHandle<Database>;

before(async () => {
  database = await createTestDatabase();
  kept = { ...database, close: async () => undefined };
  receiver = await startReceiver();
});
after(async () => {
  await database.close();
  await receiver.close();
});

interface Delivery {
  status: string;
  attempts: Array<{ attempt: number; status: string }>;
}

test('a service restart between attempts loses nothing: the next process delivers, with the same id', async () => {
  const env = { WEBHOOKS_RETRY_SCHEDULE: '1500ms', WEBHOOKS_POLL_INTERVAL_MS: '25' };
  receiver.setResponder((request) => (request.path === '/restart' ? 503 : 200));
  const first = await createTestApp({ env, overrides: { database: kept }, startJobs: true });
  const company = await createCompany(first.app);
  const created = await first.app.inject({
    method: 'POST',
    url: '/webhooks',
    headers: company.sandbox,
    payload: { url: `${receiver.base}/restart`, events: ['policy.created'] },
  });
  const endpoint = created.json<{ id: string; secret: string }>();
  await make.livePolicy(first.app, company);

  const [failed] = await receiver.waitFor('/restart');
  await first.close();
  // Past the retry time, with no process running: nothing is attempted, nothing is lost.
  await sleep(2_000);
  assert.equal(receiver.received.filter((r) => r.path === '/restart').length, 1);

  receiver.setResponder(() => 200);
  const second = await createTestApp({ env, overrides: { database: kept }, startJobs: true });
  try {
    const attempts = await receiver.waitFor('/restart', 2);
    const [one, two] = attempts.map((r) => verified(endpoint.secret, r));
    assert.equal(one?.id, two?.id, 'the same event id after the restart');
    assert.equal(one?.type, 'policy.created');
    assert.equal(failed?.body, attempts[1]?.body);
    let log: Delivery[] = [];
    for (let i = 0; i < 200; i++) {
      log = (
        await second.app.inject({ url: `/webhooks/${endpoint.id}/deliveries`, headers: company.sandbox })
      ).json<{ deliveries: Delivery[] }>().deliveries;
      if (log[0]?.status === 'succeeded') break;
      await sleep(25);
    }
    assert.deepEqual(
      log.map((d) => [d.status, d.attempts.map((a) => a.status)]),
      [['succeeded', ['failed', 'succeeded']]],
    );
  } finally {
    await second.close();
  }
});

test('a worker that dies mid-attempt holds the delivery only until its lease ends; then another delivers it', async () => {
  const clock = fixedClock(new Date());
  receiver.setResponder(() => 200);
  const t = await createTestApp({ overrides: { database: kept, clock } });
  try {
    const company = await createCompany(t.app);
    const created = await t.app.inject({
      method: 'POST',
      url: '/webhooks',
      headers: company.sandbox,
      payload: { url: `${receiver.base}/lease` },
    });
    const endpoint = created.json<{ id: string; secret: string }>();
    await t.app.inject({ method: 'POST', url: `/webhooks/${endpoint.id}/test`, headers: company.sandbox });
    const { webhooks } = t.container.services;

    // A worker claims the delivery, then dies before it can send or record anything.
    const now = clock.now();
    const claimed = await inTransaction(t.container.database.db, (trx) =>
      claimDueDeliveries(trx, {
        now,
        leaseUntil: new Date(now.getTime() + 60_000),
        leaseId: randomUUID(),
        limit: 10,
        perEndpoint: 4,
      }),
    );
    assert.equal(claimed.length, 1);
    assert.equal(await webhooks.deliverDue(), 0, 'leased: no one else takes it');
    clock.advance(59_000);
    assert.equal(await webhooks.deliverDue(), 0);
    clock.advance(2_000);
    assert.equal(await webhooks.deliverDue(), 1, 'the lease ended: another worker delivers');
    const [request] = await receiver.waitFor('/lease');
    assert.equal(verified(endpoint.secret, request!).type, 'webhook.test');
    const log = (
      await t.app.inject({ url: `/webhooks/${endpoint.id}/deliveries`, headers: company.sandbox })
    ).json<{ deliveries: Array<Delivery & { attempt_count: number }> }>().deliveries;
    const [entry] = log;
    assert.ok(entry);
    assert.equal(entry.status, 'succeeded');
    assert.equal(entry.attempt_count, 2, 'the lost attempt counts');
    assert.deepEqual(
      entry.attempts.map((a) => a.attempt),
      [2],
      'only the attempt that reported is logged',
    );
  } finally {
    await t.close();
  }
});

test('two workers racing over the same deliveries send each one once (SKIP LOCKED)', async () => {
  receiver.setResponder(() => 200);
  const t = await createTestApp({ overrides: { database: kept } });
  try {
    const company = await createCompany(t.app);
    const endpoint = (
      await t.app.inject({
        method: 'POST',
        url: '/webhooks',
        headers: company.sandbox,
        payload: { url: `${receiver.base}/race` },
      })
    ).json<{ id: string }>();
    const sends = 40;
    for (let i = 0; i < sends; i++)
      await t.app.inject({ method: 'POST', url: `/webhooks/${endpoint.id}/test`, headers: company.sandbox });
    const other = createWebhookService({
      db: t.container.database.db,
      clock: t.container.clock,
      notifications: t.container.services.notifications,
      allowPrivate: true,
      retryScheduleMs: [60_000],
      pollIntervalMs: 1_000,
    });
    const workers = [t.container.services.webhooks, other];
    const counts = await Promise.all(
      workers.map(async (worker) => {
        let total = 0;
        for (let n = await worker.deliverDue(); n > 0; n = await worker.deliverDue()) total += n;
        return total;
      }),
    );
    assert.equal(counts[0]! + counts[1]!, sends, `claimed ${counts.join(' + ')}`);
    const requests = await receiver.waitFor('/race', sends);
    assert.equal(requests.length, sends);
    assert.equal(new Set(requests.map((r) => r.headers['webhook-id'])).size, sends, 'no event sent twice');
  } finally {
    await t.close();
  }
});

test('a stopping process takes no new job while a webhook attempt holds its stop; the job waits for the next process', async () => {
  let answer: (status: number) => void = () => undefined;
  receiver.setResponder((request) =>
    request.path === '/held' ? new Promise<number>((resolve) => (answer = resolve)) : 200,
  );
  const sent: string[] = [];
  const mailer: Mailer = {
    kind: 'smtp',
    send: (message) => {
      sent.push(message.to);
      return Promise.resolve();
    },
    close: () => undefined,
  };
  const shutdownMs = 3_000;
  const t = await createTestApp({
    env: { SHUTDOWN_TIMEOUT_MS: String(shutdownMs), WEBHOOKS_POLL_INTERVAL_MS: '25' },
    overrides: { database: kept, mailer },
    startJobs: true,
  });
  const company = await createCompany(t.app);
  const created = await t.app.inject({
    method: 'POST',
    url: '/webhooks',
    headers: company.sandbox,
    payload: { url: `${receiver.base}/held` },
  });
  const endpoint = created.json<{ id: string }>();
  await t.app.inject({ method: 'POST', url: `/webhooks/${endpoint.id}/test`, headers: company.sandbox });
  await receiver.waitFor('/held');

  const startedAt = Date.now();
  const closing = t.close();
  // The webhook attempt holds the stop; jobs (polled every 0.5 s here) are meanwhile enqueued.
  await sleep(200);
  const { db } = t.container.database;
  const [id] = await inTransaction(db, (trx) =>
    t.container.services.notifications.queueEmails(trx, [
      {
        scope: null,
        template: 'test',
        to: 'after-sigterm@example.com',
        email: { subject: 'Hello', text: 'Hello.', html: '<p>Hello.</p>' },
      },
    ]),
  );
  await closing;
  const tookMs = Date.now() - startedAt;
  answer(200);

  assert.deepEqual(sent, [], 'no job taken after the stop began');
  const [email] = (
    await sql<{ status: string; attempts: number }>`
      select status, attempts from outbox_emails where id = ${id}`.execute(db)
  ).rows;
  assert.deepEqual(email, { status: 'pending', attempts: 0 });
  const jobStates = (
    await sql<{ state: string }>`
      select state from pgboss.job where name = 'notifications.send-email' and data->'emailIds' ? ${id}`.execute(
      db,
    )
  ).rows.map((r) => r.state);
  assert.deepEqual(jobStates, ['created'], 'its job waits for the next process');
  assert.ok(tookMs < shutdownMs + 2_000, `stopped in ${String(tookMs)} ms`);
});
