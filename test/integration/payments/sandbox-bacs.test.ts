import assert from 'node:assert/strict';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import {
  createKyselySandboxStore,
  createStripeGateway,
  type CollectionResult,
  type Mandate,
  type PaymentEvent,
  type PaymentGateway,
} from '../../../src/integrations/payments/index.ts';
import {
  startStripeSandbox,
  type RunningSandbox,
} from '../../../src/integrations/payments/sandbox/sandbox-server.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import type { DatabaseHandle } from '../../../src/platform/db/database.ts';
import { AppError } from '../../../src/platform/errors.ts';
import type { Database } from '../../../src/schema.ts';
import { createTestDatabase } from '../../support/database.ts';
import { stripeAt } from '../../support/stripe-sdk.ts';

/**
 * Bacs Direct Debit in the built-in sandbox, through the official `stripe` SDK (the gateway, and the
 * SDK itself for test clocks), on the sandbox's database store: SetupIntents and mandates with
 * Stripe's test bank accounts, collections that stay `processing` until their settlement day, each
 * outcome's webhook events, test clocks, and one account's objects hidden from another's key.
 */
const KEY_A = 'sk_test_bacs_account_a';
const KEY_B = 'sk_test_bacs_account_b';
const WEBHOOK_SECRET = 'whsec_bacs_tests';
// Wednesday 23 December 2026, 10:00 UTC: the three working days after it are 24, 29 and 30 December.
const START = '2026-12-23T10:00:00Z';

const clock = fixedClock(START);
let database: DatabaseHandle<Database>;
let sandbox: RunningSandbox;
let gateway: PaymentGateway;
let gatewayB: PaymentGateway;

const events: PaymentEvent[] = [];
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      const signature = req.headers['stripe-signature'];
      events.push(
        gateway.constructWebhookEvent(
          Buffer.concat(chunks),
          typeof signature === 'string' ? signature : undefined,
        ),
      );
    } catch {
      // NOTE: the sandbox signs at delivery on the test's clock: an event left in flight across a
      // clock move would be out of tolerance, so each test waits for its events before moving it.
      res.writeHead(400).end();
      return;
    }
    res.writeHead(200).end();
  });
});

/** The events of one object (an intent, a mandate, a setup intent) in the order they came, once `count` have. */
async function eventsOf(id: string, count: number): Promise<PaymentEvent[]> {
  const of = () =>
    events.filter(
      (e) =>
        (e.kind === 'payment_intent' && e.paymentIntent.id === id) ||
        (e.kind === 'mandate' && e.mandate.id === id) ||
        (e.kind === 'setup_intent' && e.setupIntent.id === id) ||
        (e.kind === 'charge' && e.charge.paymentIntentId === id) ||
        (e.kind === 'dispute' && e.dispute.paymentIntentId === id),
    );
  for (let i = 0; i < 100 && of().length < count; i++) await sleep(20);
  return of();
}

const typesOf = (list: PaymentEvent[]) => list.map((e) => e.type);

/** The mandate as the first `mandate.updated` about it tells it. */
async function mandateUpdate(mandateId: string): Promise<Mandate> {
  const [event] = await eventsOf(mandateId, 1);
  if (event?.kind !== 'mandate') assert.fail(`no mandate event for ${mandateId}`);
  assert.equal(event.type, 'mandate.updated');
  return event.mandate;
}

function processingId(result: CollectionResult): string {
  if (result.outcome !== 'processing') assert.fail(`expected processing, got ${JSON.stringify(result)}`);
  return result.intentId;
}

function gatewayWith(secretKey: string): PaymentGateway {
  return createStripeGateway({
    secretKey,
    apiBase: sandbox.apiBase,
    webhookSecret: WEBHOOK_SECRET,
    timeoutMs: 5_000,
    maxNetworkRetries: 0,
    clock,
  });
}

