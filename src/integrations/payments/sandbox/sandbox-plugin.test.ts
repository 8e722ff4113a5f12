import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import Stripe from 'stripe';
import { parseSearchQuery } from './payment-intent-search.ts';
import { FormError, parseForm } from './form.ts';
import { stripeSandboxPlugin } from './sandbox-plugin.ts';
import { createMemorySandboxStore, jsonContains } from './store.ts';
import { stripeSignatureHeader } from './webhooks.ts';

describe('form encoding', () => {
  test('bracket keys nest, indexed keys become arrays, values stay strings', () => {
    assert.deepEqual(
      parseForm(
        'amount=100&metadata[policy]=brave-lime&metadata[c%20d]=e[f]&allowed_payment_method_types[0]=card&invoice_settings[default_payment_method]=pm_1&expand[]=a&expand[]=b',
      ),
      {
        amount: '100',
        metadata: { policy: 'brave-lime', 'c d': 'e[f]' },
        allowed_payment_method_types: ['card'],
        invoice_settings: { default_payment_method: 'pm_1' },
        expand: ['a', 'b'],
      },
    );
    assert.deepEqual(parseForm(''), {});
  });

  test('conflicting or malformed keys are refused', () => {
    assert.throws(() => parseForm('a=1&a[b]=2'), FormError);
    assert.throws(() => parseForm('a[b]=1&a=2'), FormError);
    assert.throws(() => parseForm('a]b=1'), FormError);
  });

  test('search queries: metadata, customer, status and currency joined by AND', () => {
    assert.deepEqual(parseSearchQuery("metadata['milepost_idempotency_key']:'k:1' AND status:'succeeded'"), {
      status: 'succeeded',
      metadata: { milepost_idempotency_key: 'k:1' },
    });
    assert.throws(() => parseSearchQuery('amount>100'));
    assert.throws(() => parseSearchQuery("description:'x'"));
  });

  test('jsonContains follows jsonb @>', () => {
    assert.ok(jsonContains({ a: 1, m: { k: 'v', j: 'w' }, t: ['x', 'y'] }, { m: { k: 'v' }, t: ['y'] }));
    assert.ok(!jsonContains({ a: 1, m: { k: 'v' } }, { m: { k: 'w' } }));
    assert.ok(!jsonContains({ a: 1 }, { b: undefined }));
  });
});

