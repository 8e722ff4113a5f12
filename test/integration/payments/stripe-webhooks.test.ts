import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import {
  startStripeSandbox,
  type RunningSandbox,
} from '../../../src/integrations/payments/sandbox/sandbox-server.ts';
import { asTenant } from '../../../src/modules/companies/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { livePolicyInput } from '../../support/policy-arbitraries.ts';
import { stripeAt } from '../../support/stripe-sdk.ts';

/**
 * Stripe's webhooks as Stripe sends them, to the service in production configuration: Stripe is a
 * Stripe-compatible sandbox on its own port (STRIPE_API_BASE), and events are signed with
 * STRIPE_WEBHOOK_SECRET by the official SDK, as Stripe signs them.
 */
const WEBHOOK_SECRET = 'whsec_milepost_webhook_tests_0123456789';

type Company = Awaited<ReturnType<typeof createCompany>>;
interface Payment {
  payment_reference: string;
  purpose: string;
  status: string;
  provider_payment_reference: string | null;
  next_attempt_at: string | null;
}

/** What Stripe.js does: confirm with the client secret, without a secret key. */
async function confirmAsBrowser(apiBase: string, intentId: string, clientSecret: string, method: string) {
  const response = await fetch(`${apiBase}/v1/payment_intents/${intentId}/confirm`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_secret: clientSecret, payment_method: method }),
  });
  return (await response.json()) as { status: string; payment_method: string };
}

/**
 * A policy paid for with a card, whose card is then replaced by one whose issuer wants 3-D Secure, and
 * a statement charged off session: the processor asks for the customer's authentication.
 */
async function statementRequiringAction(
  t: TestApp,
  company: Company,
  environment: 'production' | 'sandbox',
  apiBase: string,
) {
  const headers = company[environment];
  const upfront = 95.5;
  const intent = await t.app.inject({
    method: 'POST',
    url: '/payments',
    headers,
    payload: { type: 'CREATE_PAYMENT_INTENT', product_reference: 'ppm-motor', amount: upfront * 100 },
  });
  assert.equal(intent.statusCode, 200, intent.body);
  const created = intent.json<Record<string, string>>();
  const pi = created['payment_provider_transaction_ref']!;
  const confirmed = await confirmAsBrowser(apiBase, pi, created['payment_temporary_token']!, 'pm_card_visa');
  assert.equal(confirmed.status, 'succeeded');
  const input = livePolicyInput({
    proposer: { email: `webhooks.${Math.random().toString(36).slice(2)}@example.com` },
    pricing: { upfront_premium: upfront },
    payment: {
      provider_payment_reference: pi,
      provider_customer_reference: created['payment_provider_customer_ref']!,
      payment_provider: 'stripe',
      payment_method_id: confirmed.payment_method,
    },
  });
  delete input.payment?.payment_amount;
  const policy = await t.app.inject({ method: 'POST', url: '/policys', headers, payload: input });
  assert.equal(policy.statusCode, 201, policy.body);
  const { policy_reference: reference, policy_version_reference: version } = policy.json<{
    policy_reference: string;
    policy_version_reference: string;
  }>();
  const card = await t.app.inject({
    method: 'POST',
    url: '/payments',
    headers,
    payload: {
      type: 'ADD_NEW_PAYMENT_METHOD',
      product_reference: 'ppm-motor',
      policy_reference: reference,
      payment_method_id: 'pm_card_authenticationRequired',
    },
  });
  assert.equal(card.statusCode, 200, card.body);
  const row = await t.container.database.db
    .selectFrom('policies')
    .select(['id', 'company_id'])
    .where('policy_reference', '=', reference)
    .executeTakeFirstOrThrow();
  const outcome = await t.container.services.payments.chargeStatement(asTenant(row.company_id, environment), {
    policyId: row.id,
    policyVersionId: version,
    amountPence: 2_345,
  });
  assert.equal(outcome?.payment_amount, null);
  const statement = (await paymentsOf(t, headers, reference)).find((p) => p.purpose === 'statement');
  assert.equal(statement?.status, 'requires_action');
  assert.match(statement.provider_payment_reference ?? '', /^pi_/);
  return {
    reference,
    headers,
    paymentReference: statement.payment_reference,
    intentId: statement.provider_payment_reference!,
  };
}

async function paymentsOf(
  t: TestApp,
  headers: Record<string, string>,
  reference: string,
): Promise<Payment[]> {
  const r = await t.app.inject({ url: `/payments?policy_reference=${reference}`, headers });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ payments: Payment[] }>().payments;
}

