import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Decimal, isWholePence } from '../../../platform/money.ts';
import { MONEY_MAX, PricingSchema, USAGE_RATE_MAX } from '../../policies/rules/index.ts';
import { splitPremium } from '../../reports/rules/index.ts';
import { EXAMPLE_QUOTE_INPUT, EXAMPLE_RATE_BOOK } from './example-rate-book.ts';
import type { QuoteInput, RateBookContent, RatingFactor } from './rate-book.ts';
import { customerBreakdown, rate, termDays, type RatedPricing, type RatedQuote } from './rate.ts';

/** The worked example of docs/api.md: its JSON blocks and its table of breakdown figures. */
function workedExample() {
  const doc = readFileSync(new URL('../../../../docs/api.md', import.meta.url), 'utf8');
  const start = doc.indexOf('## Rating: how a price is made');
  const section = doc.slice(doc.indexOf('### Worked example', start), doc.indexOf('\n## ', start + 1));
  const blocks = [...section.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]!) as unknown);
  const figures = [...section.matchAll(/^\| `([a-z_.[\]0-9]+)`\s*\|.*\|\s*([^|]+?)\s*\|$/gm)].map((m) => ({
    path: m[1]!,
    value: m[2]!,
  }));
  return { book: blocks[0], quote: blocks[1], pricing: blocks[2], figures, text: section };
}

function rated(content: RateBookContent, input: QuoteInput, onDate = '2025-06-01'): RatedQuote {
  const result = rate(content, input, onDate);
  if (!result.ok) assert.fail(JSON.stringify(result.problems));
  return result.value;
}

function at(value: unknown, path: string): unknown {
  return path
    .split(/[.[\]]+/)
    .filter((key) => key !== '')
    .reduce<unknown>((inner, key) => (inner as Record<string, unknown>)[key], value);
}

const example = () => rated(EXAMPLE_RATE_BOOK, EXAMPLE_QUOTE_INPUT);

describe('rate: the worked example of docs/api.md', () => {
  const doc = workedExample();

  test('the doc shows the example rate book and quote exactly', () => {
    assert.deepEqual(doc.book, EXAMPLE_RATE_BOOK);
    assert.deepEqual(doc.quote, EXAMPLE_QUOTE_INPUT);
  });

  test("the doc's figures are the breakdown's, and its pricing block is the result", () => {
    const quote = example();
    assert.equal(doc.figures.length, 19);
    for (const { path, value } of doc.figures) assert.equal(String(at(quote.breakdown, path)), value, path);
    assert.deepEqual(doc.pricing, quote.pricing);
  });

  test('hand-computed: each factor kind, the driver who rates, the limits not applying', () => {
    const quote = example();
    const lines = quote.breakdown.factors;
    assert.deepEqual(
      lines.map((l) => [l.name, l.matched, l.factor, l.driver]),
      [
        ['driver-age', '[17, 21)', '2.2', 'additional_drivers[0]'],
        ['area', 'key EC1A', '1.3', null],
        ['vehicle-group', '[11, 21)', '1.05', null],
        ['no-claims', '[3, 5)', '0.8', null],
        ['use', 'key sdp_commuting', '1.1', null],
        ['convictions', 'key 1', '1.125', null],
        ['annual-distance', '[3000, 8000)', '1', null],
        ['voluntary-excess', 'key 100', '0.97', null],
      ],
    );
    assert.equal(quote.breakdown.fixed.limit_applied, null);
    assert.equal(quote.pricing.yearly_premium_estimate, 1644.96);
  });

  test('paid at once, the bordereau splits the upfront premium as the doc says', () => {
    const single = rated(EXAMPLE_RATE_BOOK, { ...EXAMPLE_QUOTE_INPUT, installment_plan: 'single' });
    assert.equal(single.pricing.upfront_premium, 861.29);
    assert.equal(single.pricing.subscription_premium, 0);
    assert.equal(single.pricing.subscription_installments, 0);
    assert.equal(single.pricing.upfront_rate, 1);
    const split = splitPremium(86_129, 12, 15);
    assert.deepEqual([split.iptPence, split.commissionPence, split.netPence], [9228, 11_535, 65_366]);
    assert.match(doc.text, /IPT £92\.28.*commission £115\.35.*£769\.01.*£653\.66/s);
  });
});

/** A copy of the example book with `edit` applied to its content. */
function withBook(edit: (book: { -readonly [K in keyof RateBookContent]: RateBookContent[K] }) => void) {
  const book = structuredClone(EXAMPLE_RATE_BOOK) as {
    -readonly [K in keyof RateBookContent]: RateBookContent[K];
  };
  edit(book);
  return book as RateBookContent;
}

