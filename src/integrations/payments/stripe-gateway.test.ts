import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Stripe from 'stripe';
import { fixedClock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import { IDEMPOTENCY_METADATA_KEY, type PaymentGateway } from './gateway.ts';
import { startStripeSandbox, type RunningSandbox } from './sandbox/sandbox-server.ts';
import type { StripeSandboxOptions } from './sandbox/sandbox-plugin.ts';
import { createMemorySandboxStore } from './sandbox/store.ts';
import { createStripeGateway, type StripeGatewayOptions } from './stripe-gateway.ts';

const SECRET_KEY = 'sk_test_milepost_gateway_tests';
const WEBHOOK_SECRET = 'whsec_milepost_gateway_tests';

/** A sandbox of its own whose one account is SECRET_KEY's. */
const startSandbox = (options: StripeSandboxOptions = {}): Promise<RunningSandbox> =>
  startStripeSandbox({ store: createMemorySandboxStore({ secretKeys: [SECRET_KEY] }), ...options });

function gatewayFor(sandbox: RunningSandbox, overrides: Partial<StripeGatewayOptions> = {}): PaymentGateway {
  return createStripeGateway({
    secretKey: SECRET_KEY,
    apiBase: sandbox.apiBase,
    webhookSecret: WEBHOOK_SECRET,
    timeoutMs: 5_000,
    maxNetworkRetries: 0,
    ...overrides,
  });
}

async function rejectsWith(work: Promise<unknown>, code: string, retryable: boolean): Promise<AppError> {
  try {
    await work;
  } catch (error) {
    assert.ok(error instanceof AppError, `expected AppError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.retryable, retryable, `retryable for ${error.message}`);
    return error;
  }
  assert.fail(`expected ${code}`);
}

/** What Stripe.js does: confirm with the client secret and a publishable key, no secret key. */
async function confirmAsBrowser(
  apiBase: string,
  intentId: string,
  clientSecret: string,
  paymentMethod: string,
) {
  const response = await fetch(`${apiBase}/v1/payment_intents/${intentId}/confirm`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_secret: clientSecret,
      payment_method: paymentMethod,
      key: 'pk_test_browser',
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

let counter = 0;
const key = (what: string): string => `test:${what}:${process.pid}:${++counter}`;

async function customerWithCard(gateway: PaymentGateway, token: string) {
  const customer = await gateway.createCustomer({
    email: 'pat@example.com',
    name: 'Pat Driver',
    idempotencyKey: key('customer'),
  });
  const card = await gateway.attachPaymentMethod({
    paymentMethodId: token,
    customerId: customer.id,
    idempotencyKey: key('attach'),
  });
  return { customerId: customer.id, card };
}

const charge = (customerId: string, paymentMethodId: string, idempotencyKey: string, amountPence = 1250) => ({
  customerId,
  paymentMethodId,
  amountPence,
  currency: 'gbp',
  metadata: { statement: 'st_1' },
  idempotencyKey,
});

describe('Stripe gateway against the sandbox, through the stripe SDK', () => {
  let sandbox: RunningSandbox;
  let gateway: PaymentGateway;
  before(async () => {
    sandbox = await startSandbox();
    gateway = gatewayFor(sandbox);
  });
  after(() => sandbox.close());

  test('an intent confirmed by the browser with pm_card_visa succeeds and saves the card to the customer', async () => {
    const customer = await gateway.createCustomer({
      email: 'ann@example.com',
      name: 'Ann Driver',
      idempotencyKey: key('cus'),
    });
    assert.match(customer.id, /^cus_/);
    const created = await gateway.createPaymentIntent({
      amountPence: 4_599,
      currency: 'GBP',
      customerId: customer.id,
      metadata: { policy: 'brave-lime-otter' },
      idempotencyKey: key('pi'),
    });
    assert.equal(created.status, 'requires_payment_method');
    assert.match(created.clientSecret, new RegExp(`^${created.id}_secret_\\w+$`));

    const wrongSecret = await confirmAsBrowser(
      sandbox.apiBase,
      created.id,
      `${created.id}_secret_wrong`,
      'pm_card_visa',
    );
    assert.equal(wrongSecret.status, 400);

    const confirmed = await confirmAsBrowser(
      sandbox.apiBase,
      created.id,
      created.clientSecret,
      'pm_card_visa',
    );
    assert.equal(confirmed.status, 200);
    assert.equal(confirmed.body['status'], 'succeeded');

    const intent = await gateway.retrievePaymentIntent(created.id);
    assert.equal(intent.status, 'succeeded');
    assert.equal(intent.amountPence, 4_599);
    assert.equal(intent.amountReceivedPence, 4_599);
    assert.equal(intent.currency, 'gbp');
    assert.equal(intent.customerId, customer.id);
    assert.deepEqual(intent.metadata, { policy: 'brave-lime-otter' });
    assert.match(intent.latestChargeId ?? '', /^ch_/);
    assert.match(intent.paymentMethodId ?? '', /^pm_/);
    assert.notEqual(intent.paymentMethodId, 'pm_card_visa');

    const card = await gateway.retrievePaymentMethod(intent.paymentMethodId ?? '');
    assert.deepEqual(card, {
      id: intent.paymentMethodId,
      type: 'card',
      brand: 'visa',
      last4: '4242',
      expMonth: 12,
      expYear: 2034,
      sortCode: null,
      holderName: null,
      customerId: customer.id,
    });

    await gateway.setDefaultPaymentMethod(customer.id, card.id);
    assert.equal((await gateway.retrieveCustomer(customer.id)).defaultPaymentMethodId, card.id);

    const later = await gateway.chargeOffSession(charge(customer.id, card.id, key('charge')));
    assert.equal(later.outcome, 'succeeded');
  });

  const cards = [
    { token: 'pm_card_visa', brand: 'visa', last4: '4242', expect: { outcome: 'succeeded' } },
    { token: 'pm_card_mastercard', brand: 'mastercard', last4: '4444', expect: { outcome: 'succeeded' } },
    {
      token: 'pm_card_chargeDeclined',
      brand: 'visa',
      last4: '0002',
      expect: { outcome: 'declined', code: 'card_declined', declineCode: 'generic_decline' },
    },
    {
      token: 'pm_card_chargeDeclinedExpiredCard',
      brand: 'visa',
      last4: '0069',
      expect: { outcome: 'declined', code: 'expired_card', declineCode: 'expired_card' },
    },
    {
      token: 'pm_card_chargeDeclinedInsufficientFunds',
      brand: 'visa',
      last4: '9995',
      expect: { outcome: 'declined', code: 'card_declined', declineCode: 'insufficient_funds' },
    },
    {
      token: 'pm_card_authenticationRequired',
      brand: 'visa',
      last4: '3184',
      expect: { outcome: 'authentication_required' },
    },
  ];
  for (const { token, brand, last4, expect } of cards) {
    test(`chargeOffSession with ${token}: ${expect.outcome}`, async () => {
      const { customerId, card } = await customerWithCard(gateway, token);
      assert.match(card.id, /^pm_(?!card_)/);
      assert.equal(card.customerId, customerId);
      assert.equal(card.brand, brand);
      assert.equal(card.last4, last4);

      const result = await gateway.chargeOffSession(charge(customerId, card.id, key('charge')));
      assert.partialDeepStrictEqual(result, expect);
      if (result.outcome === 'unknown') assert.fail(result.message);
      assert.match(result.intentId ?? '', /^pi_/);
      const intent = await gateway.retrievePaymentIntent(result.intentId ?? '');
      if (result.outcome === 'succeeded') {
        assert.equal(intent.status, 'succeeded');
        assert.equal(result.chargeId, intent.latestChargeId);
      } else {
        assert.equal(intent.status, 'requires_payment_method');
        assert.equal(
          intent.lastPaymentError?.code,
          'code' in result ? result.code : 'authentication_required',
        );
      }
      if (result.outcome === 'authentication_required') {
        // Back on session: the customer authenticates (the sandbox's stand-in: confirm twice).
        const clientSecret = result.clientSecret ?? '';
        const first = await confirmAsBrowser(sandbox.apiBase, result.intentId, clientSecret, card.id);
        assert.equal(first.body['status'], 'requires_action');
        const second = await confirmAsBrowser(sandbox.apiBase, result.intentId, clientSecret, card.id);
        assert.equal(second.body['status'], 'succeeded');
      }
    });
  }

  test('the same idempotency key twice charges once; with another amount it is refused', async () => {
    const { customerId, card } = await customerWithCard(gateway, 'pm_card_visa');
    const idempotencyKey = key('charge-once');
    const first = await gateway.chargeOffSession(charge(customerId, card.id, idempotencyKey));
    const second = await gateway.chargeOffSession(charge(customerId, card.id, idempotencyKey));
    assert.equal(first.outcome, 'succeeded');
    assert.deepEqual(second, first);
    const intents = await sandbox.store.count('payment_intent', {
      metadata: { [IDEMPOTENCY_METADATA_KEY]: idempotencyKey },
    });
    assert.equal(intents, 1);

    await rejectsWith(
      gateway.chargeOffSession(charge(customerId, card.id, idempotencyKey, 9_999)),
      'CONFLICT',
      false,
    );
    assert.equal(await sandbox.store.count('payment_intent', { customer: customerId }), 1);

    // A declined attempt is remembered too: replaying it declines again without a second attempt.
    const declined = await customerWithCard(gateway, 'pm_card_chargeDeclinedInsufficientFunds');
    const declineKey = key('declined');
    const d1 = await gateway.chargeOffSession(charge(declined.customerId, declined.card.id, declineKey));
    const d2 = await gateway.chargeOffSession(charge(declined.customerId, declined.card.id, declineKey));
    assert.equal(d1.outcome, 'declined');
    assert.deepEqual(d2, d1);
    assert.equal(await sandbox.store.count('charge', { customer: declined.customerId }), 1);
  });

  test('refunds add up to the amount paid and never beyond', async () => {
    const { customerId, card } = await customerWithCard(gateway, 'pm_card_visa');
    const paid = await gateway.chargeOffSession(charge(customerId, card.id, key('paid'), 1_000));
    assert.equal(paid.outcome, 'succeeded');
    const intentId = paid.intentId;

    const refundKey = key('refund');
    const first = await gateway.refund({
      paymentIntentId: intentId,
      amountPence: 300,
      idempotencyKey: refundKey,
      metadata: { reason: 'mta' },
    });
    assert.match(first.id, /^re_/);
    assert.deepEqual(
      { status: first.status, amountPence: first.amountPence },
      { status: 'succeeded', amountPence: 300 },
    );
    assert.deepEqual(
      await gateway.refund({
        paymentIntentId: intentId,
        amountPence: 300,
        idempotencyKey: refundKey,
        metadata: { reason: 'mta' },
      }),
      first,
    );

    await rejectsWith(
      gateway.refund({ paymentIntentId: intentId, amountPence: 701, idempotencyKey: key('too-much') }),
      'VALIDATION_FAILED',
      false,
    );
    const rest = await gateway.refund({ paymentIntentId: intentId, idempotencyKey: key('rest') });
    assert.equal(rest.amountPence, 700);
    await rejectsWith(
      gateway.refund({ paymentIntentId: intentId, amountPence: 1, idempotencyKey: key('more') }),
      'VALIDATION_FAILED',
      false,
    );

    const refunds = await sandbox.store.find('refund', { payment_intent: intentId });
    assert.deepEqual(refunds.map((r) => r['amount']).sort(), [300, 700]);

    const declined = await customerWithCard(gateway, 'pm_card_chargeDeclined');
    const failed = await gateway.chargeOffSession(
      charge(declined.customerId, declined.card.id, key('failed')),
    );
    assert.equal(failed.outcome, 'declined');
    await rejectsWith(
      gateway.refund({ paymentIntentId: failed.intentId ?? '', idempotencyKey: key('refund-failed') }),
      'VALIDATION_FAILED',
      false,
    );
  });

  test('missing objects are NOT_FOUND; invalid requests are VALIDATION_FAILED; neither is retryable', async () => {
    await rejectsWith(gateway.retrievePaymentIntent('pi_doesnotexist'), 'NOT_FOUND', false);
    await rejectsWith(gateway.retrievePaymentMethod('pm_doesnotexist'), 'NOT_FOUND', false);
    await rejectsWith(
      gateway.chargeOffSession(charge('cus_doesnotexist', 'pm_card_visa', key('nobody'))),
      'NOT_FOUND',
      false,
    );
    const customer = await gateway.createCustomer({
      email: 'tiny@example.com',
      name: 'Tiny Amount',
      idempotencyKey: key('cus'),
    });
    // Stripe's minimum charge in GBP is 30p.
    await rejectsWith(
      gateway.createPaymentIntent({
        amountPence: 29,
        currency: 'gbp',
        customerId: customer.id,
        metadata: {},
        idempotencyKey: key('pi'),
      }),
      'VALIDATION_FAILED',
      false,
    );
    assert.equal(await gateway.findPaymentIntentByKey('never-used'), undefined);
  });

  test('an intent waiting for 3-D Secure is canceled and completes no more; a paid one is not canceled', async () => {
    const customer = await gateway.createCustomer({
      email: 'left@example.com',
      name: 'Left Tab',
      idempotencyKey: key('cus'),
    });
    const intent = () =>
      gateway.createPaymentIntent({
        amountPence: 4_599,
        currency: 'GBP',
        customerId: customer.id,
        metadata: {},
        idempotencyKey: key('pi'),
      });
    const waiting = await intent();
    const asked = await confirmAsBrowser(
      sandbox.apiBase,
      waiting.id,
      waiting.clientSecret,
      'pm_card_authenticationRequired',
    );
    assert.equal(asked.body['status'], 'requires_action');
    const cancelKey = key('cancel');
    const canceled = await gateway.cancelPaymentIntent({
      paymentIntentId: waiting.id,
      idempotencyKey: cancelKey,
    });
    assert.equal(canceled.status, 'canceled');
    assert.deepEqual(
      await gateway.cancelPaymentIntent({ paymentIntentId: waiting.id, idempotencyKey: cancelKey }),
      canceled,
      'the same key answers as before',
    );
    const late = await confirmAsBrowser(sandbox.apiBase, waiting.id, waiting.clientSecret, 'pm_card_visa');
    assert.equal(late.status, 400);
    assert.equal((await gateway.retrievePaymentIntent(waiting.id)).status, 'canceled');

    const paid = await intent();
    await confirmAsBrowser(sandbox.apiBase, paid.id, paid.clientSecret, 'pm_card_visa');
    await rejectsWith(
      gateway.cancelPaymentIntent({ paymentIntentId: paid.id, idempotencyKey: key('cancel') }),
      'VALIDATION_FAILED',
      false,
    );
    assert.equal((await gateway.retrievePaymentIntent(paid.id)).status, 'succeeded');
  });
});

describe('ambiguous failures: timeouts, 5xx, rate limits', () => {
  const sandboxes: RunningSandbox[] = [];
  const start = async (options: StripeSandboxOptions) => {
    const sandbox = await startSandbox(options);
    sandboxes.push(sandbox);
    return sandbox;
  };
  after(async () => {
    await Promise.all(sandboxes.map((s) => s.close()));
  });

  test('a timeout is `unknown`; replaying the same key reconciles to the one charge, never a second', async () => {
    const sandbox = await start({ latencyMs: 400 });
    const gateway = gatewayFor(sandbox, { timeoutMs: 150, maxNetworkRetries: 0 });
    const patient = gatewayFor(sandbox, { timeoutMs: 5_000 });
    const { customerId, card } = await customerWithCard(patient, 'pm_card_visa');
    const input = charge(customerId, card.id, key('timeout'));

    const first = await gateway.chargeOffSession(input);
    assert.equal(first.outcome, 'unknown');

    // While the first request is still running the key is in use (409): still unknown, still no second charge.
    let result = await gateway.chargeOffSession(input);
    for (let i = 0; result.outcome === 'unknown' && i < 40; i++) {
      await sleep(50);
      result = await gateway.chargeOffSession(input);
    }
    assert.equal(result.outcome, 'succeeded');
    const intentId = result.intentId;

    const found = await patient.findPaymentIntentByKey(input.idempotencyKey);
    assert.equal(found?.id, intentId);
    assert.equal(found.status, 'succeeded');
    assert.equal(found.idempotencyKey, input.idempotencyKey);
    assert.equal(await sandbox.store.count('payment_intent', { customer: customerId }), 1);
    assert.equal(await sandbox.store.count('charge', { customer: customerId }), 1);
  });

  test('an injected 500 is `unknown` for a charge and a retryable UPSTREAM_UNAVAILABLE elsewhere', async () => {
    const sandbox = await start({ failureRate: 1 });
    const gateway = gatewayFor(sandbox);
    const result = await gateway.chargeOffSession(charge('cus_any', 'pm_card_visa', key('five-hundred')));
    assert.equal(result.outcome, 'unknown');
    await rejectsWith(
      gateway.createCustomer({ email: 'x@example.com', name: 'X', idempotencyKey: key('cus') }),
      'UPSTREAM_UNAVAILABLE',
      true,
    );
    assert.equal(await sandbox.store.count('payment_intent'), 0);
  });

  test('over the rate limit the sandbox answers 429 and the adapter marks it retryable', async () => {
    const sandbox = await start({ rateLimitPerSecond: 2 });
    const gateway = gatewayFor(sandbox);
    const { customerId, card } = await customerWithCard(gateway, 'pm_card_visa');
    const limited = await rejectsWith(
      gateway.chargeOffSession(charge(customerId, card.id, key('limited'))),
      'UPSTREAM_UNAVAILABLE',
      true,
    );
    assert.equal(limited.retryAfterSeconds, 1);
    await rejectsWith(gateway.retrieveCustomer(customerId), 'UPSTREAM_UNAVAILABLE', true);
    const response = await fetch(`${sandbox.apiBase}/v1/customers/${customerId}`, {
      headers: { authorization: `Bearer ${SECRET_KEY}` },
    });
    assert.equal(response.status, 429);
    assert.deepEqual(((await response.json()) as { error: { code: string } }).error.code, 'rate_limit');
    // A second later the same key goes through, once.
    await sleep(1_050);
    const later = await gateway.chargeOffSession(charge(customerId, card.id, key('limited-later')));
    assert.equal(later.outcome, 'succeeded');
  });
});

describe('webhooks', () => {
  interface Delivery {
    readonly body: string;
    readonly signature: string | undefined;
  }
  const deliveries: Delivery[] = [];
  let failNext = 0;
  let waiting: (() => void) | undefined;
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (failNext > 0) {
        failNext -= 1;
        res.writeHead(500).end();
        return;
      }
      const signature = req.headers['stripe-signature'];
      deliveries.push({
        body: Buffer.concat(chunks).toString('utf8'),
        signature: typeof signature === 'string' ? signature : undefined,
      });
      res.writeHead(200).end();
      waiting?.();
    });
  });
  const deliveryOf = async (type: string): Promise<Delivery> => {
    for (let i = 0; i < 100; i++) {
      const found = deliveries.find((d) => (JSON.parse(d.body) as { type: string }).type === type);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => {
        waiting = resolve;
        setTimeout(resolve, 50);
      });
    }
    assert.fail(`no ${type} delivery`);
  };

  let sandbox: RunningSandbox;
  let gateway: PaymentGateway;
  before(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as { port: number };
    sandbox = await startSandbox({
      webhook: { url: `http://127.0.0.1:${port}/webhooks/stripe`, secret: WEBHOOK_SECRET },
      webhookRetryDelaysMs: [50, 50],
    });
    gateway = gatewayFor(sandbox);
  });
  after(async () => {
    await sandbox.close();
    await new Promise((resolve) => receiver.close(resolve));
  });

  test('events arrive signed as Stripe signs them; the adapter verifies them and refuses a tampered body', async () => {
    failNext = 1; // the first attempt fails and is retried
    const { customerId, card } = await customerWithCard(gateway, 'pm_card_visa');
    const paid = await gateway.chargeOffSession(charge(customerId, card.id, key('hooked'), 2_000));
    assert.equal(paid.outcome, 'succeeded');

    const succeeded = await deliveryOf('payment_intent.succeeded');
    assert.match(succeeded.signature ?? '', /^t=\d+,v1=[0-9a-f]{64}$/);
    const event = gateway.constructWebhookEvent(succeeded.body, succeeded.signature);
    assert.equal(event.kind, 'payment_intent');
    assert.match(event.id, /^evt_/);
    assert.equal(event.type, 'payment_intent.succeeded');
    assert.equal(event.paymentIntent.id, paid.intentId);
    assert.equal(event.paymentIntent.status, 'succeeded');
    assert.equal(event.paymentIntent.metadata['statement'], 'st_1');

    const tampered = succeeded.body.replace('"amount": 2000', '"amount": 1');
    assert.notEqual(tampered, succeeded.body);
    assert.throws(
      () => gateway.constructWebhookEvent(tampered, succeeded.signature),
      (e) => e instanceof AppError && e.code === 'UNAUTHENTICATED',
    );
    assert.throws(
      () => gateway.constructWebhookEvent(succeeded.body, undefined),
      (e) => e instanceof AppError && e.code === 'UNAUTHENTICATED',
    );
    const otherSecret = createStripeGateway({
      secretKey: SECRET_KEY,
      apiBase: sandbox.apiBase,
      webhookSecret: 'whsec_other',
      timeoutMs: 1_000,
      maxNetworkRetries: 0,
    });
    assert.throws(
      () => otherSecret.constructWebhookEvent(succeeded.body, succeeded.signature),
      (e) => e instanceof AppError && e.code === 'UNAUTHENTICATED',
    );
  });

  test('a signature older than the tolerance (300 s) is refused, measured on the gateway’s clock', () => {
    const payload = JSON.stringify({
      id: 'evt_tolerance',
      object: 'event',
      type: 'customer.created',
      created: 1_800_000_000,
      data: { object: { id: 'cus_1', object: 'customer' } },
    });
    const signedAt = 1_800_000_000;
    const header = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: WEBHOOK_SECRET,
      timestamp: signedAt,
    });
    const receivedAfter = (seconds: number) =>
      createStripeGateway({
        secretKey: SECRET_KEY,
        webhookSecret: WEBHOOK_SECRET,
        timeoutMs: 1_000,
        maxNetworkRetries: 0,
        clock: fixedClock(new Date((signedAt + seconds) * 1000)),
      });
    assert.equal(receivedAfter(300).constructWebhookEvent(payload, header).id, 'evt_tolerance');
    assert.throws(
      () => receivedAfter(301).constructWebhookEvent(payload, header),
      (e) => e instanceof AppError && e.code === 'UNAUTHENTICATED' && /tolerance/.test(e.message),
    );
    assert.throws(
      () => receivedAfter(86_400).constructWebhookEvent(payload, header),
      (e) => e instanceof AppError && e.code === 'UNAUTHENTICATED',
    );
  });

  test('a decline sends payment_intent.payment_failed and a refund sends charge.refunded', async () => {
    const declined = await customerWithCard(gateway, 'pm_card_chargeDeclinedInsufficientFunds');
    const failed = await gateway.chargeOffSession(
      charge(declined.customerId, declined.card.id, key('hook-decline')),
    );
    assert.equal(failed.outcome, 'declined');
    const failedDelivery = await deliveryOf('payment_intent.payment_failed');
    const failure = gateway.constructWebhookEvent(failedDelivery.body, failedDelivery.signature);
    assert.equal(failure.kind, 'payment_intent');
    assert.equal(failure.paymentIntent.lastPaymentError?.declineCode, 'insufficient_funds');

    const { customerId, card } = await customerWithCard(gateway, 'pm_card_visa');
    const paid = await gateway.chargeOffSession(charge(customerId, card.id, key('hook-refund'), 900));
    assert.equal(paid.outcome, 'succeeded');
    await gateway.refund({
      paymentIntentId: paid.intentId,
      amountPence: 400,
      idempotencyKey: key('hook-refund'),
    });
    const refunded = await deliveryOf('charge.refunded');
    const event = gateway.constructWebhookEvent(Buffer.from(refunded.body), refunded.signature);
    assert.equal(event.kind, 'charge');
    assert.deepEqual(
      {
        amount: event.charge.amountPence,
        refunded: event.charge.amountRefundedPence,
        full: event.charge.refunded,
      },
      { amount: 900, refunded: 400, full: false },
    );
  });
});