/** A form-encoded call as a browser (publishable key) or a test (secret key) makes it. */
async function call(path: string, form: Record<string, string>, secretKey?: string) {
  const response = await fetch(`${sandbox.apiBase}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(secretKey === undefined ? {} : { authorization: `Bearer ${secretKey}` }),
    },
    body: new URLSearchParams(form),
  });
  return {
    status: response.status,
    body: (await response.json()) as { error: { code?: string; param?: string } } & Record<string, unknown>,
  };
}

let counter = 0;
const key = (what: string): string => `bacs:${what}:${process.pid}:${++counter}`;

/** The Direct Debit form as the web app sends it: bank details, the payer's details, and acceptance of the mandate. */
function bankDetails(clientSecret: string, accountNumber: string): Record<string, string> {
  return {
    client_secret: clientSecret,
    key: 'pk_test_browser',
    'payment_method_data[type]': 'bacs_debit',
    'payment_method_data[bacs_debit][sort_code]': '10-88-00',
    'payment_method_data[bacs_debit][account_number]': accountNumber,
    'payment_method_data[billing_details][name]': 'Pat Driver',
    'payment_method_data[billing_details][email]': 'pat@example.com',
    'payment_method_data[billing_details][address][line1]': '1 High Street',
    'payment_method_data[billing_details][address][city]': 'Leeds',
    'payment_method_data[billing_details][address][postal_code]': 'LS1 1AA',
    'payment_method_data[billing_details][address][country]': 'GB',
    'mandate_data[customer_acceptance][type]': 'online',
    'mandate_data[customer_acceptance][online][infer_from_client]': 'true',
  };
}

/** A customer with a confirmed Bacs mandate on `accountNumber`. */
async function mandated(accountNumber: string, on: PaymentGateway = gateway, testClock?: string) {
  const customerId =
    testClock === undefined
      ? (
          await on.createCustomer({
            email: 'pat@example.com',
            name: 'Pat Driver',
            idempotencyKey: key('cus'),
          })
        ).id
      : (
          await stripeAt(sandbox.apiBase, KEY_A).customers.create({
            email: 'pat@example.com',
            test_clock: testClock,
          })
        ).id;
  const setup = await on.createBacsSetupIntent({
    customerId,
    metadata: { policy: 'brave-lime-otter' },
    idempotencyKey: key('seti'),
  });
  const confirmed = await call(
    `/v1/setup_intents/${setup.id}/confirm`,
    bankDetails(setup.clientSecret, accountNumber),
  );
  assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
  const intent = await on.retrieveSetupIntent(setup.id);
  return {
    customerId,
    setupIntentId: setup.id,
    paymentMethodId: intent.paymentMethodId!,
    mandateId: intent.mandateId!,
  };
}

/** Asks for a collection of £42.50 and, when it is processing, waits for its `payment_intent.processing`. */
async function collect(
  m: { customerId: string; paymentMethodId: string; mandateId: string },
  idempotencyKey = key('dd'),
) {
  const result = await gateway.collectDirectDebit({
    ...m,
    amountPence: 4_250,
    metadata: { statement: 'st_1' },
    idempotencyKey,
  });
  if (result.outcome === 'processing') await eventsOf(result.intentId, 1);
  return result;
}

const settleDue = async (secretKey = KEY_A) =>
  (await call('/v1/test_helpers/sandbox/settle_due_payments', {}, secretKey)).body;

before(async () => {
  database = await createTestDatabase();
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as { port: number };
  sandbox = await startStripeSandbox({
    store: createKyselySandboxStore(database.db, {
      isIssuedKey: async (k) => k === KEY_A || k === KEY_B,
    }),
    clock,
    webhook: { url: `http://127.0.0.1:${port}/webhooks/stripe`, secret: WEBHOOK_SECRET },
  });
  gateway = gatewayWith(KEY_A);
  gatewayB = gatewayWith(KEY_B);
});
after(async () => {
  await sandbox.close();
  await new Promise((resolve) => receiver.close(resolve));
  await database.close();
});

