import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { createKyselySandboxStore } from '../../../src/integrations/payments/index.ts';
import { shiftedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';
import { stripeAt } from '../../support/stripe-sdk.ts';

/**
 * Card refunds that fail after they were sent, as Stripe reports them: its test card 4000000000005126
 * (`pm_card_refundFail`) answers a refund `succeeded`, then fails it with `expired_or_canceled_card`
 * and posts `charge.refund.updated`, `refund.updated` and `refund.failed`; 4000000000007726
 * (`pm_card_pendingRefund`) answers `pending`, then succeeds. The built-in sandbox does the same over
 * HTTP, driven here through the official SDK, and posts its signed events to the service.
 */

type Company = Awaited<ReturnType<typeof createCompany>>;
interface Payment {
  payment_reference: string;
  type: string;
  purpose: string;
  status: string;
  amount: number;
  refunded_amount: number;
  provider_payment_reference: string | null;
  decline_code: string | null;
  error_message: string | null;
}
interface PolicyBody {
  policy_reference: string;
  payments: Payment[];
}

let t: TestApp;
let acme: Company;
let apiBase: string;

before(async () => {
  t = await createTestApp({
    listen: true,
    startJobs: true,
    overrides: { clock: shiftedClock('2025-08-01T12:00:00Z') },
  });
  apiBase = `${t.container.gateways.sandboxBaseUrl()!}/sandbox/stripe`;
  acme = await createCompany(t.app, 'Acme');
});
after(() => t.close());

/** Some time later at the processor: the sandbox settles the refunds of its refund test cards now. */
async function settleRefundsAtProcessor(): Promise<Array<{ id: string; status: string }>> {
  const settled = (await stripeAt(apiBase, acme.stripe_sandbox_secret_key).rawRequest(
    'POST',
    '/v1/test_helpers/sandbox/settle_due_refunds',
    {},
  )) as { data: Array<{ id: string; status: string }> };
  return settled.data;
}

/** A policy paid £100 with `card` (intent, browser confirmation, policy), adjusted from its start down to £60. */
async function adjustedDownPaidWith(card: string) {
  const intent = await t.app.inject({
    method: 'POST',
    url: '/payments',
    headers: acme.sandbox,
    payload: { type: 'CREATE_PAYMENT_INTENT', product_reference: 'ppm-motor', amount: 10_000 },
  });
  assert.equal(intent.statusCode, 200, intent.body);
  const created = intent.json<Record<string, string>>();
  const pi = created['payment_provider_transaction_ref']!;
  // As Stripe.js does: confirm with the client secret, no secret key.
  const confirm = await fetch(`${apiBase}/v1/payment_intents/${pi}/confirm`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_secret: created['payment_temporary_token']!, payment_method: card }),
  });
  const confirmed = (await confirm.json()) as { status: string; payment_method: string };
  assert.equal(confirmed.status, 'succeeded');
  const input = examplePolicyInput({
    proposer: { email: `refunds.${Math.random().toString(36).slice(2)}@example.com` },
    pricing: { upfront_premium: 100 },
    payment: {
      provider_payment_reference: pi,
      provider_customer_reference: created['payment_provider_customer_ref']!,
      payment_provider: 'stripe',
      payment_method_id: confirmed.payment_method,
    },
  });
  delete input.payment?.payment_amount;
  const { body: policy } = await make.policyFrom<PolicyBody>(t.app, acme, input);
  await make.adjustment(
    t.app,
    acme,
    { reference: policy.policy_reference, input },
    {
      pricing: { upfront_premium: 60, mta_fee: 0 },
      effective_date: input.policy.start_date,
      payment: undefined,
    },
  );
  return { input, reference: policy.policy_reference };
}

async function paymentsOf(reference: string): Promise<Payment[]> {
  const r = await t.app.inject({ url: `/payments?policy_reference=${reference}`, headers: acme.sandbox });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ payments: Payment[] }>().payments;
}

async function waitForPayments(reference: string, predicate: (p: Payment[]) => boolean): Promise<Payment[]> {
  let list: Payment[] = [];
  for (let i = 0; i < 100; i++) {
    list = await paymentsOf(reference);
    if (predicate(list)) return list;
    await sleep(100);
  }
  throw new Error(`payment state not reached: ${JSON.stringify(list, null, 2)}`);
}

/** The events the sandbox recorded about one refund (and posted), oldest first, as Stripe serves them. */
async function processorEventsOf(refundId: string): Promise<Array<Record<string, unknown>>> {
  const store = createKyselySandboxStore(t.container.database.db);
  const found = await store.find('event', { data: { object: { id: refundId } } }, 100);
  return found
    .map(({ _sandbox_account: _account, ...event }) => event)
    .sort((a, b) => Number(a['created']) - Number(b['created']));
}

/** Posts `event` as the sandbox does: signed with its secret by the SDK's own signer. */
function deliver(event: object) {
  const payload = JSON.stringify(event, null, 2);
  const header = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: t.container.gateways.sandboxWebhookSecret,
  });
  return t.app.inject({
    method: 'POST',
    url: '/webhooks/stripe',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header },
    payload,
  });
}

