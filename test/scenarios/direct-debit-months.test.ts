import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../src/platform/clock.ts';
import { toPence } from '../../src/platform/money.ts';
import { workingDaysBetween } from '../../src/platform/working-days.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { make } from '../support/factories.ts';
import {
  BACS_ACCOUNTS,
  directDebitOf,
  sandboxPost,
  setUpDirectDebit,
  settleDue,
  statement,
  waitForDirectDebit,
} from '../integration/payments/direct-debit-support.ts';

/**
 * A policy billed monthly for three months by Bacs Direct Debit in the sandbox, October 2025 to January
 * 2026: the first collection's notice runs across the autumn clock change, the third's across
 * Christmas, Boxing Day and New Year's Day. The second is returned for insufficient funds, presented
 * once more after a new notice, returned again, and waits; the bank then cancels the mandate, so the
 * third is charged to the card on file, and the second is paid by card on request. Nothing is collected
 * twice, and the cash report adds up.
 */
const clock = fixedClock('2025-10-20T09:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;

before(async () => {
  t = await createTestApp({ listen: true, overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
});
after(() => t.close());

interface Payment {
  payment_reference: string;
  purpose: string;
  status: string;
  amount: number;
  method_type?: string;
  policy_version_reference: string | null;
}

test('three months of Direct Debit: notices, a return, a cancelled mandate, the card, the cash', async () => {
  const policy = await make.cardPaidPolicy(t, acme, {
    pricing: { upfront_premium: 95.5, subscription_premium: 42, subscription_installments: 12 },
  });
  const ref = policy.reference;
  const db = t.container.database.db;
  const collectDue = () => t.container.services.payments.collectDue();
  const at = (iso: string) => {
    clock.set(iso);
  };
  await setUpDirectDebit(t, acme.sandbox, ref);

  // October: announced on Monday 20th, collected ten working days later across the clock change.
  const october = await statement(t, acme.sandbox, ref, '2025-10-20T08:00:00Z');
  let dd = await directDebitOf(t, acme.sandbox, ref);
  assert.equal(dd.collections[0]?.collect_on, '2025-11-03');
  at('2025-11-03T06:00:00Z');
  await collectDue();
  at('2025-11-06T07:00:00Z');
  await settleDue(t, acme.stripe_sandbox_secret_key);
  await waitForDirectDebit(
    t,
    acme.sandbox,
    ref,
    (d) => d.collections[0]?.status === 'succeeded',
    'October paid',
  );

  // November: a new mandate on an account without the funds.
  at('2025-11-20T09:00:00Z');
  await setUpDirectDebit(t, acme.sandbox, ref, BACS_ACCOUNTS.insufficientFunds);
  const november = await statement(t, acme.sandbox, ref, '2025-11-20T08:00:00Z');
  at('2025-12-04T06:00:00Z');
  await collectDue();
  at('2025-12-09T07:00:00Z');
  await settleDue(t, acme.stripe_sandbox_secret_key);
  dd = await waitForDirectDebit(
    t,
    acme.sandbox,
    ref,
    (d) => d.collections[1]?.status === 'scheduled' && d.collections[1].attempts === 1,
    'November returned and scheduled again',
  );
  assert.equal(dd.collections[1]?.collect_on, '2025-12-23');

  // December: announced on Friday 19th, collected after Christmas, Boxing Day and New Year's Day.
  at('2025-12-19T09:00:00Z');
  const december = await statement(t, acme.sandbox, ref, '2025-12-19T08:00:00Z');
  dd = await directDebitOf(t, acme.sandbox, ref);
  assert.equal(dd.collections[2]?.collect_on, '2026-01-07');

  // November's second presentation is returned too: it waits for a new method.
  at('2025-12-23T06:00:00Z');
  await collectDue();
  at('2025-12-30T07:00:00Z');
  await settleDue(t, acme.stripe_sandbox_secret_key);
  await waitForDirectDebit(
    t,
    acme.sandbox,
    ref,
    (d) => d.collections[1]?.status === 'failed',
    'November failed',
  );

  // The payer's bank cancels the mandate: recorded, the policyholder told.
  at('2025-12-31T10:00:00Z');
  const mandate = dd.mandates.find((m) => m.default);
  await sandboxPost(
    t,
    `/test_helpers/sandbox/mandates/${mandate?.provider_mandate_id ?? ''}/revoke`,
    { revocation_reason: 'account_closed' },
    acme.stripe_sandbox_secret_key,
  );
  dd = await waitForDirectDebit(
    t,
    acme.sandbox,
    ref,
    (d) => d.mandates.every((m) => !m.default),
    'the mandate is cancelled',
  );
  assert.equal(dd.mandates.at(-1)?.status, 'inactive');
  assert.equal(dd.mandates.at(-1)?.cancel_reason, 'account_closed');

  // January 7th: December's collection falls back to the card on file; November is paid by card on request.
  at('2026-01-07T06:00:00Z');
  await collectDue();
  const retried = await t.app.inject({
    method: 'POST',
    url: '/payments',
    headers: acme.sandbox,
    payload: {
      type: 'RETRY_PAYMENT',
      product_reference: 'ppm-motor',
      policy_reference: ref,
      policy_version_reference: november.policy_version_reference,
    },
  });
  assert.equal(retried.statusCode, 200, retried.body);

  const list = await t.app.inject({
    method: 'GET',
    url: `/payments?policy_reference=${ref}`,
    headers: acme.sandbox,
  });
  const payments = list.json<{ payments: Payment[] }>().payments.filter((p) => p.purpose === 'statement');
  const byVersion = (v: string) => payments.filter((p) => p.policy_version_reference === v);
  for (const [name, issued, method] of [
    ['October', october, 'bacs_debit'],
    ['November', november, 'card'],
    ['December', december, 'card'],
  ] as const) {
    const rows = byVersion(issued.policy_version_reference);
    assert.equal(rows.length, 1, `${name}: one payment record`);
    assert.deepEqual(
      [rows[0]?.status, rows[0]?.method_type, rows[0]?.amount],
      ['succeeded', method, issued.billed_premium],
      name,
    );
  }

  // Nothing collected twice: one successful intent at the processor for each statement's payment.
  const intents = (await db
    .selectFrom('stripe_sandbox_objects')
    .select('data')
    .where('type', '=', 'payment_intent')
    .execute()) as unknown as Array<{
    data: { status: string; metadata: Record<string, string> };
  }>;
  for (const p of payments) {
    const paid = intents.filter(
      (i) => i.data.metadata['milepost_payment'] === p.payment_reference && i.data.status === 'succeeded',
    );
    assert.equal(paid.length, 1, `${p.payment_reference}: ${String(paid.length)} successful intents`);
  }

  // The notices: each the company's ten working days ahead, the retry's with its own.
  const emails = await t.container.services.notifications.emailsTo(policy.email);
  const notices = emails.filter((e) => e.template === 'direct-debit-advance-notice');
  const noticeDays = notices.map((e) => /On or just after: (\d{4}-\d{2}-\d{2})/.exec(e.text ?? '')?.[1]);
  assert.deepEqual(noticeDays, ['2025-11-03', '2025-12-04', '2025-12-23', '2026-01-07']);
  for (const [sentOn, collectOn] of [
    ['2025-10-20', '2025-11-03'],
    ['2025-11-20', '2025-12-04'],
    ['2025-12-09', '2025-12-23'],
    ['2025-12-19', '2026-01-07'],
  ] as const)
    assert.equal(workingDaysBetween(sentOn, collectOn), 10, `${sentOn} → ${collectOn}`);
  assert.ok(
    emails.some(
      (e) => e.template === 'direct-debit-mandate-ended' && /card you have with us/.test(e.text ?? ''),
    ),
  );
  assert.equal(emails.filter((e) => e.template === 'direct-debit-mandate-confirmed').length, 2);

  // The cash report: October's Direct Debit is cash on the day it settled; the rest adds up.
  const report = await t.app.inject({
    method: 'GET',
    url: `/admin/reports/cash?company_reference=${acme.company_reference}&environment=sandbox&from=2025-10-01&to=2026-01-31`,
    headers: t.adminHeaders,
  });
  assert.equal(report.statusCode, 200, report.body);
  const cash = report.json<{
    payments: Array<{ payment_reference: string; day: string; status: string; amount: number }>;
    totals: { collected: number; outstanding: number; pending: number };
  }>();
  const octoberRow = cash.payments.find(
    (p) => p.payment_reference === byVersion(october.policy_version_reference)[0]?.payment_reference,
  );
  assert.equal(octoberRow?.day, '2025-11-06');
  const expectedPence =
    toPence(95.5) +
    toPence(october.billed_premium) +
    toPence(november.billed_premium) +
    toPence(december.billed_premium);
  assert.equal(toPence(cash.totals.collected), expectedPence);
  assert.equal(cash.totals.outstanding, 0);
  assert.equal(cash.totals.pending, 0);
});