describe('mandates', () => {
  test('a SetupIntent confirmed by the browser saves the bank account and makes an active mandate', async () => {
    const m = await mandated('00012345');
    const setup = await gateway.retrieveSetupIntent(m.setupIntentId);
    assert.equal(setup.status, 'succeeded');
    assert.deepEqual(setup.metadata, { policy: 'brave-lime-otter' });
    const pm = await gateway.retrievePaymentMethod(m.paymentMethodId);
    assert.deepEqual(pm, {
      id: m.paymentMethodId,
      type: 'bacs_debit',
      brand: null,
      last4: '2345',
      expMonth: null,
      expYear: null,
      sortCode: '108800',
      holderName: 'Pat Driver',
      customerId: m.customerId,
    });
    const mandate = await gateway.retrieveMandate(m.mandateId);
    assert.equal(mandate.status, 'active');
    assert.equal(mandate.networkStatus, 'accepted');
    assert.equal(mandate.paymentMethodId, m.paymentMethodId);
    assert.match(mandate.reference ?? '', /^[A-Z0-9]{1,18}$/);
    assert.deepEqual(mandate.acceptedAt, new Date(START));
    assert.deepEqual(typesOf(await eventsOf(m.setupIntentId, 1)), ['setup_intent.succeeded']);
  });

  test("a mandate the payer's bank refuses (00033333) is inactive at once, announced by mandate.updated", async () => {
    const m = await mandated('00033333');
    const mandate = await gateway.retrieveMandate(m.mandateId);
    assert.equal(mandate.status, 'inactive');
    assert.equal(mandate.networkStatus, 'refused');
    assert.equal((await mandateUpdate(m.mandateId)).status, 'inactive');
    const refused = await collect(m);
    assert.deepEqual(refused.outcome === 'failed' && refused.code, 'payment_intent_mandate_invalid');
  });

  test('an invalid account (00044444), a number that is not a test account, and missing details are refused', async () => {
    const customer = await gateway.createCustomer({
      email: 'a@example.com',
      name: 'A',
      idempotencyKey: key('cus'),
    });
    const setup = await gateway.createBacsSetupIntent({
      customerId: customer.id,
      metadata: {},
      idempotencyKey: key('seti'),
    });
    const invalid = await call(
      `/v1/setup_intents/${setup.id}/confirm`,
      bankDetails(setup.clientSecret, '00044444'),
    );
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body['error'].code, 'account_number_invalid');
    const failed = await gateway.retrieveSetupIntent(setup.id);
    assert.equal(failed.status, 'requires_payment_method');
    assert.equal(failed.lastSetupError?.code, 'account_number_invalid');
    assert.deepEqual(typesOf(await eventsOf(setup.id, 1)), ['setup_intent.setup_failed']);

    const real = await call(`/v1/setup_intents/${setup.id}/confirm`, {
      ...bankDetails(setup.clientSecret, '31926819'),
      'payment_method_data[bacs_debit][sort_code]': '200000',
    });
    assert.equal(real.body['error'].code, 'payment_method_invalid_parameter_testmode');
    const noAcceptance = bankDetails(setup.clientSecret, '00012345');
    delete noAcceptance['mandate_data[customer_acceptance][type]'];
    delete noAcceptance['mandate_data[customer_acceptance][online][infer_from_client]'];
    const unaccepted = await call(`/v1/setup_intents/${setup.id}/confirm`, noAcceptance);
    assert.equal(unaccepted.status, 400);
    assert.equal(unaccepted.body['error'].param, 'mandate_data[customer_acceptance]');
    const noAddress = bankDetails(setup.clientSecret, '00012345');
    delete noAddress['payment_method_data[billing_details][address][postal_code]'];
    const unaddressed = await call(`/v1/setup_intents/${setup.id}/confirm`, noAddress);
    assert.equal(
      unaddressed.body['error'].param,
      'payment_method_data[billing_details][address][postal_code]',
    );
    const wrongSecret = await call(
      `/v1/setup_intents/${setup.id}/confirm`,
      bankDetails('seti_x_secret_y', '00012345'),
    );
    assert.equal(wrongSecret.status, 400);
    assert.equal((await gateway.retrieveSetupIntent(setup.id)).status, 'requires_payment_method');
  });
});

