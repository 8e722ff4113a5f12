import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { SETUPS_SEARCHED } from '../../../src/modules/payments/index.ts';
import { addWorkingDays } from '../../../src/platform/working-days.ts';
import { make } from '../../support/factories.ts';
import {
  BACS_ACCOUNTS,
  confirmBacsSetup,
  directDebitOf,
  sandboxPost,
  setUpDirectDebit,
  settleDue,
  statement,
  waitForDirectDebit,
} from './direct-debit-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;

// A Monday in the example policy's term: the notice runs from here.
const clock = fixedClock('2025-09-15T09:00:00Z');
let t: TestApp;
let acme: Company;

before(async () => {
  t = await createTestApp({ listen: true, overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
});
after(() => t.close());

const monthly = {
  pricing: { upfront_premium: 95.5, subscription_premium: 42, subscription_installments: 12 },
};

const payments = (body: Record<string, unknown>) =>
  t.app.inject({
    method: 'POST',
    url: '/payments',
    headers: acme.sandbox,
    payload: { product_reference: 'ppm-motor', ...body },
  });

/** The Direct Debit payment intents the sandbox holds for one of our payments. */
async function intentsFor(paymentReference: string): Promise<Array<{ status: string }>> {
  const rows = await t.container.database.db
    .selectFrom('stripe_sandbox_objects')
    .select('data')
    .where('type', '=', 'payment_intent')
    .execute();
  return (rows as unknown as Array<{ data: { status: string; metadata: Record<string, string> } }>)
    .map((r) => r.data)
    .filter((i) => i.metadata['milepost_payment'] === paymentReference);
}

describe('setting up a Direct Debit', () => {
  test('records the mandate as the policy’s default method and confirms it with the Guarantee', async () => {
    clock.set('2025-09-15T09:00:00Z');
    const policy = await make.cardPaidPolicy(t, acme, monthly);
    await setUpDirectDebit(t, acme.sandbox, policy.reference);

    const method = await payments({ type: 'GET_PAYMENT_METHOD', policy_reference: policy.reference });
    assert.equal(method.statusCode, 200, method.body);
    const shown = method.json<Record<string, unknown>>();
    assert.equal(shown['method_type'], 'bacs_debit');
    assert.equal(shown['last4'], '2345');
    assert.equal(shown['sort_code'], '108800');
    assert.equal(shown['account_holder_name'], 'Jane Example');
    assert.match(String(shown['mandate_reference']), /\S/);

    const dd = await directDebitOf(t, acme.sandbox, policy.reference);
    assert.equal(dd.mandates.length, 1);
    assert.ok(['active', 'pending'].includes(dd.mandates[0]?.status ?? ''));
    assert.equal(dd.mandates[0]?.default, true);

    const confirmation = (await t.container.services.notifications.emailsTo(policy.email)).find(
      (e) => e.template === 'direct-debit-mandate-confirmed',
    );
    assert.ok(confirmation?.text !== null && confirmation?.text !== undefined, 'a mandate confirmation');
    assert.match(confirmation.text, /The Direct Debit Guarantee/);
    assert.match(confirmation.text, /Acme will notify you 10 working days in advance/);
    // Bacs: the first collection at least the notice period after the instruction.
    assert.match(
      confirmation.text,
      new RegExp(`Payments will be taken from: ${addWorkingDays('2025-09-15', 10)}`),
    );
    assert.match(
      confirmation.text,
      new RegExp(`Mandate reference: ${dd.mandates[0].mandate_reference ?? ''}`),
    );
  });

  test('a method sent after many unfinished setups asks the processor about the newest few only', async () => {
    clock.set('2025-09-15T09:00:00Z');
    const policy = await make.cardPaidPolicy(t, acme, monthly);
    // Each setup a second after the last: the newest are those started last, as on a live clock.
    for (let i = 0; i < SETUPS_SEARCHED + 3; i++) {
      clock.advance(1000);
      const started = await t.app.inject({
        method: 'POST',
        url: `/policys/${policy.reference}/direct-debit/setup-intents`,
        headers: acme.sandbox,
      });
      assert.equal(started.statusCode, 201, started.body);
    }
    const { gateways } = t.container;
    const forEnvironment = gateways.forEnvironment.bind(gateways);
    let retrieved = 0;
    gateways.forEnvironment = (...args) => {
      const gateway = forEnvironment(...args);
      return {
        ...gateway,
        retrieveSetupIntent: (id: string) => {
          retrieved += 1;
          return gateway.retrieveSetupIntent(id);
        },
      };
    };
    try {
      const card = await payments({
        type: 'ADD_NEW_PAYMENT_METHOD',
        policy_reference: policy.reference,
        payment_method_id: 'pm_card_mastercard',
      });
      assert.equal(card.statusCode, 200, card.body);
      assert.equal(retrieved, SETUPS_SEARCHED);
    } finally {
      gateways.forEnvironment = forEnvironment;
    }
    // The newest setup, confirmed, is still found and recorded.
    clock.advance(1000);
    await setUpDirectDebit(t, acme.sandbox, policy.reference);
    const dd = await directDebitOf(t, acme.sandbox, policy.reference);
    assert.equal(dd.mandates.length, 1);
  });

  test('a SetupIntent confirmed without ADD_NEW_PAYMENT_METHOD is recorded from the processor’s event', async () => {
    clock.set('2025-09-15T09:00:00Z');
    const policy = await make.cardPaidPolicy(t, acme, monthly);
    const paymentMethod = await confirmBacsSetup(t, acme.sandbox, policy.reference);
    const dd = await waitForDirectDebit(
      t,
      acme.sandbox,
      policy.reference,
      (d) => d.mandates.length === 1,
      'the mandate is recorded from setup_intent.succeeded',
    );
    assert.equal(dd.mandates[0]?.default, true);
    // The app's own ADD_NEW_PAYMENT_METHOD then changes nothing: one mandate, one confirmation.
    const added = await payments({
      type: 'ADD_NEW_PAYMENT_METHOD',
      policy_reference: policy.reference,
      payment_method_id: paymentMethod,
    });
    assert.equal(added.statusCode, 200, added.body);
    assert.equal((await directDebitOf(t, acme.sandbox, policy.reference)).mandates.length, 1);
    const confirmations = (await t.container.services.notifications.emailsTo(policy.email)).filter(
      (e) => e.template === 'direct-debit-mandate-confirmed',
    );
    assert.equal(confirmations.length, 1);
  });

  test('a mandate the bank refuses is not recorded as a method (422), and the card stays', async () => {
    const policy = await make.cardPaidPolicy(t, acme, monthly);
    const created = await t.app.inject({
      method: 'POST',
      url: `/policys/${policy.reference}/direct-debit/setup-intents`,
      headers: acme.sandbox,
    });
    const intent = created.json<{ setup_intent_id: string; client_secret: string }>();
    const confirmed = await sandboxPost(t, `/setup_intents/${intent.setup_intent_id}/confirm`, {
      client_secret: intent.client_secret,
      'payment_method_data[type]': 'bacs_debit',
      'payment_method_data[bacs_debit][sort_code]': '108800',
      'payment_method_data[bacs_debit][account_number]': '00033333',
      'payment_method_data[billing_details][name]': 'Jane Example',
      'payment_method_data[billing_details][email]': 'jane@example.com',
      'payment_method_data[billing_details][address][line1]': '1 High Street',
      'payment_method_data[billing_details][address][postal_code]': 'SW1A 1AA',
      'payment_method_data[billing_details][address][country]': 'GB',
      'mandate_data[customer_acceptance][type]': 'online',
      'mandate_data[customer_acceptance][online][infer_from_client]': 'true',
    });
    const added = await payments({
      type: 'ADD_NEW_PAYMENT_METHOD',
      policy_reference: policy.reference,
      payment_method_id: String(confirmed['payment_method']),
    });
    assert.equal(added.statusCode, 422, added.body);
    const method = await payments({ type: 'GET_PAYMENT_METHOD', policy_reference: policy.reference });
    assert.equal(method.json<{ method_type: string }>().method_type, 'card');
  });
});

describe('erasing the policyholder', () => {
  test('pseudonymises the account holder’s name on their mandates and keeps the reference', async () => {
    clock.set('2025-09-15T09:00:00Z');
    const policy = await make.cardPaidPolicy(t, acme, monthly);
    await setUpDirectDebit(t, acme.sandbox, policy.reference);
    const erased = await t.app.inject({
      method: 'POST',
      url: `/admin/policyholders/${policy.userReference}/erase`,
      headers: t.adminHeaders,
      payload: { reason: 'the policyholder asked', force: true },
    });
    assert.equal(erased.statusCode, 200, erased.body);
    const [mandate] = (await directDebitOf(t, acme.sandbox, policy.reference)).mandates;
    assert.equal(mandate?.account_holder_name, 'Erased');
    assert.match(mandate.mandate_reference ?? '', /\S/);
  });
});

describe('a statement paid by Direct Debit', () => {
  test('is announced, collected on its day once, and counts as cash on the day it settles', async () => {
    clock.set('2025-09-15T09:00:00Z');
    const policy = await make.cardPaidPolicy(t, acme, monthly);
    await setUpDirectDebit(t, acme.sandbox, policy.reference);
    const issued = await statement(t, acme.sandbox, policy.reference, '2025-09-15T08:00:00Z');
    const collectOn = addWorkingDays('2025-09-15', 10);
    assert.equal(issued.payment?.payment_amount, null);
    assert.match(issued.payment.error_message ?? '', new RegExp(`Direct Debit on ${collectOn}`));

    let dd = await directDebitOf(t, acme.sandbox, policy.reference);
    const [scheduled] = dd.collections;
    assert.ok(scheduled !== undefined);
    assert.equal(scheduled.status, 'scheduled');
    assert.equal(scheduled.collect_on, collectOn);
    assert.equal(scheduled.amount, issued.billed_premium);
    const notice = (await t.container.services.notifications.emailsTo(policy.email)).find(
      (e) => e.template === 'direct-debit-advance-notice',
    );
    assert.match(notice?.text ?? '', new RegExp(`On or just after: ${collectOn}`));
    assert.match(notice?.text ?? '', /Mandate reference: \S+/);
    assert.match(notice?.text ?? '', /The Direct Debit Guarantee/);

    // Not before its day.
    clock.set('2025-09-26T12:00:00Z');
    await t.container.services.payments.collectDue();
    assert.equal(
      (await directDebitOf(t, acme.sandbox, policy.reference)).collections[0]?.status,
      'scheduled',
    );

    // On its day, by two workers at once: one collection.
    clock.set(`${collectOn}T06:00:00Z`);
    await Promise.all([
      t.container.services.payments.collectDue(),
      t.container.services.payments.collectDue(),
    ]);
    dd = await directDebitOf(t, acme.sandbox, policy.reference);
    assert.equal(dd.collections[0]?.status, 'processing');
    assert.equal((await intentsFor(scheduled.payment_reference)).length, 1);

    // Before it settles it is pending in the cash report on the statement's day.
    const cash = async () => {
      const response = await t.app.inject({
        method: 'GET',
        url: `/admin/reports/cash?company_reference=${acme.company_reference}&environment=sandbox&from=2025-09-01&to=2025-10-31`,
        headers: t.adminHeaders,
      });
      assert.equal(response.statusCode, 200, response.body);
      return response.json<{
        payments: Array<{ payment_reference: string; day: string; status: string; method_type: string }>;
        days: Array<{ day: string; charged: number; pending: number }>;
      }>();
    };
    const before = (await cash()).payments.find((p) => p.payment_reference === scheduled.payment_reference);
    assert.deepEqual(
      [before?.day, before?.status, before?.method_type],
      ['2025-09-15', 'processing', 'bacs_debit'],
    );

    // Three working days on, the bank pays it: paid once, and cash on the day it settled.
    const settlesOn = addWorkingDays(collectOn, 3);
    clock.set(`${settlesOn}T07:00:00Z`);
    await settleDue(t, acme.stripe_sandbox_secret_key);
    dd = await waitForDirectDebit(
      t,
      acme.sandbox,
      policy.reference,
      (d) => d.collections[0]?.status === 'succeeded',
      'the collection settles',
    );
    assert.equal(dd.collections[0]?.settled_at?.slice(0, 10), settlesOn);
    const report = await cash();
    const row = report.payments.find((p) => p.payment_reference === scheduled.payment_reference);
    assert.deepEqual([row?.day, row?.status], [settlesOn, 'succeeded']);
    assert.equal(report.days.find((d) => d.day === settlesOn)?.charged, issued.billed_premium);
    await t.container.services.payments.collectDue();
    assert.equal((await intentsFor(scheduled.payment_reference)).length, 1, 'nothing collected twice');
  });
});

describe('a collection announced under one mandate', () => {
  test('moves to a new mandate with a new notice naming it, no earlier than its first possible collection', async () => {
    clock.set('2025-09-15T09:00:00Z');
    const policy = await make.cardPaidPolicy(t, acme, monthly);
    await setUpDirectDebit(t, acme.sandbox, policy.reference);
    await statement(t, acme.sandbox, policy.reference, '2025-09-15T08:00:00Z');
    const announcedOn = addWorkingDays('2025-09-15', 10);
    // Eight working days on, two before the collection, the payer gives a new mandate.
    clock.set(`${addWorkingDays('2025-09-15', 8)}T10:00:00Z`);
    await setUpDirectDebit(t, acme.sandbox, policy.reference);
    const firstUnderNew = addWorkingDays(addWorkingDays('2025-09-15', 8), 10);
    const dd = await directDebitOf(t, acme.sandbox, policy.reference);
    const current = dd.mandates.find((m) => m.default);
    assert.ok(current?.mandate_reference);
    assert.deepEqual(
      dd.collections.map((c) => [c.status, c.collect_on]),
      [['scheduled', firstUnderNew]],
    );
    const notices = (await t.container.services.notifications.emailsTo(policy.email)).filter(
      (e) => e.template === 'direct-debit-advance-notice',
    );
    assert.equal(notices.length, 2);
    const renewed = notices.find((e) => (e.text ?? '').includes(`On or just after: ${firstUnderNew}`));
    assert.match(renewed?.text ?? '', new RegExp(`Mandate reference: ${current.mandate_reference}`));
    // Nothing is collected on the day first announced.
    clock.set(`${announcedOn}T06:00:00Z`);
    await t.container.services.payments.collectDue();
    const [collection] = (await directDebitOf(t, acme.sandbox, policy.reference)).collections;
    assert.equal(collection?.status, 'scheduled');
    assert.equal((await intentsFor(collection.payment_reference)).length, 0);
  });
});

describe('a policy paying by Direct Debit cancelled', () => {
  test('still has the collection announced for a statement issued before it collected on its day', async () => {
    clock.set('2025-09-15T09:00:00Z');
    const policy = await make.cardPaidPolicy(t, acme, monthly);
    await setUpDirectDebit(t, acme.sandbox, policy.reference);
    // The statement bills the installments that fell due up to its end, before the cancellation.
    const issued = await statement(t, acme.sandbox, policy.reference, '2025-09-15T08:00:00Z');
    const collectOn = addWorkingDays('2025-09-15', 10);
    clock.set('2025-09-16T10:00:00Z');
    const cancelled = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${policy.reference}`,
      headers: acme.sandbox,
      payload: { reason: 'vehicle sold' },
    });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    // NOTE: what the statement billed stays owed, as a card would have paid it at once: the
    // collection keeps its amount and day, already announced to the payer.
    let dd = await directDebitOf(t, acme.sandbox, policy.reference);
    assert.deepEqual(
      dd.collections.map((c) => [c.amount, c.status, c.collect_on]),
      [[issued.billed_premium, 'scheduled', collectOn]],
    );
    clock.set(`${collectOn}T06:00:00Z`);
    await t.container.services.payments.collectDue();
    dd = await directDebitOf(t, acme.sandbox, policy.reference);
    const [collection] = dd.collections;
    assert.equal(collection?.status, 'processing');
    assert.equal((await intentsFor(collection.payment_reference)).length, 1);
  });
});

describe('a Direct Debit the bank returns', () => {
  test('for insufficient funds is presented once more after a new notice, then asks for a new method', async () => {
    clock.set('2025-09-15T09:00:00Z');
    const policy = await make.cardPaidPolicy(t, acme, monthly);
    await setUpDirectDebit(t, acme.sandbox, policy.reference, BACS_ACCOUNTS.insufficientFunds);
    await statement(t, acme.sandbox, policy.reference, '2025-09-15T08:00:00Z');
    const firstOn = addWorkingDays('2025-09-15', 10);
    clock.set(`${firstOn}T06:00:00Z`);
    await t.container.services.payments.collectDue();
    const returnedOn = addWorkingDays(firstOn, 3);
    clock.set(`${returnedOn}T07:00:00Z`);
    await settleDue(t, acme.stripe_sandbox_secret_key);
    const retried = await waitForDirectDebit(
      t,
      acme.sandbox,
      policy.reference,
      (d) => d.collections[0]?.status === 'scheduled' && d.collections[0].attempts === 1,
      'the collection is scheduled again',
    );
    const retryOn = addWorkingDays(returnedOn, 10);
    assert.equal(retried.collections[0]?.collect_on, retryOn);
    assert.equal(retried.collections[0].failure_code, 'insufficient_funds');
    const notices = (await t.container.services.notifications.emailsTo(policy.email)).filter(
      (e) => e.template === 'direct-debit-advance-notice',
    );
    assert.equal(notices.length, 2, 'a new advance notice for the retry');
    assert.match(notices[1]?.text ?? '', new RegExp(`On or just after: ${retryOn}`));

    clock.set(`${retryOn}T06:00:00Z`);
    await t.container.services.payments.collectDue();
    clock.set(`${addWorkingDays(retryOn, 3)}T07:00:00Z`);
    await settleDue(t, acme.stripe_sandbox_secret_key);
    const failed = await waitForDirectDebit(
      t,
      acme.sandbox,
      policy.reference,
      (d) => d.collections[0]?.status === 'failed',
      'the second return fails the collection',
    );
    assert.equal(failed.collections[0]?.awaiting_new_method, true);
    assert.equal(failed.collections[0].attempts, 2);
    const emails = await t.container.services.notifications.emailsTo(policy.email);
    assert.ok(emails.some((e) => e.template === 'payment-failed'));
    assert.equal((await intentsFor(failed.collections[0].payment_reference)).length, 2);
  });
});
