import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { startReceiver } from './receiver.ts';

const HOLD_MS = 10_000;
let t: TestApp;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  // A receiver that takes 10 s to answer on /slow, and answers /fast at once.
  receiver = await startReceiver(async (request) => {
    if (request.path === '/slow') await sleep(HOLD_MS);
    return 200;
  });
  t = await createTestApp({
    env: {
      WEBHOOKS_POLL_INTERVAL_MS: '20',
      WEBHOOKS_ENDPOINT_CONCURRENCY: '2',
      // Shutdown cuts the held attempts short instead of waiting them out.
      SHUTDOWN_TIMEOUT_MS: '200',
    },
    startJobs: true,
  });
});
after(async () => {
  await t.close();
  await receiver.close();
});

async function endpoint(company: Awaited<ReturnType<typeof createCompany>>, path: string): Promise<string> {
  const r = await t.app.inject({
    method: 'POST',
    url: '/webhooks',
    headers: company.sandbox,
    payload: { url: `${receiver.base}${path}` },
  });
  assert.equal(r.statusCode, 201, r.body);
  return r.json<{ id: string }>().id;
}

test('a slow receiver slows only itself: another company is delivered at once, and the slow one gets its limit', async () => {
  const slowCompany = await createCompany(t.app, 'Slow Receiver Ltd');
  const fastCompany = await createCompany(t.app, 'Fast Receiver Ltd');
  const slow = await endpoint(slowCompany, '/slow');
  const fast = await endpoint(fastCompany, '/fast');

  for (let i = 0; i < 8; i++)
    await t.app.inject({ method: 'POST', url: `/webhooks/${slow}/test`, headers: slowCompany.sandbox });
  await receiver.waitFor('/slow', 2);
  const sentAt = Date.now();
  await t.app.inject({ method: 'POST', url: `/webhooks/${fast}/test`, headers: fastCompany.sandbox });
  const [delivered] = await receiver.waitFor('/fast', 1, HOLD_MS);
  const waitedMs = delivered!.receivedAt - sentAt;
  assert.ok(
    waitedMs < 3_000,
    `the other company's event waited ${String(waitedMs)} ms behind the slow receiver`,
  );
  // Still within the first hold: only the endpoint's limit of attempts reached it.
  assert.ok(Date.now() - sentAt < HOLD_MS - 1_000);
  assert.equal(
    receiver.received.filter((r) => r.path === '/slow').length,
    2,
    'at most 2 in flight to one endpoint',
  );
});