/** The customer authenticates at the processor (Stripe.js's 3-D Secure): the intent is paid there. */
async function authenticateAtProcessor(apiBase: string, secretKey: string, intentId: string): Promise<void> {
  const intent = await stripeAt(apiBase, secretKey).paymentIntents.retrieve(intentId);
  const method = intent.last_payment_error?.payment_method?.id ?? '';
  assert.match(method, /^pm_/);
  const waiting = await confirmAsBrowser(apiBase, intentId, intent.client_secret ?? '', method);
  assert.equal(waiting.status, 'requires_action');
  const paid = await confirmAsBrowser(apiBase, intentId, intent.client_secret ?? '', method);
  assert.equal(paid.status, 'succeeded');
}

const succeededEventsOf = async (t: TestApp, paymentReference: string) =>
  (
    await t.container.database.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('type', 'in', ['payment.succeeded', 'payment.failed'])
      .execute()
  ).filter((e) => (e.data as { payment_reference?: string }).payment_reference === paymentReference);

/** Posts `event` as Stripe does: the raw JSON and `Stripe-Signature: t=…,v1=…` made by the SDK. */
function deliverTo(t: TestApp, event: object, options: { secret?: string; timestamp?: number } = {}) {
  const payload = JSON.stringify(event, null, 2);
  const header = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? WEBHOOK_SECRET,
    ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
  });
  return t.app.inject({
    method: 'POST',
    url: '/webhooks/stripe',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header },
    payload,
  });
}

describe('production: Stripe webhooks signed with STRIPE_WEBHOOK_SECRET', () => {
  let processor: RunningSandbox;
  let secretKey: string;
  let t: TestApp;
  let acme: Company;

  before(async () => {
    processor = await startStripeSandbox();
    secretKey = processor.secretKey!;
    t = await createTestApp({
      listen: true,
      env: {
        STRIPE_SECRET_KEY: secretKey,
        STRIPE_API_BASE: processor.apiBase,
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      },
    });
    acme = await createCompany(t.app, 'Acme');
  });
  after(async () => {
    await t.close();
    await processor.close();
  });

  const deliver = (event: object, options: { secret?: string; timestamp?: number } = {}) =>
    deliverTo(t, event, options);

  /** The event the processor recorded for its intent (Stripe would post it), as Stripe serves it. */
  const processorEvent = async (type: string, intentId: string) => {
    const [found] = await processor.store.find('event', { type, data: { object: { id: intentId } } }, 1);
    assert.ok(found !== undefined, `no ${type} for ${intentId}`);
    const { _sandbox_account: _account, ...event } = found;
    return event;
  };

  test('an event signed as Stripe signs it is accepted and verifies with the SDK; a wrong secret or a stale signature is 401', async () => {
    const event = {
      id: `evt_${Math.random().toString(36).slice(2)}`,
      object: 'event',
      api_version: '2026-10-28.endive',
      created: Math.floor(Date.now() / 1000),
      livemode: true,
      type: 'customer.created',
      data: { object: { id: 'cus_webhook', object: 'customer', name: 'Zoë Ångström' } },
    };
    const payload = JSON.stringify(event, null, 2);
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
    assert.equal(Stripe.webhooks.constructEvent(payload, header, WEBHOOK_SECRET).id, event.id);

    const accepted = await deliver(event);
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.deepEqual(accepted.json(), { received: true, duplicate: false });
    const again = await deliver(event);
    assert.deepEqual(again.json(), { received: true, duplicate: true });

    const wrongSecret = await deliver({ ...event, id: `${event.id}_2` }, { secret: 'whsec_someone_else' });
    assert.equal(wrongSecret.statusCode, 401, wrongSecret.body);
    // Older than the tolerance (300 s): a replayed capture is refused.
    const stale = await deliver(
      { ...event, id: `${event.id}_3` },
      { timestamp: Math.floor(Date.now() / 1000) - 301 },
    );
    assert.equal(stale.statusCode, 401, stale.body);
    assert.match(stale.json<{ detail: string }>().detail, /tolerance/i);
    const fresh = await deliver(
      { ...event, id: `${event.id}_4` },
      { timestamp: Math.floor(Date.now() / 1000) - 200 },
    );
    assert.equal(fresh.statusCode, 200, fresh.body);
  });

  test('a 3-D Secure statement charge paid at Stripe: payment_intent.succeeded makes it succeeded at once, once; a late payment_failed changes nothing', async () => {
    const charge = await statementRequiringAction(t, acme, 'production', processor.apiBase);
    await authenticateAtProcessor(processor.apiBase, secretKey, charge.intentId);
    const succeeded = await processorEvent('payment_intent.succeeded', charge.intentId);
    const statusNow = async () =>
      (await paymentsOf(t, charge.headers, charge.reference)).find(
        (p) => p.payment_reference === charge.paymentReference,
      )?.status;

    // The same event signed with the sandbox's secret is a sandbox event: it never settles production.
    const fromSandbox = await deliver(
      { ...succeeded, id: `${succeeded.id}_sandbox` },
      { secret: t.container.gateways.sandboxWebhookSecret },
    );
    assert.equal(fromSandbox.statusCode, 200, fromSandbox.body);
    assert.equal(await statusNow(), 'requires_action');

    // Stripe may deliver an event more than once, even concurrently.
    const deliveries = await Promise.all([deliver(succeeded), deliver(succeeded), deliver(succeeded)]);
    assert.deepEqual(
      deliveries.map((d) => d.statusCode),
      [200, 200, 200],
      deliveries.map((d) => d.body).join('\n'),
    );
    assert.equal(
      deliveries.filter((d) => !d.json<{ duplicate: boolean }>().duplicate).length,
      1,
      'applied once',
    );
    const paid = (await paymentsOf(t, charge.headers, charge.reference)).find(
      (p) => p.payment_reference === charge.paymentReference,
    );
    assert.equal(paid?.status, 'succeeded');
    assert.equal(paid.next_attempt_at, null, 'no dunning retry is left');
    const policy = await t.app.inject({ url: `/policys/${charge.reference}`, headers: charge.headers });
    assert.equal(
      policy
        .json<{ payments: Payment[] }>()
        .payments.find((p) => p.payment_reference === charge.paymentReference)?.status,
      'succeeded',
    );
    const announced = await succeededEventsOf(t, charge.paymentReference);
    assert.deepEqual(
      announced.map((e) => e.type),
      ['payment.failed', 'payment.succeeded'],
    );

    // A failure about the same intent arriving after its success (Stripe does not order events).
    const late = {
      ...succeeded,
      id: `${succeeded.id}_late`,
      type: 'payment_intent.payment_failed',
      data: {
        object: {
          ...(succeeded['data'] as { object: Record<string, unknown> }).object,
          status: 'requires_payment_method',
          amount_received: 0,
          last_payment_error: {
            type: 'card_error',
            code: 'card_declined',
            message: 'Your card was declined.',
          },
        },
      },
    };
    const failed = await deliver(late);
    assert.equal(failed.statusCode, 200, failed.body);
    const after = (await paymentsOf(t, charge.headers, charge.reference)).find(
      (p) => p.payment_reference === charge.paymentReference,
    );
    assert.equal(after?.status, 'succeeded');
    assert.equal((await succeededEventsOf(t, charge.paymentReference)).length, 2);
  });
});