describe('rate: rules', () => {
  test('a postcode area matches when the district has no row; an unlisted district takes the default', () => {
    const sw = rated(EXAMPLE_RATE_BOOK, {
      ...EXAMPLE_QUOTE_INPUT,
      vehicle: { ...EXAMPLE_QUOTE_INPUT.vehicle, overnight_postcode: 'SW1A 1AA' },
    });
    assert.deepEqual(
      [sw.breakdown.factors[1]!.matched, sw.breakdown.factors[1]!.factor],
      ['area SW', '1.15'],
    );
    const leeds = rated(EXAMPLE_RATE_BOOK, {
      ...EXAMPLE_QUOTE_INPUT,
      vehicle: { ...EXAMPLE_QUOTE_INPUT.vehicle, overnight_postcode: 'LS1 4AP' },
    });
    assert.deepEqual(
      [leeds.breakdown.factors[1]!.matched, leeds.breakdown.factors[1]!.factor],
      ['default', '1'],
    );
  });

  test('a missing value without a default is a problem naming the field; so is an unknown plan', () => {
    const { group_rating_50: _, ...vehicle } = EXAMPLE_QUOTE_INPUT.vehicle;
    const result = rate(EXAMPLE_RATE_BOOK, { ...EXAMPLE_QUOTE_INPUT, vehicle }, '2025-06-01');
    assert.deepEqual(result, {
      ok: false,
      problems: [{ path: 'vehicle.group_rating_50', message: 'is needed to rate vehicle-group' }],
    });
    const book = withBook((b) => (b.installment_plans = [{ kind: 'single' }]));
    const noPlan = rate(book, EXAMPLE_QUOTE_INPUT, '2025-06-01');
    assert.deepEqual(noPlan, {
      ok: false,
      problems: [{ path: 'installment_plan', message: 'must be one this rate book offers: single' }],
    });
    const over = rate(
      withBook(
        (b) =>
          (b.factors = b.factors.map((f, i) =>
            i === 2 ? { ...f, rows: f.rows.slice(0, 1) } : f,
          ) as RatingFactor[]),
      ),
      EXAMPLE_QUOTE_INPUT,
      '2025-06-01',
    );
    assert.deepEqual(over.ok ? [] : over.problems, [
      {
        path: 'vehicle.group_rating_50',
        message: '19 matches no row of vehicle-group, which has no default',
      },
    ]);
  });

  test('the minimum and maximum hold the fixed premium, and the breakdown says which applied', () => {
    const low = rated(
      withBook((b) => (b.min_fixed_premium_pence = 100_000)),
      EXAMPLE_QUOTE_INPUT,
    );
    assert.equal(low.breakdown.fixed.limit_applied, 'minimum');
    assert.equal(low.pricing.base_premium, 1120); // 100000 × 1.12 pence
    const high = rated(
      withBook((b) => (b.max_fixed_premium_pence = 50_000)),
      EXAMPLE_QUOTE_INPUT,
    );
    assert.equal(high.breakdown.fixed.limit_applied, 'maximum');
    assert.equal(high.pricing.base_premium, 560);
  });

  test('a short term is priced pro rata by days, and its yearly estimate scaled back to a year', () => {
    const june = rated(EXAMPLE_RATE_BOOK, {
      ...EXAMPLE_QUOTE_INPUT,
      installment_plan: 'single',
      policy: { ...EXAMPLE_QUOTE_INPUT.policy, end_date: 1_751_324_399 }, // 2025-06-30T23:59:59+01:00
    });
    assert.deepEqual([june.breakdown.fixed.term_days, june.breakdown.fixed.year_days], [30, 365]);
    // 76900.824 × 1.12 × 30 ÷ 365 = 7079.089552… → 7079; 6000 × 30 ÷ 365 = 493.15 → 493 miles.
    assert.equal(june.pricing.base_premium, 70.79);
    assert.equal(june.pricing.estimated_distance, 493);
    assert.equal(june.pricing.usage_premium, 60.15); // 0.1220 × 493 = 60.146
    // (7079 + 6015) × 365 ÷ 30 = 159310.33… → 159310
    assert.equal(june.pricing.yearly_premium_estimate, 1593.1);
  });

  test('a year from its start has 366 days when a 29 February falls in it', () => {
    const from = (date: string) => {
      const startSeconds = Date.parse(`${date}T12:00:00Z`) / 1000;
      const policy = {
        ...EXAMPLE_QUOTE_INPUT.policy,
        start_date: startSeconds,
        end_date: startSeconds + 86_400,
      };
      return termDays({ ...EXAMPLE_QUOTE_INPUT, policy }).yearDays;
    };
    assert.deepEqual(
      [
        '2024-01-15',
        '2024-02-28',
        '2024-02-29',
        '2024-03-01',
        '2023-03-01',
        '2023-02-28',
        '2100-01-01',
        '2000-01-01',
      ].map(from),
      [366, 366, 365, 365, 366, 365, 365, 366],
    );
  });

  test('a customer sees only the factors the version marks visible', () => {
    const shown = customerBreakdown(example().breakdown).factors.map((line) => line.name);
    assert.deepEqual(shown, ['driver-age', 'no-claims', 'voluntary-excess']);
  });
});

