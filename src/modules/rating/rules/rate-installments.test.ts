import assert from 'node:assert/strict';
import { test } from 'node:test';
import { installmentsDue } from '../../statements/rules/index.ts';
import { EXAMPLE_QUOTE_INPUT, EXAMPLE_RATE_BOOK } from './example-rate-book.ts';
import type { QuoteInput, RateBookContent } from './rate-book.ts';
import { rate } from './rate.ts';

const DAY_S = 86_400;
const START_S = EXAMPLE_QUOTE_INPUT.policy.start_date;
const MONTHLY = { kind: 'monthly', installments: 12, loading_rate: '0.06' } as const;

/** The example quote over `days` days, on `plan` (undefined: the rate book's first). */
function quoteOf(days: number, plan?: 'single' | 'monthly'): QuoteInput {
  const { installment_plan: _asked, ...input } = EXAMPLE_QUOTE_INPUT;
  return {
    ...input,
    ...(plan === undefined ? {} : { installment_plan: plan }),
    policy: { ...EXAMPLE_QUOTE_INPUT.policy, end_date: START_S + days * DAY_S - 1 },
  };
}

test('a monthly plan has no more installments than the term has billing dates, and bills them all', () => {
  for (const [days, expected] of [
    [40, 2],
    [75, 3],
    [365, 12],
  ] as const) {
    const result = rate(EXAMPLE_RATE_BOOK, quoteOf(days, 'monthly'), '2025-06-01');
    if (!result.ok) assert.fail(JSON.stringify(result.problems));
    const { pricing, breakdown } = result.value;
    assert.equal(pricing.subscription_installments, expected, `${String(days)} days`);
    // Every installment the statements will bill is one of them: nothing of the premium is left unbilled.
    const billed = installmentsDue({
      policyStart: new Date(START_S * 1000),
      billingDay: EXAMPLE_QUOTE_INPUT.policy.billing_day_date ?? 1,
      count: pricing.subscription_installments,
      periodStart: new Date(START_S * 1000),
      periodEnd: new Date(EXAMPLE_QUOTE_INPUT.policy.start_date * 1000 + days * DAY_S * 1000 - 1000),
    });
    assert.equal(billed.length, expected);
    const total = Number(breakdown.installments.exact_total_pence);
    assert.ok(
      Math.abs(pricing.subscription_premium * 100 * expected - total) < expected,
      `${String(days)} days`,
    );
  }
});

test('a term with one billing date has no monthly plan: the default is a single payment, or a problem', () => {
  const asked = rate(EXAMPLE_RATE_BOOK, quoteOf(10, 'monthly'), '2025-06-01');
  if (asked.ok) assert.fail('a monthly plan over ten days');
  assert.deepEqual(
    asked.problems.map((p) => p.path),
    ['installment_plan'],
  );

  const monthlyFirst: RateBookContent = {
    ...EXAMPLE_RATE_BOOK,
    installment_plans: [MONTHLY, { kind: 'single' }],
  };
  const fallen = rate(monthlyFirst, quoteOf(10), '2025-06-01');
  if (!fallen.ok) assert.fail(JSON.stringify(fallen.problems));
  assert.equal(fallen.value.pricing.subscription_installments, 0);
  assert.equal(fallen.value.breakdown.installments.plan, 'single');
  // A year on the same book keeps its monthly plan.
  const year = rate(monthlyFirst, quoteOf(365), '2025-06-01');
  assert.equal(year.ok && year.value.pricing.subscription_installments, 12);

  const monthlyOnly: RateBookContent = { ...EXAMPLE_RATE_BOOK, installment_plans: [MONTHLY] };
  assert.equal(rate(monthlyOnly, quoteOf(10), '2025-06-01').ok, false);
});
