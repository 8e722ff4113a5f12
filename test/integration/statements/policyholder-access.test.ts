import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { startSmtpServer } from '../../support/smtp.ts';
import { createAuthClient } from '../auth/auth-support.ts';

// A policyholder's token reaches their own statements and payment records, and nobody else's (404).
const clock = fixedClock('2025-07-20T12:00:00Z');
let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;

before(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ env: { SMTP_URL: smtp.url }, overrides: { clock }, startJobs: true });
});
after(async () => {
  await t.close();
  await smtp.close();
});

test('policyholder tokens read their own statements and payments; another’s answer 404', async () => {
  const company = await createCompany(t.app, 'Access');
  const auth = createAuthClient(t, smtp);
  const alice = await auth.loggedIn(company.sandbox);
  const bob = await auth.loggedIn(company.sandbox);
  const asAlice = { authorization: `Bearer ${alice.tokens.access_token}` };
  const asBob = { authorization: `Bearer ${bob.tokens.access_token}` };

  const { policy_version_reference: statementId } = await make.statement(
    t.app,
    company,
    alice.holder.policyReference,
    '2025-06-30T22:59:59Z',
  );

  const mine = await t.app.inject({
    url: `/statements?policy_reference=${alice.holder.policyReference}`,
    headers: asAlice,
  });
  assert.equal(mine.statusCode, 200, mine.body);
  assert.equal(mine.json<{ statements: unknown[] }>().statements.length, 1);
  assert.equal((await t.app.inject({ url: `/statements/${statementId}`, headers: asAlice })).statusCode, 200);

  assert.equal(
    (
      await t.app.inject({
        url: `/statements?policy_reference=${alice.holder.policyReference}`,
        headers: asBob,
      })
    ).statusCode,
    404,
  );
  assert.equal((await t.app.inject({ url: `/statements/${statementId}`, headers: asBob })).statusCode, 404);
  assert.equal(
    (
      await t.app.inject({
        url: `/payments?policy_reference=${alice.holder.policyReference}`,
        headers: asAlice,
      })
    ).statusCode,
    200,
  );
  assert.equal(
    (
      await t.app.inject({
        url: `/payments?policy_reference=${alice.holder.policyReference}`,
        headers: asBob,
      })
    ).statusCode,
    404,
  );
  const card = await t.app.inject({
    method: 'POST',
    url: '/payments',
    headers: asBob,
    payload: {
      type: 'GET_PAYMENT_METHOD',
      product_reference: 'ppm',
      policy_reference: alice.holder.policyReference,
    },
  });
  assert.equal(card.statusCode, 404);
  // A new policy's payment intent is the insurer's integration's step: a policyholder's token makes none
  // (it would be an endpoint for trying cards against the insurer's processor account).
  const intent = await t.app.inject({
    method: 'POST',
    url: '/payments',
    headers: asAlice,
    payload: { type: 'CREATE_PAYMENT_INTENT', product_reference: 'ppm', amount: 100 },
  });
  assert.equal(intent.statusCode, 403, intent.body);
  assert.equal(intent.json<{ code: string }>().code, 'FORBIDDEN');
  assert.equal(
    (
      await t.app.inject({
        url: `/statements/${statementId}`,
        headers: { authorization: 'Bearer not-a-token' },
      })
    ).statusCode,
    401,
  );
});
