import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { asTenant } from '../../src/modules/companies/index.ts';
import { londonMidnight } from '../../src/modules/statements/rules/statement-period.ts';
import { fixedClock } from '../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { postQuote, quoteInput, rateBookFor, type Quote } from '../integration/quotes/quote-support.ts';
import { signInStaff } from '../integration/staff/staff-support.ts';

// Quotes bought in the web app on the monthly plan (12 installments from 1 June 2025): the first
// installment is paid at purchase, the statement run bills the other eleven, each once.
const clock = fixedClock('2025-05-20T12:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;

before(async () => {
  t = await createTestApp({ listen: true, overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  const ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  const bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  await rateBookFor(t, acme, ada, bob);
});
after(() => t.close());

const publicHeaders = () => ({ client_id: acme.client_id, environment: 'sandbox' });
const pence = (pounds: number) => Math.round(pounds * 100);

/** A monthly quote, bought with a card in the sandbox: the quote and the amount paid (pence). */
async function buyMonthly() {
  clock.set('2025-05-20T12:00:00Z');
  const input = quoteInput((q) => {
    (q as { installment_plan: string }).installment_plan = 'monthly';
  });
  const quote = (await postQuote(t, publicHeaders(), input)).json<Quote & { purchase_secret: string }>();
  const answer = await t.app.inject({
    method: 'POST',
    url: `/quotes/${quote.quote_reference}/purchase`,
    headers: { ...publicHeaders(), purchase_secret: quote.purchase_secret },
    payload: { payment_method_id: 'pm_card_visa', installment_plan: 'monthly' },
  });
  assert.equal(answer.statusCode, 201, answer.body);
  const bound = answer.json<{ policy_reference: string; amount_paid: number }>();
  return { quote, reference: bound.policy_reference, paidPence: pence(bound.amount_paid) };
}

/** Runs the billing day `date` (the 1st, the term's day) twice, as the scenarios do. */
async function billingDay(date: string) {
  clock.set(new Date(londonMidnight(date).getTime() + 2 * 3_600_000));
  const first = await t.container.services.statements.runBillingDay(date);
  const second = await t.container.services.statements.runBillingDay(date);
  assert.equal(second.billed, 0, `re-running ${date} bills nobody`);
  assert.equal(first.failed + second.failed, 0);
}

/** The final statement of `reference` to `endAt`, as the worker's job issues it when cover ends. */
async function issueFinal(reference: string, endAt: Date) {
  const policy = await t.container.database.db
    .selectFrom('policies')
    .select('company_id')
    .where('policy_reference', '=', reference)
    .executeTakeFirstOrThrow();
  await t.container.services.statements.issueFinal(asTenant(policy.company_id, 'sandbox'), reference, endAt);
}

async function statementsOf(reference: string) {
  const policy = await t.container.database.db
    .selectFrom('policies')
    .select('id')
    .where('policy_reference', '=', reference)
    .executeTakeFirstOrThrow();
  return t.container.database.db
    .selectFrom('statements')
    .selectAll()
    .where('policy_id', '=', policy.id)
    .orderBy('period_start_at')
    .execute();
}

test('over the term: the first payment and the statements collect what the quote says, each installment once', async () => {
  const { quote, reference, paidPence } = await buyMonthly();
  const installmentPence = pence(quote.pricing['subscription_premium'] as number);
  const count = quote.pricing['subscription_installments'] as number;
  assert.equal(count, 12);
  assert.equal(paidPence, pence(quote.pricing.upfront_premium) + installmentPence);

  const days = ['2025-07-01', '2025-08-01', '2025-09-01', '2025-10-01', '2025-11-01', '2025-12-01'];
  days.push('2026-01-01', '2026-02-01', '2026-03-01', '2026-04-01', '2026-05-01');
  for (const date of days) await billingDay(date);
  // The term's last month, to its end (31 May 2026, 23:59:59 London): the final statement.
  clock.set('2026-06-01T02:00:00Z');
  const endAt = new Date(londonMidnight('2026-06-01').getTime() - 1000);
  await issueFinal(reference, endAt);

  const rows = await statementsOf(reference);
  assert.equal(rows.length, 12, 'a statement a month');
  assert.equal(rows[0]!.installments, 0, 'the first month’s installment was paid at purchase');
  assert.deepEqual(
    rows.slice(1).map((r) => r.installments),
    Array<number>(11).fill(1),
  );
  assert.equal(rows.at(-1)!.period_end_at.getTime(), endAt.getTime());
  const billedPence = rows.reduce((sum, r) => sum + r.billed_premium_pence, 0);
  const usagePence = rows.reduce((sum, r) => sum + r.usage_premium_pence, 0);
  // No journeys: what is collected is the quote's fixed premium, upfront plus every installment.
  assert.equal(usagePence, 0);
  assert.equal(
    paidPence + billedPence,
    pence(quote.pricing.upfront_premium) + installmentPence * count,
    'the term collects the quote’s premium to the penny',
  );
});

test('cancelled in the third month: installments billed to the end of cover, none twice; the fees charged, nothing refunded', async () => {
  const { quote, reference } = await buyMonthly();
  const installmentPence = pence(quote.pricing['subscription_premium'] as number);
  await billingDay('2025-07-01');
  await billingDay('2025-08-01');
  clock.set('2025-08-15T12:00:00Z');
  const cancelled = await t.app.inject({
    method: 'DELETE',
    url: `/policys/${reference}`,
    headers: acme.sandbox,
    payload: { effective_date: Date.parse('2025-08-15T12:00:00Z') / 1000, reason: 'sold the car' },
  });
  assert.equal(cancelled.statusCode, 200, cancelled.body);
  await issueFinal(reference, new Date('2025-08-15T12:00:00Z'));
  const rows = await statementsOf(reference);
  // Installments fell due on 1 June (paid at purchase), 1 July and 1 August: the two later ones billed.
  assert.deepEqual(
    rows.map((r) => r.installments),
    [0, 1, 1],
  );
  assert.equal(
    rows.reduce((sum, r) => sum + r.subscription_premium_pence, 0),
    2 * installmentPence,
  );
  // The monthly plan has no upfront premium to refund pro rata: the cancellation charges its fees,
  // as it does for a policy whose first installment the statement run collected.
  const policy = (await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox })).json<{
    payments: Array<{ purpose: string; type: string; amount: number }>;
  }>();
  const settlement = policy.payments.filter((p) => p.purpose === 'cancellation');
  assert.deepEqual(
    settlement.map((p) => [p.type, pence(p.amount)]),
    [['charge', pence(quote.pricing['cancel_fee'] as number) + pence(quote.pricing['admin_fee'] as number)]],
  );
  assert.equal(policy.payments.filter((p) => p.type === 'refund').length, 0);
});
