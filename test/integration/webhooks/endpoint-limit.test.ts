import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MAX_ENDPOINTS_PER_TENANT } from '../../../src/modules/webhooks/webhook-endpoint-service.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { startReceiver } from './receiver.ts';

let t: TestApp;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  receiver = await startReceiver();
  t = await createTestApp();
});
after(async () => {
  await t.close();
  await receiver.close();
});

// The race shows on PostgreSQL; PGlite runs the registrations one at a time, and must agree.
test('registrations racing for the last endpoint place keep the company within its limit: one 201, the rest 409', async () => {
  const company = await createCompany(t.app, 'Limit');
  const register = (n: number) =>
    t.app.inject({
      method: 'POST',
      url: '/webhooks',
      headers: company.sandbox,
      payload: { url: `${receiver.base}/hook-${String(n)}` },
    });
  for (let n = 1; n < MAX_ENDPOINTS_PER_TENANT; n++) assert.equal((await register(n)).statusCode, 201);
  const racing = await Promise.all(
    Array.from({ length: 8 }, (_, i) => register(MAX_ENDPOINTS_PER_TENANT + i)),
  );
  const statuses = racing.map((r) => r.statusCode).sort();
  assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409, 409, 409]);
  const listed = await t.app.inject({ method: 'GET', url: '/webhooks', headers: company.sandbox });
  assert.equal(listed.statusCode, 200, listed.body);
  assert.equal(listed.json<{ webhooks: unknown[] }>().webhooks.length, MAX_ENDPOINTS_PER_TENANT);
});
