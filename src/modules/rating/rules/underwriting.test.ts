import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { EXAMPLE_QUOTE_INPUT, EXAMPLE_RATE_BOOK } from './example-rate-book.ts';
import type { Condition, QuoteInput, RateBookContent, UnderwritingRule } from './rate-book.ts';
import { decide } from './underwriting.ts';

const ON = '2025-06-01';
const driver = EXAMPLE_QUOTE_INPUT.additional_drivers![0]!;
const withDriverBorn = (dob: string): QuoteInput => ({
  ...EXAMPLE_QUOTE_INPUT,
  additional_drivers: [{ ...driver, dob }],
});
const withRules = (rules: readonly UnderwritingRule[]): RateBookContent => ({
  ...EXAMPLE_RATE_BOOK,
  underwriting_rules: rules,
});
const rule = (
  outcome: 'decline' | 'refer',
  when: Condition,
  reason = `${outcome} ${JSON.stringify(when)}`,
) => ({
  outcome,
  reason,
  when,
});

describe('decide', () => {
  test('the example quote is accepted', () => {
    assert.deepEqual(decide(EXAMPLE_RATE_BOOK, EXAMPLE_QUOTE_INPUT, ON), { decision: 'accept', reasons: [] });
  });

  test('a driver under 17 on the rating date declines; 17 that day does not', () => {
    assert.equal(decide(EXAMPLE_RATE_BOOK, withDriverBorn('2008-06-02'), ON).decision, 'decline');
    assert.equal(decide(EXAMPLE_RATE_BOOK, withDriverBorn('2008-06-01'), ON).decision, 'accept');
  });

  test('a ban in the last three years declines, one before does not', () => {
    const banned = (date: string): QuoteInput => ({
      ...EXAMPLE_QUOTE_INPUT,
      proposer: {
        ...EXAMPLE_QUOTE_INPUT.proposer,
        convictions: [{ code: 'DR10', date, points: 3, ban: 12 }],
      },
    });
    assert.deepEqual(decide(EXAMPLE_RATE_BOOK, banned('2022-06-01'), ON), {
      decision: 'decline',
      reasons: [
        { rule: 2, outcome: 'decline', reason: 'A driver was banned from driving in the last three years.' },
      ],
    });
    assert.equal(decide(EXAMPLE_RATE_BOOK, banned('2022-05-31'), ON).decision, 'accept');
  });

  test('decline beats refer, and every matching reason is given, declines first', () => {
    const input: QuoteInput = {
      ...withDriverBorn('2010-01-01'),
      vehicle: {
        ...EXAMPLE_QUOTE_INPUT.vehicle,
        is_import: true,
        group_rating_50: 46,
        estimated_yearly_mileage: 25_000,
      },
    };
    const result = decide(EXAMPLE_RATE_BOOK, input, ON);
    assert.equal(result.decision, 'decline');
    assert.deepEqual(
      result.reasons.map((r) => [r.rule, r.outcome]),
      [
        [0, 'decline'],
        [1, 'decline'],
        [3, 'refer'],
        [4, 'refer'],
      ],
    );
  });

  test('any/all, lists, dates and quote paths; an absent value matches nothing', () => {
    const check = (when: Condition, input: QuoteInput = EXAMPLE_QUOTE_INPUT) =>
      decide(withRules([rule('refer', when)]), input, ON).decision;
    assert.equal(check({ field: 'postcode_district', op: 'in', value: ['EC1A', 'E1'] }), 'refer');
    assert.equal(check({ field: 'postcode_area', op: 'not_in', value: ['EC'] }), 'accept');
    assert.equal(check({ field: 'proposer.dob', op: 'lt', value: '1990-01-01' }), 'refer');
    assert.equal(check({ field: 'proposer.dob', op: 'gt', value: 1990 }), 'accept');
    assert.equal(check({ field: 'vehicle.make', op: 'eq', value: 'Volkswagen' }), 'refer');
    assert.equal(check({ field: 'vehicle.fuel', op: 'ne', value: 'diesel' }), 'accept'); // absent
    assert.equal(check({ all: [] }), 'refer');
    assert.equal(check({ any: [] }), 'accept');
    assert.equal(
      check({
        all: [
          { field: 'youngest_driver_age', op: 'lt', value: 21 },
          {
            any: [
              { field: 'points_in_5_years', op: 'gte', value: 3 },
              { field: 'cover', op: 'eq', value: 'tpo' },
            ],
          },
        ],
      }),
      'refer',
    );
    assert.equal(check({ field: 'min_years_licensed', op: 'eq', value: 3 }), 'refer');
    assert.equal(check({ field: 'driver_count', op: 'eq', value: 2 }), 'refer');
  });

  test('the decision and the set of reasons never depend on the order of the rules', () => {
    const fields: [string, number][] = [
      ['youngest_driver_age', 25],
      ['vehicle_group', 15],
      ['convictions_in_5_years', 0],
      ['claims_in_5_years', 0],
      ['estimated_annual_distance', 5000],
    ];
    const ruleArb = fc.record({
      outcome: fc.constantFrom('decline' as const, 'refer' as const),
      reason: fc.string({ minLength: 1, maxLength: 5 }),
      when: fc.record({
        field: fc.constantFrom(...fields.map(([f]) => f)),
        op: fc.constantFrom('lt' as const, 'gt' as const, 'eq' as const, 'ne' as const),
        value: fc.integer({ min: 0, max: 30_000 }),
      }),
    });
    fc.assert(
      fc.property(
        fc
          .array(ruleArb, { maxLength: 8 })
          .chain((rules) =>
            fc.tuple(
              fc.constant(rules),
              fc.shuffledSubarray(rules, { minLength: rules.length, maxLength: rules.length }),
            ),
          ),
        ([rules, shuffled]) => {
          const a = decide(withRules(rules), EXAMPLE_QUOTE_INPUT, ON);
          const b = decide(withRules(shuffled), EXAMPLE_QUOTE_INPUT, ON);
          assert.equal(a.decision, b.decision);
          const key = (r: { outcome: string; reason: string }) => `${r.outcome}:${r.reason}`;
          assert.deepEqual(a.reasons.map(key).sort(), b.reasons.map(key).sort());
          const expected = rules.some(
            (r) => r.outcome === 'decline' && a.reasons.some((m) => m.outcome === 'decline'),
          )
            ? 'decline'
            : a.reasons.length > 0
              ? 'refer'
              : 'accept';
          assert.equal(a.decision, expected);
        },
      ),
    );
  });
});
