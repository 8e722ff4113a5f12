import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  addToTally,
  bandOf,
  emptyTally,
  IMPACT_BANDS,
  impactReport,
  mergeTally,
  policyImpact,
  type PolicyImpact,
  type StoredTerms,
} from './impact.ts';
import { EXAMPLE_QUOTE_INPUT, EXAMPLE_RATE_BOOK } from './example-rate-book.ts';
import type { RatingFactor } from './rate-book.ts';

const rated = (currentPence: number, newPence: number): PolicyImpact => ({
  kind: 'rated',
  currentPence,
  newPence,
  currentRateMicros: 50_000,
  newRateMicros: 44_800,
  referred: false,
});

test('a change of exactly 5 % or 10 % either way falls in the band nearer zero', () => {
  const cases: [number, number, (typeof IMPACT_BANDS)[number]][] = [
    [10_000, 8_999, 'below_minus_10'],
    [10_000, 9_000, 'minus_10_to_minus_5'],
    [10_000, 9_499, 'minus_10_to_minus_5'],
    [10_000, 9_500, 'minus_5_to_0'],
    [10_000, 9_999, 'minus_5_to_0'],
    [10_000, 10_000, 'unchanged'],
    [10_000, 10_001, '0_to_5'],
    [10_000, 10_500, '0_to_5'],
    [10_000, 10_501, '5_to_10'],
    [10_000, 11_000, '5_to_10'],
    [10_000, 11_001, 'above_10'],
    [0, 1, 'above_10'],
    [0, 0, 'unchanged'],
  ];
  for (const [from, to, band] of cases) assert.equal(IMPACT_BANDS[bandOf(from, to)], band, `${from} → ${to}`);
});

test('tallies merged in any grouping give the report one pass gives', () => {
  const policy = fc.record({
    reference: fc.stringMatching(/^[a-z]{1,6}$/),
    impact: fc.oneof(
      fc
        .tuple(fc.integer({ min: 0, max: 500_000 }), fc.integer({ min: 0, max: 500_000 }))
        .map(([a, b]) => rated(a, b)),
      fc.constant<PolicyImpact>({ kind: 'declined', reasons: ['too young'] }),
      fc.constant<PolicyImpact>({ kind: 'unrated', problems: [{ path: 'policy.usage', message: 'x' }] }),
    ),
  });
  fc.assert(
    fc.property(fc.array(policy, { maxLength: 80 }), fc.integer({ min: 1, max: 10 }), (policies, size) => {
      const whole = emptyTally();
      for (const p of policies) addToTally(whole, p.reference, p.impact);
      const merged = emptyTally();
      for (let i = 0; i < policies.length; i += size) {
        const part = emptyTally();
        for (const p of policies.slice(i, i + size)) addToTally(part, p.reference, p.impact);
        mergeTally(merged, part);
      }
      assert.deepEqual(impactReport(merged), impactReport(whole));
      const report = impactReport(whole);
      assert.equal(report.policies, report.rated + report.declined.policies + report.unrated.policies);
      assert.equal(
        report.bands.reduce((n, b) => n + b.policies, 0),
        report.rated,
      );
      assert.ok(report.movers.length <= 20);
    }),
  );
});

test('the movers are the largest changes either way, ties by reference', () => {
  const tally = emptyTally();
  for (let i = 0; i < 30; i++)
    addToTally(tally, `p${String(i).padStart(2, '0')}`, rated(10_000, 10_000 + (i % 2 === 0 ? i : -i) * 100));
  addToTally(tally, 'a-tie', rated(10_000, 10_000 + 2_900));
  const movers = impactReport(tally).movers;
  assert.equal(movers.length, 20);
  assert.deepEqual(
    movers.slice(0, 3).map((m) => [m.policy_reference, m.change]),
    [
      ['p29', -29],
      ['a-tie', 29],
      ['p28', 28],
    ].sort(
      (a, b) => Math.abs(Number(b[1])) - Math.abs(Number(a[1])) || (String(a[0]) < String(b[0]) ? -1 : 1),
    ),
  );
  assert.equal(movers.at(-1)?.policy_reference, 'p11');
});

test('a version that prices a policy beyond what a policy takes leaves it unrated, saying why: no NaN', () => {
  const terms: StoredTerms = {
    ...EXAMPLE_QUOTE_INPUT,
    pricing: { base_premium: 861.29, upfront_premium: 0, subscription_premium: 76.08, usage_rate: 0.122 },
  };
  const huge = {
    ...EXAMPLE_RATE_BOOK,
    factors: EXAMPLE_RATE_BOOK.factors.map((f) =>
      f.applies_to === 'per_unit'
        ? { ...f, rows: f.rows.map((row) => ({ ...row, factor: '999999999999' })) }
        : f,
    ) as RatingFactor[],
  };
  for (const content of [{ ...EXAMPLE_RATE_BOOK, base_rate_per_unit: '1000' }, huge]) {
    const impact = policyImpact(content, terms);
    if (impact.kind !== 'unrated') assert.fail(JSON.stringify(impact));
    assert.deepEqual(
      impact.problems.map((p) => p.path),
      ['policy.product_reference'],
    );
    const tally = emptyTally();
    addToTally(tally, 'MP-1', impact);
    addToTally(tally, 'MP-2', policyImpact(EXAMPLE_RATE_BOOK, terms));
    const report = impactReport(tally);
    assert.deepEqual([report.rated, report.unrated.policies], [1, 1]);
    assert.deepEqual([report.total.new_premium, report.total.new_usage_rate_mean], [861.29, 0.122]);
    assert.equal(report.unrated.reasons[0]?.path, 'policy.product_reference');
  }
});
