import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
let t: TestApp;
let base: string;
let acme: Company;
let other: Company;

before(async () => {
  t = await createTestApp({ listen: true });
  base = `${t.container.gateways.sandboxBaseUrl()!}/sandbox/stripe/v1`;
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
});
after(() => t.close());

async function stripe(key: string, method: string, path: string, form?: Record<string, string>) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    ...(form === undefined ? {} : { body: new URLSearchParams(form) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

test('each company has its own sandbox account: another key cannot list, read, confirm or refund its objects', async () => {
  assert.match(acme.stripe_sandbox_secret_key, /^sk_test_/);
  assert.notEqual(acme.stripe_sandbox_secret_key, other.stripe_sandbox_secret_key);
  // Acme takes a card payment the way its app does: an intent from the service, confirmed by the browser.
  const intent = await t.app.inject({
    method: 'POST',
    url: '/payments',
    headers: acme.sandbox,
    payload: {
      type: 'CREATE_PAYMENT_INTENT',
      amount: 9550,
      product_reference: 'ppm-motor',
      email: 'owner@example.com',
    },
  });
  assert.equal(intent.statusCode, 200, intent.body);
  const created = intent.json<Record<string, string>>();
  const pi = created['payment_provider_transaction_ref']!;
  const customer = created['payment_provider_customer_ref']!;
  const confirmed = await fetch(`${base}/payment_intents/${pi}/confirm`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_secret: created['payment_temporary_token']!,
      payment_method: 'pm_card_visa',
    }),
  });
  assert.equal(confirmed.status, 200);

  const own = acme.stripe_sandbox_secret_key;
  assert.equal((await stripe(own, 'GET', `/payment_intents/${pi}`)).body['status'], 'succeeded');
  assert.equal((await stripe(own, 'GET', `/customers/${customer}`)).status, 200);
  const ownSearch = await stripe(
    own,
    'GET',
    `/payment_intents/search?query=${encodeURIComponent("status:'succeeded'")}`,
  );
  assert.ok((ownSearch.body['data'] as Array<{ id: string }>).some((p) => p.id === pi));

  for (const key of [other.stripe_sandbox_secret_key, 'sk_test_an_attacker_of_their_own']) {
    const read = await stripe(key, 'GET', `/payment_intents/${pi}`);
    assert.equal(read.status, 404, JSON.stringify(read.body));
    assert.equal((read.body['error'] as { code: string }).code, 'resource_missing');
    assert.equal((await stripe(key, 'GET', `/customers/${customer}`)).status, 404);
    assert.equal(
      (await stripe(key, 'POST', `/customers/${customer}`, { email: 'stolen@example.com' })).status,
      404,
    );
    assert.equal(
      (await stripe(key, 'POST', `/payment_intents/${pi}/confirm`, { payment_method: 'pm_card_visa' }))
        .status,
      404,
    );
    // A missing object named in a parameter is 400 resource_missing on Stripe; in the path, 404.
    const refund = await stripe(key, 'POST', '/refunds', { payment_intent: pi });
    assert.equal(refund.status, 400, JSON.stringify(refund.body));
    assert.equal((refund.body['error'] as { code: string }).code, 'resource_missing');
    const search = await stripe(
      key,
      'GET',
      `/payment_intents/search?query=${encodeURIComponent("status:'succeeded'")}`,
    );
    assert.equal(search.status, 200);
    assert.deepEqual(
      (search.body['data'] as Array<{ id: string }>).filter((p) => p.id === pi),
      [],
      'another account lists none of them',
    );
  }
  // Nothing was refunded or changed by the other keys.
  const after = await stripe(own, 'GET', `/customers/${customer}`);
  assert.notEqual(after.body['email'], 'stolen@example.com');
  assert.equal((await stripe(own, 'GET', `/payment_intents/${pi}`)).body['amount_refunded'] ?? 0, 0);
});