describe('collections', () => {
  test('a collection is processing until its settlement day (three working days, over Christmas), then succeeds', async () => {
    clock.set(START);
    const m = await mandated('00012345');
    const result = await collect(m);
    const intentId = processingId(result);
    const processing = await gateway.retrievePaymentIntent(intentId);
    assert.equal(processing.status, 'processing');
    assert.equal(processing.paymentMethodType, 'bacs_debit');
    assert.equal(processing.amountReceivedPence, 0);

    clock.set('2026-12-29T23:59:59Z'); // the second working day after: not yet
    assert.deepEqual((await settleDue())['data'], []);
    assert.equal((await gateway.retrievePaymentIntent(intentId)).status, 'processing');
    clock.set('2026-12-30T00:00:00Z'); // Wednesday 30 December: the third working day
    const settled = (await settleDue())['data'] as { id: string }[];
    assert.ok(settled.some((pi) => pi.id === intentId));
    const succeeded = await gateway.retrievePaymentIntent(intentId);
    assert.equal(succeeded.status, 'succeeded');
    assert.equal(succeeded.amountReceivedPence, 4_250);
    assert.deepEqual(typesOf(await eventsOf(intentId, 3)), [
      'payment_intent.processing',
      'charge.succeeded',
      'payment_intent.succeeded',
    ]);
    // Settling again does nothing: each payment settles once.
    assert.deepEqual((await settleDue())['data'], []);

    // A Direct Debit payment is refunded through the processor, to the payer's bank account.
    const refund = await gateway.refund({
      paymentIntentId: intentId,
      amountPence: 1_000,
      idempotencyKey: key('re'),
    });
    assert.equal(refund.status, 'succeeded');
    assert.equal(refund.amountPence, 1_000);
    const refunded = (await eventsOf(intentId, 4)).at(-1);
    assert.equal(refunded?.kind === 'charge' && refunded.charge.amountRefundedPence, 1_000);
  });

  test('the same idempotency key collects once', async () => {
    clock.set(START);
    const m = await mandated('00012345');
    const idempotencyKey = key('once');
    const first = await collect(m, idempotencyKey);
    const again = await collect(m, idempotencyKey);
    assert.deepEqual(again, first);
    assert.equal(
      first.outcome === 'processing' && (await gateway.findPaymentIntentByKey(idempotencyKey))?.id,
      first.intentId,
    );
  });

  for (const [account, code, mandateAfter] of [
    ['22222227', 'insufficient_funds', 'active'],
    ['92222227', 'insufficient_funds', 'active'],
    ['33333335', 'debit_not_authorized', 'inactive'],
    ['93333335', 'debit_not_authorized', 'inactive'],
    ['34343434', 'charge_exceeds_source_limit', 'active'],
    ['12121212', 'charge_exceeds_weekly_limit', 'active'],
  ] as const) {
    test(`test account ${account} fails at settlement with ${code}; the mandate is then ${mandateAfter}`, async () => {
      clock.set(START);
      const m = await mandated(account);
      const result = await collect(m);
      const intentId = processingId(result);
      clock.set('2026-12-30T00:00:00Z');
      await settleDue();
      const failed = await gateway.retrievePaymentIntent(intentId);
      assert.equal(failed.status, 'requires_payment_method');
      assert.equal(failed.lastPaymentError?.code, code);
      assert.equal(failed.amountReceivedPence, 0);
      assert.deepEqual(typesOf(await eventsOf(intentId, 3)), [
        'payment_intent.processing',
        'charge.failed',
        'payment_intent.payment_failed',
      ]);
      const mandate = await gateway.retrieveMandate(m.mandateId);
      assert.equal(mandate.status, mandateAfter);
      if (mandateAfter === 'inactive') {
        assert.equal(mandate.revocationReason, code);
        assert.equal((await mandateUpdate(m.mandateId)).status, 'inactive');
      }
      // A failed collection can be refunded no more than it was paid.
      await assert.rejects(
        gateway.refund({ paymentIntentId: intentId, idempotencyKey: key('re') }),
        (error: unknown) => error instanceof AppError && error.code === 'VALIDATION_FAILED',
      );
    });
  }

  test('test account 55555559 succeeds, then the payer claims under the Guarantee: disputed, not refundable', async () => {
    clock.set(START);
    const m = await mandated('55555559');
    const result = await collect(m);
    const intentId = processingId(result);
    clock.set('2026-12-30T00:00:00Z');
    await settleDue();
    assert.equal((await gateway.retrievePaymentIntent(intentId)).status, 'succeeded');
    const claimed = (await eventsOf(intentId, 4)).find((e) => e.kind === 'dispute');
    if (claimed?.kind !== 'dispute') assert.fail('no dispute event');
    assert.equal(claimed.type, 'charge.dispute.created');
    assert.deepEqual(
      [claimed.dispute.amountPence, claimed.dispute.reason, claimed.dispute.status],
      [4_250, 'debit_not_authorized', 'lost'],
    );
    await assert.rejects(
      gateway.refund({ paymentIntentId: intentId, idempotencyKey: key('re') }),
      (error: unknown) => error instanceof AppError && /disputed/.test(error.message),
    );
  });

  test('a mandate the bank cancels (test helper) sends mandate.updated; its pending collection fails, the next is refused', async () => {
    clock.set(START);
    const m = await mandated('00012345');
    const pending = await collect(m);
    const intentId = processingId(pending);
    const revoked = await call(
      `/v1/test_helpers/sandbox/mandates/${m.mandateId}/revoke`,
      { revocation_reason: 'account_closed' },
      KEY_A,
    );
    assert.equal(revoked.status, 200);
    assert.equal((await mandateUpdate(m.mandateId)).revocationReason, 'account_closed');
    clock.set('2026-12-30T00:00:00Z');
    await settleDue();
    assert.equal(
      (await gateway.retrievePaymentIntent(intentId)).lastPaymentError?.code,
      'debit_not_authorized',
    );
    const next = await collect(m);
    assert.deepEqual(next.outcome === 'failed' && [next.code, next.intentId], [
      'payment_intent_mandate_invalid',
      undefined,
    ]);
    const again = await call(`/v1/test_helpers/sandbox/mandates/${m.mandateId}/revoke`, {}, KEY_A);
    assert.equal(again.status, 400);
  });

  test("Stripe's test clocks: a clock's customers settle when it is advanced, not by the sandbox's clock", async () => {
    clock.set(START);
    const stripe = stripeAt(sandbox.apiBase, KEY_A);
    const testClock = await stripe.testHelpers.testClocks.create({
      frozen_time: Date.parse('2027-03-26T09:00:00Z') / 1000,
    });
    const m = await mandated('00012345', gateway, testClock.id);
    const result = await collect(m);
    const intentId = processingId(result);
    clock.set('2030-01-01T00:00:00Z');
    await settleDue();
    assert.equal((await gateway.retrievePaymentIntent(intentId)).status, 'processing');
    // Friday 26 March 2027 is Good Friday: submitted Monday 29th is Easter Monday, so Tuesday 30th;
    // settled the third working day after, Friday 2 April.
    await stripe.testHelpers.testClocks.advance(testClock.id, {
      frozen_time: Date.parse('2027-04-01T22:59:59Z') / 1000,
    });
    assert.equal((await gateway.retrievePaymentIntent(intentId)).status, 'processing');
    const advanced = await stripe.testHelpers.testClocks.advance(testClock.id, {
      frozen_time: Date.parse('2027-04-01T23:00:00Z') / 1000, // 00:00 on 2 April, London summer time
    });
    assert.equal(advanced.status, 'ready');
    assert.equal((await gateway.retrievePaymentIntent(intentId)).status, 'succeeded');
    await assert.rejects(
      stripe.testHelpers.testClocks.advance(testClock.id, {
        frozen_time: Date.parse('2027-01-01T00:00:00Z') / 1000,
      }),
      /after its current frozen_time/,
    );
  });
});