const factorDecimal = fc
  .integer({ min: 1, max: 5_000_000 })
  .map((n) => new Decimal(n).dividedBy(1_000_000).toString());

describe('rate: properties', () => {
  test('raising any one factor never lowers any premium', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: EXAMPLE_RATE_BOOK.factors.length - 1 }),
        factorDecimal,
        factorDecimal,
        fc.constantFrom('single' as const, 'monthly' as const),
        (index, a, b, plan) => {
          const [lower, higher] = new Decimal(a).lessThanOrEqualTo(b) ? [a, b] : [b, a];
          const setAll = (factor: string) =>
            withBook((book) => {
              const target = book.factors[index]!;
              const rows = target.rows.map((row) => ({ ...row, factor }));
              book.factors = book.factors.map((f, i) =>
                i === index ? ({ ...target, rows } as RatingFactor) : f,
              );
            });
          const p = (factor: string) =>
            rated(setAll(factor), { ...EXAMPLE_QUOTE_INPUT, installment_plan: plan }).pricing;
          const [low, high] = [p(lower), p(higher)];
          for (const field of [
            'base_premium',
            'upfront_premium',
            'subscription_premium',
            'usage_rate',
            'usage_premium',
            'yearly_premium_estimate',
          ] as const)
            assert.ok(low[field] <= high[field], `${field}: ${low[field]} > ${high[field]}`);
        },
      ),
    );
  });

  test('the fixed premium always lies within the limits (with IPT), and rounding is once and exact', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 500_000 }),
        fc.integer({ min: 0, max: 500_000 }),
        fc.integer({ min: 1, max: 2_000_000 }),
        factorDecimal,
        fc.integer({ min: 0, max: 200_000 }).map((n) => new Decimal(n).dividedBy(10_000).toString()),
        (x, y, base, factor, ipt) => {
          const [min, max] = x <= y ? [x, y] : [y, x];
          const book = withBook((b) => {
            b.min_fixed_premium_pence = min;
            b.max_fixed_premium_pence = max;
            b.base_fixed_premium_pence = base;
            b.ipt_rate = ipt;
            b.factors = [
              {
                name: 'one',
                source: 'policy_year',
                kind: 'keys',
                applies_to: 'both',
                rows: [{ key: '1', factor }],
              },
            ];
          });
          const quote = rated(book, EXAMPLE_QUOTE_INPUT);
          const withIpt = new Decimal(ipt).dividedBy(100).plus(1);
          const exact = Decimal.min(Decimal.max(new Decimal(base).times(factor), min), max).times(withIpt);
          const pence = Math.round(quote.pricing.base_premium * 100);
          assert.equal(pence, exact.toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber());
          assert.ok(pence >= new Decimal(min).times(withIpt).floor().toNumber());
          assert.ok(pence <= new Decimal(max).times(withIpt).ceil().toNumber());
          const rate4 = new Decimal(EXAMPLE_RATE_BOOK.base_rate_per_unit).times(factor).times(withIpt);
          assert.equal(
            quote.breakdown.per_unit.rounded,
            rate4.toDecimalPlaces(4, Decimal.ROUND_HALF_EVEN).toFixed(4),
          );
        },
      ),
    );
  });

  test('a deposit fee, paid only for the monthly plan, is a charge for credit the APR counts', () => {
    assert.equal(example().breakdown.installments.apr_percent, '13.7');
    const book = withBook((b) => (b.fees = { ...b.fees, deposit_fee_pence: 5000 }));
    // By hand: 86128.92288 advanced, less the £50 fee, repaid by 12 of 86128.92288 × 1.06 ÷ 12, the first
    // at once: Σ 7608.0548544 × (1 + X)^(−k/12) = 81128.92288 at X = 30.1999… %, so 30.2.
    assert.equal(rated(book, EXAMPLE_QUOTE_INPUT).breakdown.installments.apr_percent, '30.2');
    const single = rated(book, { ...EXAMPLE_QUOTE_INPUT, installment_plan: 'single' });
    assert.equal(single.breakdown.installments.apr_percent, '0.0');
  });

  test('monthly installments are the loaded premium ÷ n rounded once, half to even', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 12 }), fc.integer({ min: 0, max: 999_999 }), (n, loading) => {
        const loadingRate = new Decimal(loading).dividedBy(1_000_000).toString();
        const book = withBook(
          (b) => (b.installment_plans = [{ kind: 'monthly', installments: n, loading_rate: loadingRate }]),
        );
        const quote = rated(book, EXAMPLE_QUOTE_INPUT);
        const exact = new Decimal(quote.breakdown.fixed.exact_pence)
          .times(new Decimal(loadingRate).plus(1))
          .dividedBy(n);
        assert.equal(
          quote.breakdown.installments.installment_pence,
          exact.toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber(),
        );
        assert.equal(quote.pricing.subscription_installments, n);
      }),
      { numRuns: 50 },
    );
  });
});

