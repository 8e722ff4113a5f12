import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { toPence } from '../../../platform/money.ts';
import { deriveValues } from './derived-values.ts';
import { EXAMPLE_QUOTE_INPUT, EXAMPLE_RATE_BOOK } from './example-rate-book.ts';
import type { QuoteInput, RateBookContent } from './rate-book.ts';
import { rate, ratePremiums } from './rate.ts';

const DAY_SECONDS = 86_400;
const dateIn = (from: number, to: number) =>
  fc
    .tuple(
      fc.integer({ min: from, max: to }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 28 }),
    )
    .map(([y, m, d]) => `${String(y)}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`);
/** Dates of birth: some too young for any band of the driver-age factor. */
const date = dateIn(1935, 2010);

/** Quotes that rate, and quotes that lack what a factor or the usage estimate needs. */
const quote = fc
  .record({
    startDay: fc.integer({ min: 0, max: 2000 }),
    termDays: fc.constantFrom(1, 30, 200, 365, 366),
    dob: fc.option(date, { freq: 20 }),
    driverDob: fc.option(date, { freq: 20 }),
    drivers: fc.integer({ min: 0, max: 2 }),
    group: fc.option(fc.integer({ min: 1, max: 50 }), { freq: 20 }),
    value: fc.option(fc.integer({ min: 500, max: 90_000 }), { freq: 20 }),
    postcode: fc.constantFrom('EC1A 1BB', 'SW1A 1AA', 'M1 1AE', 'LS1 4AP', 'ZZ9 9ZZ', ''),
    mileage: fc.option(fc.oneof(fc.integer({ min: 0, max: 40_000 }), fc.constant(1_000_000)), { freq: 20 }),
    ncd: fc.option(fc.integer({ min: 0, max: 12 }), { freq: 20 }),
    usage: fc.constantFrom('sdp', 'sdp_commuting', 'business', 'sdp', 'haulage'),
    plan: fc.constantFrom('single', 'monthly', undefined, 'single', 'monthly', 'weekly'),
    voluntaryExcess: fc.constantFrom(0, 100, 250, 500),
  })
  .map((q): QuoteInput => {
    const start = 1_600_000_000 + q.startDay * DAY_SECONDS;
    const driver = EXAMPLE_QUOTE_INPUT.additional_drivers?.[0];
    const quoted = {
      ...EXAMPLE_QUOTE_INPUT,
      policy: {
        ...EXAMPLE_QUOTE_INPUT.policy,
        start_date: start,
        end_date: start + q.termDays * DAY_SECONDS - 1,
        usage: q.usage,
        voluntary_excess: q.voluntaryExcess,
      },
      proposer: {
        ...EXAMPLE_QUOTE_INPUT.proposer,
        ...(q.dob === null ? {} : { dob: q.dob }),
        ...(q.ncd === null ? {} : { ncd: q.ncd }),
      },
      vehicle: {
        ...EXAMPLE_QUOTE_INPUT.vehicle,
        overnight_postcode: q.postcode,
        ...(q.group === null ? {} : { group_rating_50: q.group }),
        ...(q.value === null ? {} : { current_value: q.value }),
        ...(q.mileage === null ? {} : { estimated_yearly_mileage: q.mileage }),
      },
      additional_drivers:
        driver === undefined
          ? []
          : Array.from({ length: q.drivers }, () => ({
              ...driver,
              ...(q.driverDob === null ? {} : { dob: q.driverDob }),
            })),
      ...(q.plan === undefined ? {} : { installment_plan: q.plan }),
    };
    // A missing value is a missing key, as in stored terms.
    const proposer: Record<string, unknown> = quoted.proposer;
    const vehicle: Record<string, unknown> = quoted.vehicle;
    if (q.dob === null) delete proposer['dob'];
    if (q.ncd === null) delete proposer['ncd'];
    if (q.group === null) delete vehicle['group_rating_50'];
    if (q.value === null) delete vehicle['current_value'];
    if (q.mileage === null) delete vehicle['estimated_yearly_mileage'];
    return quoted as QuoteInput;
  });

const book = fc
  .record({
    base: fc.integer({ min: 1, max: 200_000 }),
    min: fc.integer({ min: 0, max: 50_000 }),
    span: fc.integer({ min: 0, max: 300_000 }),
    // Some rate a unit beyond what a policy takes (with the factors and IPT), some a long way beyond it.
    rate: fc.constantFrom('0.04', '0.04', '0.04', '200', '1000'),
  })
  .map(({ base, min, span, rate: baseRate }): RateBookContent => ({
    ...EXAMPLE_RATE_BOOK,
    base_rate_per_unit: baseRate,
    base_fixed_premium_pence: base,
    min_fixed_premium_pence: min,
    max_fixed_premium_pence: min + span,
  }));

test('ratePremiums gives the base premium and rate per unit that rate gives, and fails exactly when rate does', () => {
  let rated = 0;
  let unrated = 0;
  fc.assert(
    fc.property(book, quote, dateIn(2024, 2026), (content, input, onDate) => {
      const full = rate(content, input, onDate);
      const lean = ratePremiums(content, input, deriveValues(input, onDate));
      if (!full.ok) {
        unrated++;
        assert.equal(lean, null, JSON.stringify(full.problems));
        return;
      }
      rated++;
      assert.deepEqual(lean, {
        basePence: toPence(full.value.pricing.base_premium),
        usageRate: full.value.pricing.usage_rate,
      });
    }),
    { numRuns: 400 },
  );
  // Both sides of the equivalence were exercised.
  assert.ok(rated > 50 && unrated > 20, `rated ${String(rated)}, unrated ${String(unrated)}`);
});