/** A `refund.failed` event as the processor posts it, about `refund`. */
const refundFailedEvent = (refund: {
  id: string;
  amount: number;
  failure_reason: string;
  metadata: object;
}) => ({
  id: `evt_${Math.random().toString(36).slice(2)}`,
  object: 'event',
  api_version: '2026-10-28.endive',
  created: Math.floor(Date.now() / 1000),
  type: 'refund.failed',
  data: { object: { ...refund, object: 'refund', status: 'failed', payment_intent: 'pi_not_ours' } },
});

const refundFailedEvents = async (paymentReference: string) =>
  (
    await t.container.database.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('type', '=', 'payment.refund_failed')
      .execute()
  ).filter((e) => (e.data as { payment_reference?: string }).payment_reference === paymentReference);

describe('a card refund that fails after it was sent', () => {
  test('is recorded failed with its reason, its amount is refundable again, and staff see it among failed payments', async () => {
    const { input, reference } = await adjustedDownPaidWith('pm_card_refundFail');
    // The processor answers the refund succeeded: recorded so, and the charge has 40 refunded.
    const sent = await waitForPayments(reference, (list) =>
      list.some((p) => p.type === 'refund' && p.status === 'succeeded'),
    );
    const refund = sent.find((p) => p.type === 'refund')!;
    assert.equal(refund.amount, 40);
    assert.match(refund.provider_payment_reference ?? '', /^re_/);
    assert.equal(sent.find((p) => p.purpose === 'new_business')?.refunded_amount, 40);

    // Some time later the card's issuer refuses it: Stripe fails the refund and posts its events.
    // (The sandbox's own sweep, once a minute, may have settled it already: then it answers none.)
    const settled = await settleRefundsAtProcessor();
    assert.ok(settled.every((r) => r.id === refund.provider_payment_reference && r.status === 'failed'));
    const failed = await waitForPayments(reference, (list) =>
      list.some((p) => p.payment_reference === refund.payment_reference && p.status === 'failed'),
    );
    const failedRefund = failed.find((p) => p.payment_reference === refund.payment_reference)!;
    assert.equal(failedRefund.decline_code, 'expired_or_canceled_card');
    assert.match(failedRefund.error_message ?? '', /expired or been cancelled.*owed to the policyholder/);
    const original = failed.find((p) => p.purpose === 'new_business')!;
    assert.equal(original.refunded_amount, 0, 'the 40 was never returned');
    assert.equal(original.status, 'succeeded');
    // The policy object shows the same (its cached read is not served stale).
    const policy = await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox });
    assert.equal(
      policy.json<PolicyBody>().payments.find((p) => p.payment_reference === refund.payment_reference)
        ?.status,
      'failed',
    );
    // Staff's list of failed payments (the console's) names it, with its reason.
    const list = await t.app.inject({ url: '/payments/failed', headers: acme.sandbox });
    assert.equal(list.statusCode, 200, list.body);
    const listed = list
      .json<{ payments: Array<Payment & { policy_reference: string }> }>()
      .payments.find((p) => p.payment_reference === refund.payment_reference);
    assert.equal(listed?.type, 'refund');
    assert.equal(listed.policy_reference, reference);
    assert.equal(listed.decline_code, 'expired_or_canceled_card');
    // Clients are told: once, with the charge it was to refund.
    const announced = await refundFailedEvents(refund.payment_reference);
    assert.equal(announced.length, 1);
    assert.deepEqual(
      {
        amount: (announced[0]!.data as { amount: number }).amount,
        refund_of: (announced[0]!.data as { refund_of: string }).refund_of,
        decline_code: (announced[0]!.data as { decline_code: string }).decline_code,
      },
      { amount: 40, refund_of: original.payment_reference, decline_code: 'expired_or_canceled_card' },
    );

    // Stripe posted three events about the one change; each again, or in another order, or a
    // `succeeded` arriving after the failure, changes nothing.
    const events = await processorEventsOf(refund.provider_payment_reference!);
    assert.deepEqual(
      events
        .map((e) => String(e['type']))
        .filter((type) => type !== 'charge.refunded')
        .sort(),
      ['charge.refund.updated', 'refund.failed', 'refund.updated'],
    );
    for (const event of events.toReversed()) {
      const again = await deliver(event);
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json<{ duplicate: boolean }>().duplicate, true);
    }
    const failedEvent = events.find((e) => e['type'] === 'refund.failed')!;
    const failedObject = (failedEvent['data'] as { object: Record<string, unknown> }).object;
    const late = await deliver({
      ...failedEvent,
      id: `${String(failedEvent['id'])}_late`,
      type: 'refund.updated',
      data: { object: { ...failedObject, status: 'succeeded', failure_reason: null } },
    });
    assert.equal(late.statusCode, 200, late.body);
    const twice = await deliver({ ...failedEvent, id: `${String(failedEvent['id'])}_again` });
    assert.equal(twice.statusCode, 200, twice.body);
    const still = await paymentsOf(reference);
    assert.equal(still.find((p) => p.payment_reference === refund.payment_reference)?.status, 'failed');
    assert.equal(still.find((p) => p.purpose === 'new_business')?.refunded_amount, 0, 'taken out once');
    assert.equal((await refundFailedEvents(refund.payment_reference)).length, 1);

    // What was never returned is refundable again: a cancellation from the start gives back all 100.
    const cancelled = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${reference}`,
      headers: acme.sandbox,
      payload: { effective_date: input.policy.start_date, payment_amount: 100 },
    });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    const afterCancel = await waitForPayments(reference, (list) =>
      list.some((p) => p.purpose === 'cancellation' && p.status === 'succeeded'),
    );
    assert.equal(afterCancel.find((p) => p.purpose === 'cancellation')?.amount, 100);
    assert.equal(afterCancel.find((p) => p.purpose === 'new_business')?.refunded_amount, 100);
    assert.equal(afterCancel.find((p) => p.purpose === 'new_business')?.status, 'refunded');
  });

  test('a refund the processor answers pending is recorded succeeded when its event says so, once', async () => {
    const { reference } = await adjustedDownPaidWith('pm_card_pendingRefund');
    const sent = (
      await waitForPayments(reference, (list) =>
        list.some((p) => p.type === 'refund' && p.provider_payment_reference !== null),
      )
    ).find((p) => p.type === 'refund')!;
    assert.equal(sent.status, 'pending');
    await settleRefundsAtProcessor();
    const settled = await waitForPayments(reference, (list) =>
      list.some((p) => p.payment_reference === sent.payment_reference && p.status === 'succeeded'),
    );
    assert.equal(settled.find((p) => p.purpose === 'new_business')?.refunded_amount, 40);
    // A `pending` delivered late leaves it succeeded.
    const [updated] = (await processorEventsOf(sent.provider_payment_reference!)).filter(
      (e) => e['type'] === 'refund.updated',
    );
    const object = (updated!['data'] as { object: Record<string, unknown> }).object;
    const late = await deliver({
      ...updated,
      id: `${String(updated!['id'])}_late`,
      data: { object: { ...object, status: 'pending' } },
    });
    assert.equal(late.statusCode, 200, late.body);
    const still = await paymentsOf(reference);
    assert.equal(still.find((p) => p.payment_reference === sent.payment_reference)?.status, 'succeeded');
    assert.equal(still.find((p) => p.purpose === 'new_business')?.refunded_amount, 40);
  });

  test('an event about our refund sent but not yet on the record is refused 409, and taken when redelivered after', async () => {
    const db = t.container.database.db;
    // A refund settled for good (an ordinary card's: the refund-fail card's refunds of the earlier
    // tests may still fail at the sandbox's sweep), put back to the moment between the processor's
    // answer and the refund job's write of its id.
    const { reference } = await adjustedDownPaidWith('pm_card_visa');
    const sent = (
      await waitForPayments(reference, (list) =>
        list.some((p) => p.type === 'refund' && p.status === 'succeeded'),
      )
    ).find((p) => p.type === 'refund')!;
    const ours = await db
      .selectFrom('payments')
      .select(['id', 'provider_payment_id', 'status'])
      .where('id', '=', sent.payment_reference)
      .executeTakeFirstOrThrow();
    const refundId = ours.provider_payment_id!;
    await db.updateTable('payments').set({ provider_payment_id: null }).where('id', '=', ours.id).execute();
    const event = refundFailedEvent({
      id: refundId,
      amount: 1_000,
      failure_reason: 'expired_or_canceled_card',
      metadata: { milepost_payment: ours.id },
    });
    try {
      const early = await deliver(event);
      assert.equal(early.statusCode, 409, early.body);
      assert.equal(early.json<{ code: string }>().code, 'CONFLICT');
      const unchanged = await db
        .selectFrom('payments')
        .select('status')
        .where('id', '=', ours.id)
        .executeTakeFirstOrThrow();
      assert.equal(unchanged.status, 'succeeded', 'nothing recorded from the refused event');
    } finally {
      await db
        .updateTable('payments')
        .set({ provider_payment_id: refundId })
        .where('id', '=', ours.id)
        .execute();
    }
    // The processor delivers the same event again: now on the record, it is taken, once.
    const later = await deliver(event);
    assert.equal(later.statusCode, 200, later.body);
    assert.deepEqual(later.json(), { received: true, duplicate: false });
    const failed = await db
      .selectFrom('payments')
      .select('status')
      .where('id', '=', ours.id)
      .executeTakeFirstOrThrow();
    assert.equal(failed.status, 'failed');
  });

  test('an event about a refund not on our records is acknowledged and changes nothing', async () => {
    const r = await deliver(
      refundFailedEvent({
        id: 're_not_ours',
        amount: 4_000,
        failure_reason: 'lost_or_stolen_card',
        metadata: { milepost_payment: 'not-a-uuid' },
      }),
    );
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(r.json(), { received: true, duplicate: false });
  });
});
