import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fixedClock } from '../../../src/platform/clock.ts';
import { addWorkingDays } from '../../../src/platform/working-days.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import {
  BACS_ACCOUNTS,
  directDebitOf,
  setUpDirectDebit,
  settleDue,
  statement,
  waitForDirectDebit,
} from './direct-debit-support.ts';

// The sweep for lost settlement webhooks: a Direct Debit still `processing` five working days after
// its day is asked of the processor (the sandbox, through the stripe SDK) and recorded as its webhook
// would have been. The webhook is lost by acknowledging it without acting on it.

type Company = Awaited<ReturnType<typeof createCompany>>;

// A Monday in the example policy's term: the notice runs from here.
const clock = fixedClock('2025-09-15T09:00:00Z');
let t: TestApp;
let acme: Company;
let beta: Company;

before(async () => {
  t = await createTestApp({ listen: true, overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  beta = await createCompany(t.app, 'Beta');
});
after(() => t.close());

const monthly = {
  pricing: { upfront_premium: 95.5, subscription_premium: 42, subscription_installments: 12 },
};

type WebhookHandler = TestApp['container']['services']['payments']['handleWebhook'];

/**
 * Runs `during` with the processor's webhooks acknowledged and dropped (as if lost on the way), until
 * its settlement event (`payment_intent.succeeded` or `.payment_failed`) is among them; returns a
 * function that delivers them late, each at the time it was signed.
 */
async function withWebhooksLost(during: () => Promise<unknown>): Promise<() => Promise<void>> {
  const payments = t.container.services.payments as { handleWebhook: WebhookHandler };
  const deliver = payments.handleWebhook;
  const lost: Array<Parameters<WebhookHandler>> = [];
  const settlement = () =>
    lost.some(([body]) => /"type": "payment_intent\.(succeeded|payment_failed)"/.test(String(body)));
  payments.handleWebhook = (...args) => {
    lost.push(args);
    return Promise.resolve({ duplicate: false });
  };
  try {
    await during();
    // The sandbox posts its webhooks after it answers.
    for (let i = 0; i < 100 && !settlement(); i += 1) await sleep(50);
    assert.ok(settlement(), 'the settlement webhook was sent and lost');
  } finally {
    payments.handleWebhook = deliver;
  }
  return async () => {
    const now = clock.now();
    for (const [body, signature] of lost) {
      clock.set(new Date(Number(/t=(\d+)/.exec(signature ?? '')?.[1]) * 1000).toISOString());
      await deliver(body, signature);
    }
    clock.set(now.toISOString());
  };
}

/** A policy of `company` paying by Direct Debit from `account`, with a statement collected on its day. */
async function processingCollection(company: Company, account: string) {
  clock.set('2025-09-15T09:00:00Z');
  const policy = await make.cardPaidPolicy(t, company, monthly);
  await setUpDirectDebit(t, company.sandbox, policy.reference, account);
  await statement(t, company.sandbox, policy.reference, '2025-09-15T08:00:00Z');
  const collectOn = addWorkingDays('2025-09-15', 10);
  clock.set(`${collectOn}T06:00:00Z`);
  await t.container.services.payments.collectDue();
  const dd = await directDebitOf(t, company.sandbox, policy.reference);
  assert.equal(dd.collections[0]?.status, 'processing');
  return { policy, collectOn, paymentReference: dd.collections[0].payment_reference };
}

const eventsOf = async (type: string, paymentReference: string) =>
  (
    await t.container.database.db.selectFrom('events').select('data').where('type', '=', type).execute()
  ).filter((e) => JSON.stringify(e.data).includes(paymentReference));

describe('the sweep of Direct Debits processing past their settlement', () => {
  test('records a collection the bank paid, once, though its webhook was lost', async () => {
    const { policy, collectOn, paymentReference } = await processingCollection(acme, BACS_ACCOUNTS.succeeds);
    const settlesOn = addWorkingDays(collectOn, 3);
    clock.set(`${settlesOn}T07:00:00Z`);
    const deliverLate = await withWebhooksLost(() => settleDue(t, acme.stripe_sandbox_secret_key));

    // Four working days on it is not yet asked about; five on it is.
    clock.set(`${addWorkingDays(collectOn, 4)}T12:00:00Z`);
    assert.equal((await t.container.services.payments.reconcileCollections()).checked, 0);
    const sweptOn = addWorkingDays(collectOn, 5);
    clock.set(`${sweptOn}T12:00:00Z`);
    const sweep = await t.container.services.payments.reconcileCollections();
    assert.deepEqual(sweep, { checked: 1, succeeded: 1, returned: 0, waiting: 0 });

    const [paid] = (await directDebitOf(t, acme.sandbox, policy.reference)).collections;
    assert.equal(paid?.status, 'succeeded');
    assert.equal(paid.settled_at, `${sweptOn}T12:00:00.000Z`);
    assert.equal((await eventsOf('payment.succeeded', paymentReference)).length, 1);

    // Again, and with the webhook now arriving late: nothing changes, nothing is announced twice.
    assert.equal((await t.container.services.payments.reconcileCollections()).checked, 0);
    await deliverLate();
    const [again] = (await directDebitOf(t, acme.sandbox, policy.reference)).collections;
    assert.deepEqual(again, paid);
    assert.equal((await eventsOf('payment.succeeded', paymentReference)).length, 1);
  });

  test('handles a collection the bank returned as its webhook would: a new notice and a retry', async () => {
    const { policy, collectOn, paymentReference } = await processingCollection(
      acme,
      BACS_ACCOUNTS.insufficientFunds,
    );
    clock.set(`${addWorkingDays(collectOn, 3)}T07:00:00Z`);
    const deliverLate = await withWebhooksLost(() => settleDue(t, acme.stripe_sandbox_secret_key));
    const sweptOn = addWorkingDays(collectOn, 6);
    clock.set(`${sweptOn}T12:00:00Z`);
    const sweep = await t.container.services.payments.reconcileCollections();
    assert.deepEqual(sweep, { checked: 1, succeeded: 0, returned: 1, waiting: 0 });

    const [retried] = (await directDebitOf(t, acme.sandbox, policy.reference)).collections;
    assert.equal(retried?.status, 'scheduled');
    assert.equal(retried.failure_code, 'insufficient_funds');
    assert.equal(retried.collect_on, addWorkingDays(sweptOn, 10));
    const notices = (await t.container.services.notifications.emailsTo(policy.email)).filter(
      (e) => e.template === 'direct-debit-advance-notice',
    );
    assert.equal(notices.length, 2, 'a new advance notice for the retry');
    assert.equal((await eventsOf('payment.failed', paymentReference)).length, 1);
    assert.equal((await t.container.services.payments.reconcileCollections()).checked, 0);
    // The lost return arrives late: the collection, scheduled again, stays as it is.
    await deliverLate();
    assert.deepEqual((await directDebitOf(t, acme.sandbox, policy.reference)).collections, [retried]);
    assert.equal((await eventsOf('payment.failed', paymentReference)).length, 1);
  });

  test('leaves a collection the processor still says is processing, and one whose webhook came', async () => {
    // Acme's settles with its webhook delivered: already succeeded before any sweep.
    const delivered = await processingCollection(acme, BACS_ACCOUNTS.succeeds);
    clock.set(`${addWorkingDays(delivered.collectOn, 3)}T07:00:00Z`);
    await settleDue(t, acme.stripe_sandbox_secret_key);
    const settled = await waitForDirectDebit(
      t,
      acme.sandbox,
      delivered.policy.reference,
      (d) => d.collections[0]?.status === 'succeeded',
      'the webhook settles it',
    );
    // Beta's collection is never settled at the sandbox: still processing there.
    const waiting = await processingCollection(beta, BACS_ACCOUNTS.succeeds);

    clock.set(`${addWorkingDays(waiting.collectOn, 7)}T12:00:00Z`);
    const sweep = await t.container.services.payments.reconcileCollections();
    assert.deepEqual(sweep, { checked: 1, succeeded: 0, returned: 0, waiting: 1 });
    assert.equal(
      (await directDebitOf(t, beta.sandbox, waiting.policy.reference)).collections[0]?.status,
      'processing',
    );
    assert.deepEqual(
      (await directDebitOf(t, acme.sandbox, delivered.policy.reference)).collections,
      settled.collections,
    );
    assert.equal((await eventsOf('payment.succeeded', delivered.paymentReference)).length, 1);
  });
});
