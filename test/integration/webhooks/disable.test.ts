import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { TEST_ADMIN_KEY, createTestApp, type TestApp } from '../../support/app.ts';
import { startSmtpServer } from '../../support/smtp.ts';
import { startReceiver } from './receiver.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

// The service clock is fixed and moved by hand, so the real schedule (5 s … 10 h) runs in seconds.
const clock = fixedClock('2025-06-01T12:00:00Z');
let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  smtp = await startSmtpServer();
  receiver = await startReceiver(() => 500);
  t = await createTestApp({
    env: { SMTP_URL: smtp.url, WEBHOOKS_POLL_INTERVAL_MS: '20' },
    overrides: { clock },
    startJobs: true,
  });
});
after(async () => {
  await t.close();
  await receiver.close();
  await smtp.close();
});

interface Delivery {
  id: string;
  status: string;
  attempt_count: number;
  next_attempt_at: string | null;
  last_error: string | null;
  attempts: Array<{ started_at: string; status: string; response_status_code: number | null }>;
}

async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('a failing endpoint is retried on the schedule, then disabled after 3 days and its company emailed', async () => {
  const created = await t.app.inject({
    method: 'POST',
    url: '/admin/companies',
    headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
    payload: { name: 'Acme', contact_email: 'integrations@acme.example' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const company = created.json<{
    client_id: string;
    client_secret_sandbox: string;
    company_reference: string;
  }>();
  const headers = { client_id: company.client_id, client_secret: company.client_secret_sandbox };
  const summary = await t.app.inject({
    url: `/admin/companies/${company.company_reference}`,
    headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
  });
  assert.equal(summary.json<{ contact_email: string }>().contact_email, 'integrations@acme.example');

  const endpoint = (
    await t.app.inject({
      method: 'POST',
      url: '/webhooks',
      headers,
      payload: { url: `${receiver.base}/down`, events: ['policy.lapsed'] },
    })
  ).json<{ id: string }>();
  const start = clock.now().getTime();
  await t.app.inject({ method: 'POST', url: `/webhooks/${endpoint.id}/test`, headers });

  const log = async () =>
    (await t.app.inject({ url: `/webhooks/${endpoint.id}/deliveries`, headers })).json<{
      deliveries: Delivery[];
    }>().deliveries;
  const afterAttempts = (n: number) =>
    until(async () => {
      const [delivery] = await log();
      return delivery !== undefined && delivery.attempts.length === n && delivery.attempt_count === n
        ? delivery
        : undefined;
    }, `${n} attempts`);

  // 8 attempts: at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h.
  const delaysMs = [
    5_000,
    5 * MINUTE_MS,
    30 * MINUTE_MS,
    2 * HOUR_MS,
    5 * HOUR_MS,
    10 * HOUR_MS,
    10 * HOUR_MS,
  ];
  let delivery = await afterAttempts(1);
  for (const [i, delayMs] of delaysMs.entries()) {
    assert.equal(delivery.status, 'pending');
    // NOTE: a worker's claim briefly shows its 60 s lease as next_attempt_at; wait for the settled schedule.
    const expected = clock.now().getTime() + delayMs;
    const scheduled = await until(
      async () => {
        const [current] = await log();
        return current !== undefined && Date.parse(current.next_attempt_at ?? '') === expected
          ? current
          : undefined;
      },
      `delay ${String(i + 1)}`,
    ).catch(() => delivery);
    assert.equal(Date.parse(scheduled.next_attempt_at ?? ''), expected, `delay ${String(i + 1)}`);
    clock.advance(delayMs - 1_000);
    await sleep(60);
    assert.equal((await log())[0]?.attempts.length, i + 1, 'not before its time');
    clock.advance(1_000);
    delivery = await afterAttempts(i + 2);
  }
  assert.equal(delivery.status, 'failed', 'the schedule is used up');
  assert.equal(delivery.next_attempt_at, null);
  assert.deepEqual(
    delivery.attempts.map((a) => [a.status, a.response_status_code]),
    Array(8).fill(['failed', 500]),
  );
  const hours = (clock.now().getTime() - start) / HOUR_MS;
  assert.ok(hours > 27 && hours < 28, `${hours} h`);
  assert.equal(
    (await t.app.inject({ url: `/webhooks/${endpoint.id}`, headers })).json<{ enabled: boolean }>().enabled,
    true,
    'about a day of failures is not yet enough to disable',
  );

  // Three days after the first failure, the next failure disables the endpoint.
  clock.set(new Date(start + 72 * HOUR_MS));
  await t.app.inject({ method: 'POST', url: `/webhooks/${endpoint.id}/test`, headers });
  const disabled = await until(async () => {
    const read = (await t.app.inject({ url: `/webhooks/${endpoint.id}`, headers })).json<{
      enabled: boolean;
      disabled_reason: string | null;
      failing_since: string | null;
    }>();
    return read.enabled ? undefined : read;
  }, 'the endpoint to be disabled');
  assert.equal(disabled.disabled_reason, 'failing');
  assert.equal(disabled.failing_since, new Date(start).toISOString());
  const [latest] = await log();
  assert.equal(latest?.status, 'failed', 'its pending retries end');
  const [email] = await smtp.waitFor('integrations@acme.example');
  assert.match(email!.text, /Subject: Webhook endpoint disabled \(sandbox\)/);
  assert.ok(email!.text.includes(`Endpoint: ${endpoint.id}`));
  assert.ok(email!.text.includes('answered 500'));

  // Enabling starts afresh; a disabled endpoint refuses test sends until then.
  assert.equal(
    (await t.app.inject({ method: 'POST', url: `/webhooks/${endpoint.id}/test`, headers })).statusCode,
    409,
  );
  const enabled = await t.app.inject({
    method: 'PATCH',
    url: `/webhooks/${endpoint.id}`,
    headers,
    payload: { enabled: true },
  });
  assert.deepEqual(
    [
      enabled.json<{ enabled: boolean }>().enabled,
      enabled.json<{ failing_since: null }>().failing_since,
      enabled.json<{ disabled_reason: null }>().disabled_reason,
    ],
    [true, null, null],
  );
});

test('a company without a contact email still gets the endpoint disabled (and a warning in the log)', async () => {
  const created = await t.app.inject({
    method: 'POST',
    url: '/admin/companies',
    headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
    payload: { name: 'Quiet Ltd' },
  });
  const company = created.json<{ client_id: string; client_secret_sandbox: string }>();
  const headers = { client_id: company.client_id, client_secret: company.client_secret_sandbox };
  const endpoint = (
    await t.app.inject({
      method: 'POST',
      url: '/webhooks',
      headers,
      payload: { url: `${receiver.base}/quiet`, events: ['policy.lapsed'] },
    })
  ).json<{ id: string }>();
  await t.app.inject({ method: 'POST', url: `/webhooks/${endpoint.id}/test`, headers });
  await receiver.waitFor('/quiet');
  clock.advance(73 * HOUR_MS);
  await t.app.inject({ method: 'POST', url: `/webhooks/${endpoint.id}/test`, headers });
  await until(async () => {
    const read = (await t.app.inject({ url: `/webhooks/${endpoint.id}`, headers })).json<{
      enabled: boolean;
    }>();
    return read.enabled ? undefined : read;
  }, 'the endpoint to be disabled');
});

test('bad contact emails are refused (422)', async () => {
  const r = await t.app.inject({
    method: 'POST',
    url: '/admin/companies',
    headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
    payload: { name: 'Acme', contact_email: 'not an email' },
  });
  assert.equal(r.statusCode, 422);
});

test('housekeeping forgets finished deliveries after 30 days, with their attempts', async () => {
  const { db } = t.container.database;
  const count = async (pending: boolean) =>
    (
      await db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', pending ? '=' : '!=', 'pending')
        .executeTakeFirstOrThrow()
    ).n;
  const finished = await count(false);
  assert.ok(finished >= 2, 'the failed deliveries of the tests above');
  assert.equal(await t.container.services.webhooks.purgeDeliveryLog(clock.now()), 0, 'none is 30 days old');
  clock.advance(31 * 24 * HOUR_MS);
  assert.ok((await t.container.services.webhooks.purgeDeliveryLog(clock.now())) >= finished);
  const left = await db
    .selectFrom('webhook_deliveries')
    .select('updated_at')
    .where('status', '!=', 'pending')
    .where('updated_at', '<', new Date(clock.now().getTime() - 30 * 24 * HOUR_MS))
    .execute();
  assert.deepEqual(left, []);
  assert.equal(
    await db
      .selectFrom('webhook_delivery_attempts')
      .select('id')
      .where('delivery_id', 'not in', db.selectFrom('webhook_deliveries').select('id'))
      .execute()
      .then((rows) => rows.length),
    0,
    'their attempts went with them',
  );
});
