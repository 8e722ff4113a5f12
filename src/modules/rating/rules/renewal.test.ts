import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Decimal } from '../../../platform/money.ts';
import { EXAMPLE_QUOTE_INPUT, EXAMPLE_RATE_BOOK } from './example-rate-book.ts';
import type { QuoteInput, RateBookContent, RatingFactor } from './rate-book.ts';
import { rate } from './rate.ts';
import { heldToNotice, renewalPrice } from './renewal.ts';

const ON = '2026-06-01';
const renewing = (year: number): QuoteInput => ({
  ...EXAMPLE_QUOTE_INPUT,
  policy: {
    ...EXAMPLE_QUOTE_INPUT.policy,
    policy_year: year,
    start_date: 1_780_268_400,
    end_date: 1_811_804_399,
  },
});
/** The example book with a tenure factor over policy_year (renewals loaded or discounted). */
const withTenure = (fixed: string, perUnit: string): RateBookContent => ({
  ...EXAMPLE_RATE_BOOK,
  factors: [
    ...EXAMPLE_RATE_BOOK.factors,
    {
      name: 'tenure-fixed',
      source: 'policy_year',
      kind: 'bands',
      applies_to: 'fixed',
      rows: [
        { from: 1, to: 2, factor: '1' },
        { from: 2, to: null, factor: fixed },
      ],
    },
    {
      name: 'tenure-unit',
      source: 'policy_year',
      kind: 'bands',
      applies_to: 'per_unit',
      rows: [
        { from: 1, to: 2, factor: '1' },
        { from: 2, to: null, factor: perUnit },
      ],
    },
  ] as RatingFactor[],
});

function priced(content: RateBookContent, input: QuoteInput) {
  const result = renewalPrice(content, input, ON, {
    upfront_premium: 0,
    subscription_premium: 70,
    usage_rate: 0.11,
  });
  if (!result.ok) assert.fail(JSON.stringify(result.problems));
  return result.value;
}

describe('renewalPrice', () => {
  test('a loaded renewal is held to the new-business price, part by part', () => {
    const result = priced(withTenure('1.2', '1.1'), renewing(2));
    assert.equal(result.cap_applied, true);
    assert.deepEqual(result.capped, ['fixed', 'per_unit']);
    assert.ok(result.renewal.pricing.subscription_premium > result.new_business.pricing.subscription_premium);
    assert.equal(result.offered.subscription_premium, result.new_business.pricing.subscription_premium);
    assert.equal(result.offered.usage_rate, result.new_business.pricing.usage_rate);
    assert.equal(result.offered.yearly_premium_estimate, result.new_business.pricing.yearly_premium_estimate);
    assert.deepEqual(result.last_year, { upfront_premium: 0, subscription_premium: 70, usage_rate: 0.11 });
  });

  test('a renewal below the new-business price is offered as rated; one part may be capped alone', () => {
    const cheaper = priced(withTenure('0.9', '0.95'), renewing(3));
    assert.equal(cheaper.cap_applied, false);
    assert.deepEqual(cheaper.offered, cheaper.renewal.pricing);
    const mixed = priced(withTenure('0.9', '1.3'), renewing(3));
    assert.deepEqual(mixed.capped, ['per_unit']);
    assert.equal(mixed.offered.base_premium, mixed.renewal.pricing.base_premium);
    assert.equal(mixed.offered.usage_rate, mixed.new_business.pricing.usage_rate);
    // 12 installments and the usage estimate of the mix.
    const expected = new Decimal(mixed.offered.subscription_premium)
      .times(12)
      .plus(mixed.offered.usage_premium);
    assert.equal(mixed.offered.yearly_premium_estimate, expected.toNumber());
  });

  test('the new-business price is the same risk as new business on the same version', () => {
    const result = priced(EXAMPLE_RATE_BOOK, renewing(4));
    const asNew = rate(EXAMPLE_RATE_BOOK, renewing(1), ON);
    assert.ok(asNew.ok);
    assert.deepEqual(result.new_business, asNew.value);
    assert.equal(result.cap_applied, false);
  });

  test('a renewal is never offered above its new-business price, whatever the tenure factors', () => {
    const factor = fc
      .integer({ min: 1, max: 3_000_000 })
      .map((n) => new Decimal(n).dividedBy(1_000_000).toString());
    fc.assert(
      fc.property(
        factor,
        factor,
        fc.integer({ min: 2, max: 30 }),
        fc.constantFrom('single' as const, 'monthly' as const),
        (fixed, unit, year, plan) => {
          const { offered, new_business: nb } = priced(withTenure(fixed, unit), {
            ...renewing(year),
            installment_plan: plan,
          });
          for (const field of [
            'upfront_premium',
            'subscription_premium',
            'base_premium',
            'usage_rate',
            'usage_premium',
            'yearly_premium_estimate',
          ] as const)
            assert.ok(
              offered[field] <= nb.pricing[field],
              `${field}: ${offered[field]} > ${nb.pricing[field]}`,
            );
        },
      ),
      { numRuns: 200 },
    );
  });

  test('a renewal that cannot be rated says why', () => {
    const { group_rating_50: _, ...vehicle } = EXAMPLE_QUOTE_INPUT.vehicle;
    const result = renewalPrice(EXAMPLE_RATE_BOOK, { ...renewing(2), vehicle }, ON, null);
    assert.equal(result.ok, false);
  });

  test('a renewal the version prices beyond what a policy takes is refused, naming the product', () => {
    const result = renewalPrice({ ...EXAMPLE_RATE_BOOK, base_rate_per_unit: '1000' }, renewing(2), ON, null);
    assert.deepEqual(result.ok ? [] : result.problems.map((p) => p.path), ['policy.product_reference']);
  });
});