describe('isolation', () => {
  test("another account's key sees none of a mandate, setup intent or collection, and settles none of them", async () => {
    clock.set(START);
    const m = await mandated('00012345');
    const result = await collect(m);
    const intentId = processingId(result);
    const notFound = (error: unknown) => error instanceof AppError && error.code === 'NOT_FOUND';
    await assert.rejects(gatewayB.retrieveMandate(m.mandateId), notFound);
    await assert.rejects(gatewayB.retrieveSetupIntent(m.setupIntentId), notFound);
    await assert.rejects(gatewayB.retrievePaymentIntent(intentId), notFound);
    await assert.rejects(gatewayB.retrievePaymentMethod(m.paymentMethodId), notFound);
    const other = await gatewayB.createCustomer({
      email: 'b@example.com',
      name: 'B',
      idempotencyKey: key('cus'),
    });
    await assert.rejects(
      gatewayB.collectDirectDebit({
        customerId: other.id,
        paymentMethodId: m.paymentMethodId,
        mandateId: m.mandateId,
        amountPence: 100,
        metadata: {},
        idempotencyKey: key('steal'),
      }),
      notFound,
    );
    const revoke = await call(`/v1/test_helpers/sandbox/mandates/${m.mandateId}/revoke`, {}, KEY_B);
    assert.equal(revoke.status, 404);
    clock.set('2026-12-30T00:00:00Z');
    assert.deepEqual((await settleDue(KEY_B))['data'], []);
    assert.equal((await gateway.retrievePaymentIntent(intentId)).status, 'processing');
    await settleDue(KEY_A);
    assert.equal((await gateway.retrievePaymentIntent(intentId)).status, 'succeeded');
  });
});