describe('the sandbox over HTTP (Stripe shapes)', () => {
  let app: FastifyInstance;
  const auth = { authorization: 'Bearer sk_test_shapes' };
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const post = (url: string, body: string, headers: Record<string, string> = {}) =>
    app.inject({
      method: 'POST',
      url: `/sandbox/stripe${url}`,
      headers: { ...auth, ...form, ...headers },
      payload: body,
    });

  before(async () => {
    app = Fastify({ logger: false });
    const store = createMemorySandboxStore({
      secretKeys: ['sk_test_shapes', 'sk_test_other', 'sk_test_someone_else'],
    });
    await app.register(stripeSandboxPlugin({ store }), {
      prefix: '/sandbox/stripe',
    });
    await app.ready();
  });
  after(() => app.close());

  test('authentication: a test secret key the sandbox issued is required; made-up and live keys are refused', async () => {
    const none = await app.inject({
      method: 'POST',
      url: '/sandbox/stripe/v1/customers',
      headers: form,
      payload: 'email=a@example.com',
    });
    assert.equal(none.statusCode, 401);
    assert.equal(none.json<{ error: { type: string } }>().error.type, 'invalid_request_error');
    const live = await post('/v1/customers', 'email=a@example.com', {
      authorization: 'Bearer sk_live_abcdefghijklmnop',
    });
    assert.equal(live.statusCode, 401);
    assert.doesNotMatch(live.body, /abcdefghijkl/);
    const madeUp = await post('/v1/customers', 'email=a@example.com', {
      authorization: 'Bearer sk_test_never_issued_9876',
    });
    assert.equal(madeUp.statusCode, 401);
    assert.deepEqual(madeUp.json(), {
      error: {
        type: 'invalid_request_error',
        code: 'invalid_api_key',
        message: 'Invalid API Key provided: sk_test_*************9876',
      },
    });
  });

  test('objects carry Stripe ids and shapes; unknown parameters and JSON bodies are 400', async () => {
    const created = await post('/v1/customers', 'email=a%40example.com&name=Ann&metadata[ref]=x');
    assert.equal(created.statusCode, 200);
    assert.ok(created.headers['request-id']?.toString().startsWith('req_'));
    const customer = created.json<Record<string, unknown>>();
    assert.match(String(customer['id']), /^cus_/);
    assert.partialDeepStrictEqual(customer, {
      object: 'customer',
      email: 'a@example.com',
      name: 'Ann',
      metadata: { ref: 'x' },
      livemode: false,
    });

    const unknown = await post('/v1/customers', 'emial=a@example.com');
    assert.equal(unknown.statusCode, 400);
    assert.partialDeepStrictEqual(unknown.json(), {
      error: { type: 'invalid_request_error', code: 'parameter_unknown', param: 'emial' },
    });

    const json = await app.inject({
      method: 'POST',
      url: '/sandbox/stripe/v1/customers',
      headers: auth,
      payload: { email: 'a@example.com' },
    });
    assert.equal(json.statusCode, 400);
    assert.equal(json.json<{ error: { type: string } }>().error.type, 'invalid_request_error');

    const missing = await app.inject({
      method: 'GET',
      url: '/sandbox/stripe/v1/payment_intents/pi_nope',
      headers: auth,
    });
    assert.equal(missing.statusCode, 404);
    assert.partialDeepStrictEqual(missing.json(), {
      error: { type: 'invalid_request_error', code: 'resource_missing' },
    });

    const route = await app.inject({ method: 'GET', url: '/sandbox/stripe/v1/balance', headers: auth });
    assert.equal(route.statusCode, 404);
    assert.match(route.json<{ error: { message: string } }>().error.message, /Unrecognized request URL/);
  });

  test('Idempotency-Key: a replay carries Idempotent-Replayed; other parameters are an idempotency_error', async () => {
    const first = await post('/v1/customers', 'email=b%40example.com', { 'idempotency-key': 'cus-b' });
    const again = await post('/v1/customers', 'email=b%40example.com', { 'idempotency-key': 'cus-b' });
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json<{ id: string }>().id, first.json<{ id: string }>().id);
    const other = await post('/v1/customers', 'email=c%40example.com', { 'idempotency-key': 'cus-b' });
    assert.equal(other.statusCode, 400);
    assert.equal(other.json<{ error: { type: string } }>().error.type, 'idempotency_error');
    // Another API key is another account: its keys are its own.
    const otherAccount = await post('/v1/customers', 'email=c%40example.com', {
      'idempotency-key': 'cus-b',
      authorization: 'Bearer sk_test_other',
    });
    assert.equal(otherAccount.statusCode, 200);
  });

  test('a declined off-session charge is a 402 card_error carrying the failed intent', async () => {
    const customer = (await post('/v1/customers', 'email=d%40example.com')).json<{ id: string }>();
    const declined = await post(
      '/v1/payment_intents',
      `amount=1500&currency=gbp&customer=${customer.id}&payment_method=pm_card_chargeDeclinedInsufficientFunds&confirm=true&off_session=true`,
    );
    assert.equal(declined.statusCode, 402);
    const { error } = declined.json<{
      error: Record<string, unknown> & { payment_intent: Record<string, unknown> };
    }>();
    assert.partialDeepStrictEqual(error, {
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'insufficient_funds',
    });
    assert.match(String(error['charge']), /^ch_/);
    assert.partialDeepStrictEqual(error.payment_intent, {
      object: 'payment_intent',
      status: 'requires_payment_method',
      last_payment_error: { code: 'card_declined', decline_code: 'insufficient_funds' },
    });

    const offSessionWithoutConfirm = await post(
      '/v1/payment_intents',
      `amount=1500&currency=gbp&customer=${customer.id}&off_session=true`,
    );
    assert.equal(offSessionWithoutConfirm.statusCode, 400);
  });

  test('a browser makes a card with a publishable key; the first secret key to attach it owns it', async () => {
    const made = await app.inject({
      method: 'POST',
      url: '/sandbox/stripe/v1/payment_methods',
      headers: { ...form, authorization: 'Bearer pk_test_browser' },
      payload: 'type=card&card[number]=4242424242424242&card[exp_month]=3&card[exp_year]=2040&card[cvc]=123',
    });
    assert.equal(made.statusCode, 200, made.body);
    assert.doesNotMatch(made.body, /4242424242424242/);
    const pm = made.json<{ id: string; card: Record<string, unknown> }>();
    assert.partialDeepStrictEqual(pm.card, { brand: 'visa', last4: '4242', exp_month: 3, exp_year: 2040 });
    // A publishable key reaches nothing else.
    const list = await app.inject({
      method: 'GET',
      url: `/sandbox/stripe/v1/payment_methods/${pm.id}`,
      headers: { authorization: 'Bearer pk_test_browser' },
    });
    assert.equal(list.statusCode, 401);

    const customer = (await post('/v1/customers', 'email=e%40example.com')).json<{ id: string }>();
    assert.equal(
      (await post(`/v1/payment_methods/${pm.id}/attach`, `customer=${customer.id}`)).statusCode,
      200,
    );
    const other = { authorization: 'Bearer sk_test_someone_else' };
    const read = await app.inject({
      method: 'GET',
      url: `/sandbox/stripe/v1/payment_methods/${pm.id}`,
      headers: other,
    });
    assert.equal(read.statusCode, 404);
    const own = await app.inject({
      method: 'GET',
      url: `/sandbox/stripe/v1/payment_methods/${pm.id}`,
      headers: auth,
    });
    assert.equal(own.json<{ customer: string }>().customer, customer.id);
  });

  test('signatures are what the stripe SDK verifies', () => {
    const payload = JSON.stringify({
      id: 'evt_1',
      object: 'event',
      type: 'payment_intent.succeeded',
      data: { object: {} },
    });
    const t = Math.floor(Date.now() / 1000);
    const header = stripeSignatureHeader(payload, 'whsec_x', t);
    assert.equal(Stripe.webhooks.signature?.verifyHeader(payload, header, 'whsec_x'), true);
    assert.equal(
      header,
      Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_x', timestamp: t }),
    );
  });
});