describe('sandbox: the built-in sandbox posts its own events', () => {
  let t: TestApp;
  let acme: Company;
  let apiBase: string;

  before(async () => {
    // A process that receives Stripe's webhooks but makes no production payment: no STRIPE_SECRET_KEY.
    t = await createTestApp({ listen: true, env: { STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET } });
    apiBase = `${t.container.gateways.sandboxBaseUrl()!}/sandbox/stripe`;
    acme = await createCompany(t.app, 'Acme');
  });
  after(() => t.close());

  test('a statement needing 3-D Secure, authenticated at the sandbox, is succeeded as soon as its event arrives', async () => {
    const charge = await statementRequiringAction(t, acme, 'sandbox', apiBase);
    await authenticateAtProcessor(apiBase, acme.stripe_sandbox_secret_key, charge.intentId);
    // The sandbox posts payment_intent.succeeded right after answering (well within a second here).
    let status = '';
    for (let i = 0; i < 40 && status !== 'succeeded'; i++) {
      await sleep(50);
      status =
        (await paymentsOf(t, charge.headers, charge.reference)).find(
          (p) => p.payment_reference === charge.paymentReference,
        )?.status ?? '';
    }
    assert.equal(status, 'succeeded');
  });

  test('Stripe’s signed events are accepted beside the sandbox’s, without STRIPE_SECRET_KEY (verifying needs only the signing secret)', async () => {
    const event = {
      id: `evt_${Math.random().toString(36).slice(2)}`,
      object: 'event',
      created: Math.floor(Date.now() / 1000),
      type: 'customer.created',
      data: { object: { id: 'cus_elsewhere', object: 'customer' } },
    };
    const accepted = await deliverTo(t, event);
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.deepEqual(accepted.json(), { received: true, duplicate: false });
    const forged = await deliverTo(t, { ...event, id: `${event.id}_forged` }, { secret: 'whsec_forger' });
    assert.equal(forged.statusCode, 401, forged.body);
  });
});
