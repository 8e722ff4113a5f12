import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { fixedClock } from '../../src/platform/clock.ts';
import { addDays, londonDate, londonMidnight } from '../../src/platform/london-calendar.ts';
import { addWorkingDays } from '../../src/platform/working-days.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { make } from '../support/factories.ts';
import { onPostgres } from '../support/database.ts';
import { setUpDirectDebit, statement } from '../integration/payments/direct-debit-support.ts';
import { startBillingWorker, startFaultProxy } from './service-processes.ts';

/**
 * A worker is killed (SIGKILL) after the processor made a Direct Debit collection and before the worker
 * heard of it (the answer is lost on the way). After a new worker starts, the collection is recorded
 * once, under the one PaymentIntent the processor made: the replay carries the same idempotency key.
 */
const today = londonDate(new Date());
// Four working days back, the minimum notice (3) puts the collection's day at or before today.
const statementOn = addWorkingDays(today, -4);
const clock = fixedClock(`${statementOn}T09:00:00Z`);
let t: TestApp;
const workers: ChildProcess[] = [];

before(async () => {
  if (!onPostgres) return;
  t = await createTestApp({ listen: true, overrides: { clock } });
});

after(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  if (onPostgres) await t.close();
});

async function paymentRow(id: string) {
  const rows = await sql<{ status: string; provider_payment_id: string | null; attempts: number }>`
    select status, provider_payment_id, attempts from payments where id = ${id}`.execute(
    t.container.database.db,
  );
  return rows.rows[0];
}

async function intentsOf(id: string): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    select o.id from stripe_sandbox_objects o
    where o.type = 'payment_intent' and o.data -> 'metadata' ->> 'milepost_payment' = ${id}`.execute(
    t.container.database.db,
  );
  return rows.rows.map((r) => r.id);
}

/** A policy paying by Direct Debit, its collection due today, asked for by a worker whose answers are lost, then killed. */
async function collectionAskedThenKilled(name: string, context: { diagnostic: (message: string) => void }) {
  const company = await createCompany(t.app, name);
  const setNotice = await t.app.inject({
    method: 'PUT',
    url: `/admin/companies/${company.company_reference}/direct-debit`,
    headers: t.adminHeaders,
    payload: { notice_working_days: 3 },
  });
  assert.equal(setNotice.statusCode, 200, setNotice.body);
  const start = Math.floor(londonMidnight(addDays(statementOn, -40)).getTime() / 1000);
  const end = Math.floor(londonMidnight(addDays(statementOn, 320)).getTime() / 1000) - 1;
  const policy = await make.cardPaidPolicy(t, company, {
    policy: { start_date: start, end_date: end, inception_date: start },
    pricing: { upfront_premium: 95.5, subscription_premium: 29.99, subscription_installments: 12 },
  });
  await setUpDirectDebit(t, company.sandbox, policy.reference);
  await statement(t, company.sandbox, policy.reference, `${statementOn}T08:00:00Z`);
  const [collection] = (
    await sql<{ id: string; collect_on: string }>`
      select p.id, p.collect_on from payments p join policies q on q.id = p.policy_id
      where p.method_type = 'bacs_debit' and q.policy_reference = ${policy.reference}`.execute(
      t.container.database.db,
    )
  ).rows;
  assert.ok(collection !== undefined && collection.collect_on <= today, 'a collection due today');
  context.diagnostic(`statement ${statementOn}, collection ${collection.collect_on}`);

  // The worker reaches the sandbox through a hop that loses every answer.
  const url = new URL(t.container.gateways.sandboxBaseUrl() ?? '');
  const proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port) });
  proxy.set('mute');
  const databaseUrl = t.container.database.connectionString ?? '';
  const first = await startBillingWorker(databaseUrl, `http://127.0.0.1:${String(proxy.port)}`);
  workers.push(first);
  for (let waited = 0; (await intentsOf(collection.id)).length === 0; waited += 50) {
    assert.ok(waited < 60_000, 'the worker never asked for the collection');
    await sleep(50);
  }
  first.kill('SIGKILL');
  const made = await intentsOf(collection.id);
  assert.equal(made.length, 1);
  assert.equal((await paymentRow(collection.id))?.provider_payment_id, null, 'not recorded before the kill');
  proxy.set('pass');
  return { company, policy, collection, made, proxy, databaseUrl };
}

/** Starts a worker and waits until the collection is recorded `processing` under `intent`. */
async function recordedAfterRestart(
  asked: Awaited<ReturnType<typeof collectionAskedThenKilled>>,
  context: { diagnostic: (message: string) => void },
) {
  const startedAt = Date.now();
  workers.push(await startBillingWorker(asked.databaseUrl, `http://127.0.0.1:${String(asked.proxy.port)}`));
  for (;;) {
    const row = await paymentRow(asked.collection.id);
    if (row?.status === 'processing') {
      assert.equal(row.provider_payment_id, asked.made[0]);
      assert.equal(row.attempts, 1);
      break;
    }
    assert.ok(
      Date.now() - startedAt < 120_000,
      `not recorded 120 s after the restart: ${JSON.stringify(row)}`,
    );
    await sleep(200);
  }
  context.diagnostic(`recorded ${String(Date.now() - startedAt)} ms after the restart`);
  assert.deepEqual(await intentsOf(asked.collection.id), asked.made, 'one collection at the processor');
  // The next test's collection is this worker's to take otherwise, through a hop that is closed.
  for (const worker of workers.splice(0)) worker.kill('SIGKILL');
  await asked.proxy.close();
}

test(
  'kill -9 between a collection’s creation and its record: one collection after the restart',
  { skip: !onPostgres && 'PostgreSQL only: the worker runs in processes of its own' },
  async (context) => {
    const asked = await collectionAskedThenKilled('Crash Mutual', context);
    await recordedAfterRestart(asked, context);
  },
);

test(
  'a card chosen while the collection’s outcome is unknown: the replay asks under the same mandate, once',
  { skip: !onPostgres && 'PostgreSQL only: the worker runs in processes of its own' },
  async (context) => {
    const asked = await collectionAskedThenKilled('Card Since Mutual', context);
    // The policyholder pays by card from now on: the mandate is no longer the policy's method. The
    // collection asked for before is still the same request, and is not charged again to the card.
    const card = await t.app.inject({
      method: 'POST',
      url: '/payments',
      headers: asked.company.sandbox,
      payload: {
        type: 'ADD_NEW_PAYMENT_METHOD',
        product_reference: 'ppm',
        policy_reference: asked.policy.reference,
        payment_method_id: 'pm_card_visa',
      },
    });
    assert.equal(card.statusCode, 200, card.body);
    await recordedAfterRestart(asked, context);
  },
);