describe('heldToNotice', () => {
  const days = (result: ReturnType<typeof priced>) => ({
    termDays: result.renewal.breakdown.fixed.term_days,
    yearDays: result.renewal.breakdown.fixed.year_days,
  });

  test('a renewal rated higher than its notice takes the notice’s parts, and so its price', () => {
    const notice = priced(withTenure('0.9', '0.95'), renewing(3));
    const atEnd = priced(withTenure('1', '1'), renewing(3));
    assert.ok(atEnd.offered.subscription_premium > notice.offered.subscription_premium);
    assert.ok(atEnd.offered.usage_rate > notice.offered.usage_rate);
    const held = heldToNotice(atEnd.offered, notice.offered, days(atEnd));
    assert.deepEqual(held.held, ['fixed', 'per_unit']);
    assert.deepEqual(held.pricing, notice.offered, 'the price its notice stated, to the penny');
  });

  test('a renewal rated lower keeps its own price; one part may be held alone', () => {
    const notice = priced(withTenure('1', '1'), renewing(3));
    const cheaper = priced(withTenure('0.9', '0.95'), renewing(3));
    assert.deepEqual(heldToNotice(cheaper.offered, notice.offered, days(cheaper)), {
      pricing: cheaper.offered,
      held: [],
    });
    const mixed = priced(withTenure('0.9', '1'), renewing(3));
    const lowRate = priced(withTenure('1', '0.95'), renewing(3)).offered;
    const held = heldToNotice(mixed.offered, lowRate, days(mixed));
    assert.deepEqual(held.held, ['per_unit']);
    assert.equal(held.pricing.subscription_premium, mixed.offered.subscription_premium);
    assert.equal(held.pricing.usage_rate, lowRate.usage_rate);
    const expected = new Decimal(held.pricing.subscription_premium).times(12).plus(lowRate.usage_premium);
    assert.equal(held.pricing.yearly_premium_estimate, expected.toNumber());
  });

  test('the renewal never costs more than its notice, part by part, whatever both were rated on', () => {
    const factor = fc
      .integer({ min: 1, max: 3_000_000 })
      .map((n) => new Decimal(n).dividedBy(1_000_000).toString());
    fc.assert(
      fc.property(factor, factor, factor, factor, (fixedThen, unitThen, fixedNow, unitNow) => {
        const notice = priced(withTenure(fixedThen, unitThen), renewing(3)).offered;
        const atEnd = priced(withTenure(fixedNow, unitNow), renewing(3));
        const { pricing } = heldToNotice(atEnd.offered, notice, days(atEnd));
        for (const field of [
          'subscription_premium',
          'usage_rate',
          'usage_premium',
          'yearly_premium_estimate',
        ] as const)
          assert.ok(
            pricing[field] <= Math.min(notice[field], atEnd.offered[field]),
            `${field}: ${pricing[field]} above ${notice[field]} or ${atEnd.offered[field]}`,
          );
      }),
    );
  });
});
