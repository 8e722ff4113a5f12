import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { startSmtpServer } from '../../support/smtp.ts';
import { createAuthClient } from '../auth/auth-support.ts';

// Through the real login: a policyholder's access token reads their own journeys and nobody else's (404),
// and cannot write any.
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

test('policyholder tokens read their own journeys; another’s answer 404; they cannot write', async () => {
  const company = await createCompany(t.app, 'Journeys Access');
  const auth = createAuthClient(t, smtp);
  const alice = await auth.loggedIn(company.sandbox);
  const bob = await auth.loggedIn(company.sandbox);
  const asAlice = { authorization: `Bearer ${alice.tokens.access_token}` };
  const asBob = { authorization: `Bearer ${bob.tokens.access_token}` };

  const send = async (policyReference: string) =>
    (
      await make.journey(t.app, company, policyReference, '2025-07-10T08:00:00Z', {
        points: [51.501, -0.1416, 51.5115, -0.116],
        durationSeconds: 20 * 60,
      })
    ).journey_reference;
  const alicesJourney = await send(alice.holder.policyReference);
  const bobsJourney = await send(bob.holder.policyReference);

  const list = await t.app.inject({ method: 'GET', url: '/journeys', headers: asAlice });
  assert.equal(list.statusCode, 200, list.body);
  assert.deepEqual(
    list.json<{ journeys: Array<{ journey_reference: string }> }>().journeys.map((j) => j.journey_reference),
    [alicesJourney],
  );
  // Apps send their public client_id everywhere: with no client_secret it is still the token that counts.
  const own = await t.app.inject({
    method: 'GET',
    url: `/journeys/${alicesJourney}`,
    headers: { ...asAlice, client_id: company.sandbox.client_id },
  });
  assert.equal(own.statusCode, 200, own.body);

  const others = await t.app.inject({ method: 'GET', url: `/journeys/${alicesJourney}`, headers: asBob });
  assert.equal(others.statusCode, 404);
  const othersPolicy = await t.app.inject({
    method: 'GET',
    url: '/journeys',
    headers: asBob,
    query: { policy_reference: alice.holder.policyReference },
  });
  assert.equal(othersPolicy.statusCode, 404);
  const bobsOwn = await t.app.inject({ method: 'GET', url: `/journeys/${bobsJourney}`, headers: asBob });
  assert.equal(bobsOwn.statusCode, 200);

  const badToken = await t.app.inject({
    method: 'GET',
    url: '/journeys',
    headers: { authorization: 'Bearer not-a-token' },
  });
  assert.equal(badToken.statusCode, 401);
  const write = await t.app.inject({
    method: 'POST',
    url: `/journeys/${alicesJourney}/void`,
    headers: asAlice,
    payload: { reason: 'not mine to void' },
  });
  assert.equal(write.statusCode, 401);
});
