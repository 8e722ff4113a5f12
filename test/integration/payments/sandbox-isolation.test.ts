import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Stripe from 'stripe';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { stripeAt } from '../../support/stripe-sdk.ts';

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

  for (const key of [other.stripe_sandbox_secret_key]) {
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

/** The official SDK against the service's sandboxed Stripe (`base` is its `…/sandbox/stripe/v1`). */
const sdk = (key: string) => stripeAt(base.replace(/\/v1$/, ''), key);

const INVALID_KEY = {
  error: {
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message: 'Invalid API Key provided: sk_test_****1234',
  },
};

test('a secret key the sandbox never issued is 401 invalid_api_key on every route, as on Stripe; an issued one works', async () => {
  const madeUp = 'sk_test_abcd1234';
  const before = await t.container.database.db
    .selectFrom('stripe_sandbox_objects')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();

  // Through the SDK, as an integration holding a wrong key would call it.
  const intruder = sdk(madeUp);
  for (const call of [
    () => intruder.paymentIntents.search({ query: "status:'succeeded'" }),
    () => intruder.customers.create({ email: 'nobody@example.com' }),
    () => intruder.paymentIntents.create({ amount: 1_000, currency: 'gbp' }),
  ]) {
    await assert.rejects(call(), (error: unknown) => {
      assert.ok(error instanceof Stripe.errors.StripeAuthenticationError, String(error));
      assert.equal(error.statusCode, 401);
      assert.equal(error.code, 'invalid_api_key');
      assert.equal(error.message, 'Invalid API Key provided: sk_test_****1234');
      return true;
    });
  }

  // Over HTTP: known routes, an unknown one, a malformed body, Basic auth and the browser's `key` field.
  const raw = async (path: string, init: RequestInit) => {
    const response = await fetch(`${base}${path}`, init);
    return { status: response.status, body: await response.json() };
  };
  const bearer = { authorization: `Bearer ${madeUp}` };
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const answers = [
    await raw('/customers', {
      method: 'POST',
      headers: { ...bearer, ...form },
      body: 'email=a%40example.com',
    }),
    await raw('/customers/cus_nope', { headers: bearer }),
    await raw(`/payment_intents/search?query=${encodeURIComponent("status:'succeeded'")}`, {
      headers: bearer,
    }),
    await raw('/refunds', {
      method: 'POST',
      headers: { ...bearer, ...form },
      body: 'payment_intent=pi_nope',
    }),
    await raw('/balance', { headers: bearer }),
    await raw('/customers', {
      method: 'POST',
      headers: { ...bearer, ...form },
      body: 'metadata[a]=1&metadata=2',
    }),
    await raw('/customers', {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${madeUp}:`).toString('base64')}`, ...form },
      body: 'email=b%40example.com',
    }),
    await raw('/payment_intents/pi_nope/confirm', {
      method: 'POST',
      headers: form,
      body: `key=${madeUp}&payment_method=pm_card_visa`,
    }),
  ];
  for (const answer of answers) {
    assert.equal(answer.status, 401, JSON.stringify(answer.body));
    assert.deepEqual(answer.body, INVALID_KEY);
  }
  const after = await t.container.database.db
    .selectFrom('stripe_sandbox_objects')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(after.n, before.n, 'no account was opened, nothing was made');

  // The keys the sandbox issued (one per company) keep working through the same SDK.
  const own = sdk(acme.stripe_sandbox_secret_key);
  const customer = await own.customers.create({ email: 'issued@example.com' });
  assert.match(customer.id, /^cus_/);
  const found = await own.paymentIntents.search({ query: "status:'succeeded'" });
  assert.ok(Array.isArray(found.data));
});