/** Each number of `pricing` that the policy schema bounds, with its bounds as the schema holds them. */
function beyondPolicy(pricing: RatedPricing): string[] {
  const wrong: string[] = [];
  for (const [field, value] of Object.entries(pricing)) {
    if (typeof value !== 'number') continue;
    const schema = (PricingSchema.properties as Record<string, { minimum?: number; maximum?: number }>)[
      field
    ];
    if (schema === undefined) wrong.push(`${field} is not a pricing field`);
    else if (!Number.isFinite(value)) wrong.push(`${field} ${String(value)} is not finite`);
    else if (value < (schema.minimum ?? -Infinity) || value > (schema.maximum ?? Infinity))
      wrong.push(
        `${field} ${String(value)} is beyond [${String(schema.minimum)}, ${String(schema.maximum)}]`,
      );
  }
  for (const field of ['upfront_premium', 'subscription_premium', 'usage_premium', 'base_premium'] as const)
    if (!isWholePence(pricing[field])) wrong.push(`${field} ${String(pricing[field])} is not whole pence`);
  return wrong;
}

const YEAR_SECONDS = 365 * 86_400;

describe('rate: a price a policy could not hold is never made', () => {
  const problemsOf = (content: RateBookContent, input: QuoteInput = EXAMPLE_QUOTE_INPUT) => {
    const result = rate(content, input, '2025-06-01');
    if (result.ok) assert.fail(JSON.stringify(result.value.pricing));
    return result.problems;
  };

  test('a rate per unit beyond the policy’s maximum names the product, whose rate book prices it so', () => {
    // 1000 is a base rate validation takes; the factors and IPT take the rate with IPT to £3049.20.
    assert.deepEqual(problemsOf(withBook((b) => (b.base_rate_per_unit = '1000'))), [
      {
        path: 'policy.product_reference',
        message: `has a rate book that prices usage at £3049.2000 a mile with IPT, more than a policy takes (usage_rate at most ${String(USAGE_RATE_MAX)})`,
      },
    ]);
    // Huge per-unit factors: the figure is shown, never NaN nor Infinity.
    const huge = withBook(
      (b) =>
        (b.factors = b.factors.map((f) =>
          f.applies_to === 'per_unit'
            ? { ...f, rows: f.rows.map((row) => ({ ...row, factor: '999999999999' })) }
            : f,
        ) as RatingFactor[]),
    );
    const [problem, ...others] = problemsOf(huge);
    assert.deepEqual(others, []);
    assert.equal(problem?.path, 'policy.product_reference');
    assert.match(problem.message, /^has a rate book that prices usage at £[1-9]\.\d+e\+\d+ a mile with IPT/);
  });

  test('a usage premium or yearly estimate beyond MONEY_MAX names the estimated distance', () => {
    const book = withBook((b) => (b.base_rate_per_unit = '300'));
    const far = {
      ...EXAMPLE_QUOTE_INPUT,
      vehicle: { ...EXAMPLE_QUOTE_INPUT.vehicle, estimated_yearly_mileage: 1_000_000 },
    };
    const [problem, ...others] = problemsOf(book, far);
    assert.deepEqual(others, []);
    assert.equal(problem?.path, 'vehicle.estimated_yearly_mileage');
    assert.match(
      problem.message,
      new RegExp(
        `^makes the usage_premium £\\d+\\.\\d\\d, more than a policy takes \\(at most £${String(MONEY_MAX)}\\)$`,
      ),
    );
    // The same rate on the quote's own distance fits.
    assert.deepEqual(beyondPolicy(rated(book, EXAMPLE_QUOTE_INPUT).pricing), []);
  });

  test('a fixed premium or a distance beyond the policy’s limits over a long term names end_date', () => {
    const dear = withBook((b) => {
      b.min_fixed_premium_pence = 100_000_000;
      b.max_fixed_premium_pence = 100_000_000;
      b.ipt_rate = '100';
      b.installment_plans = [{ kind: 'single' }];
    });
    const start = EXAMPLE_QUOTE_INPUT.policy.start_date;
    const long = (years: number, mileage = 6000) => ({
      ...EXAMPLE_QUOTE_INPUT,
      installment_plan: 'single' as const,
      policy: { ...EXAMPLE_QUOTE_INPUT.policy, end_date: start + years * YEAR_SECONDS },
      vehicle: { ...EXAMPLE_QUOTE_INPUT.vehicle, estimated_yearly_mileage: mileage },
    });
    // £2,000,000 a year with IPT: 50 years fit exactly, a day more does not.
    assert.deepEqual(beyondPolicy(rated(dear, long(50)).pricing), []);
    const [problem, ...others] = problemsOf(dear, long(60));
    assert.deepEqual(others, []);
    assert.equal(problem?.path, 'policy.end_date');
    assert.match(
      problem.message,
      /^makes a term of 21900 days whose base_premium is £120000000\.00, more than/,
    );
    const distance = problemsOf(EXAMPLE_RATE_BOOK, long(60, 200_000));
    assert.equal(distance[0]?.path, 'policy.end_date');
    assert.match(
      distance[0].message,
      /estimated distance is 12000000 miles, .*estimated_distance at most 10000000/,
    );
  });

  test('a total excess beyond MONEY_MAX names the voluntary excess', () => {
    const input = {
      ...EXAMPLE_QUOTE_INPUT,
      policy: { ...EXAMPLE_QUOTE_INPUT.policy, compulsory_excess: MONEY_MAX },
    };
    assert.deepEqual(problemsOf(EXAMPLE_RATE_BOOK, input), [
      {
        path: 'policy.voluntary_excess',
        message: `and compulsory_excess make a total_excess of £100000100.00, more than a policy takes (at most £${String(MONEY_MAX)})`,
      },
    ]);
  });

  test('property: every amount of a price made is finite and within the policy schema’s limits', () => {
    let made = 0;
    let refused = 0;
    const perUnit = fc.oneof(factorDecimal, fc.constantFrom('999999999999', '1000', '123456.789'));
    fc.assert(
      fc.property(
        fc.constantFrom('0.04', '0.04', '1', '99.5', '333.33', '1000'),
        perUnit,
        fc.integer({ min: 0, max: 100_000_000 }),
        fc.constantFrom('0', '12', '100'),
        fc.oneof(fc.integer({ min: 0, max: 40_000 }), fc.integer({ min: 0, max: 1_000_000 })),
        fc.oneof(fc.integer({ min: 1, max: 366 }), fc.integer({ min: 1, max: 75 * 366 })),
        fc.constantFrom(0, 250, 0, 250, 99_999_999.99, MONEY_MAX),
        fc.constantFrom('single' as const, 'monthly' as const),
        (base, unitFactor, maxPence, ipt, mileage, days, compulsory, plan) => {
          const book = withBook((b) => {
            b.base_rate_per_unit = base;
            b.min_fixed_premium_pence = Math.min(b.min_fixed_premium_pence, maxPence);
            b.max_fixed_premium_pence = maxPence;
            b.ipt_rate = ipt;
            b.factors = b.factors.map((f) =>
              f.name === 'convictions'
                ? { ...f, rows: f.rows.map((row) => ({ ...row, factor: unitFactor })) }
                : f,
            ) as RatingFactor[];
          });
          const input: QuoteInput = {
            ...EXAMPLE_QUOTE_INPUT,
            installment_plan: plan,
            policy: {
              ...EXAMPLE_QUOTE_INPUT.policy,
              end_date: EXAMPLE_QUOTE_INPUT.policy.start_date + days * 86_400 - 1,
              compulsory_excess: compulsory,
            },
            vehicle: { ...EXAMPLE_QUOTE_INPUT.vehicle, estimated_yearly_mileage: mileage },
          };
          const result = rate(book, input, '2025-06-01');
          if (!result.ok) {
            refused++;
            assert.ok(result.problems.length > 0);
            for (const problem of result.problems) assert.doesNotMatch(problem.message, /NaN|Infinity/);
            return;
          }
          made++;
          assert.deepEqual(beyondPolicy(result.value.pricing), []);
        },
      ),
      { numRuns: 300 },
    );
    assert.ok(made > 30 && refused > 30, `made ${String(made)}, refused ${String(refused)}`);
  });
});
