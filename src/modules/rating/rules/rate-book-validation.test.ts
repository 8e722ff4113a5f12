import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MONEY_MAX, USAGE_RATE_MAX } from '../../policies/rules/index.ts';
import { EXAMPLE_RATE_BOOK } from './example-rate-book.ts';
import { LIMITS, validateRateBookContent, type ContentProblem } from './rate-book-validation.ts';

/** A deep copy of the example with each `path` (as problems name cells) set to its value; undefined deletes. */
function edited(changes: Record<string, unknown>): unknown {
  const copy: unknown = structuredClone(EXAMPLE_RATE_BOOK);
  for (const [path, value] of Object.entries(changes)) {
    const keys = path.split(/[.[\]]+/).filter((key) => key !== '');
    const last = keys.pop()!;
    let at = copy as Record<string, unknown>;
    for (const key of keys) at = at[key] as Record<string, unknown>;
    if (value === undefined) Reflect.deleteProperty(at, last);
    else at[last] = value;
  }
  return copy;
}

function problemsOf(content: unknown): readonly ContentProblem[] {
  const result = validateRateBookContent(content);
  if (result.ok) assert.fail('expected problems');
  return result.problems;
}

const paths = (problems: readonly ContentProblem[]) => problems.map((p) => p.path);

describe('validateRateBookContent', () => {
  test('accepts the worked example as it is, returning the same object', () => {
    const result = validateRateBookContent(EXAMPLE_RATE_BOOK);
    assert.ok(result.ok);
    assert.equal(result.value, EXAMPLE_RATE_BOOK);
  });

  test('accepts it after a JSON round trip (import of an export)', () => {
    assert.ok(validateRateBookContent(JSON.parse(JSON.stringify(EXAMPLE_RATE_BOOK))).ok);
  });

  test('names every bad cell at once, by its path', () => {
    const problems = problemsOf(
      edited({
        'factors[2].rows[4].factor': '-1.2',
        'factors[0].rows[1].factor': 1.6,
        'factors[3].rows[2].factor': '0.8.1',
        'factors[4].rows[1].factor': '0',
        'factors[6].rows[0].factor': '1.1234567',
        'fees.admin_fee_pence': 25.5,
        ipt_rate: '112',
      }),
    );
    assert.deepEqual(paths(problems), [
      'factors[0].rows[1].factor',
      'factors[2].rows[4].factor',
      'factors[3].rows[2].factor',
      'factors[4].rows[1].factor',
      'factors[6].rows[0].factor',
      'fees.admin_fee_pence',
      'ipt_rate',
    ]);
    const message = (path: string) => problems.find((p) => p.path === path)?.message;
    assert.match(message('factors[2].rows[4].factor') ?? '', /negative/);
    assert.match(message('factors[0].rows[1].factor') ?? '', /decimal written as text/);
    assert.match(message('factors[4].rows[1].factor') ?? '', /above 0/);
    assert.match(message('factors[6].rows[0].factor') ?? '', /6 decimal places/);
    assert.match(message('ipt_rate') ?? '', /at most 100/);
  });

  test('bands: a gap, an overlap, an empty band and an open end in the middle', () => {
    const problems = problemsOf(
      edited({
        'factors[0].rows[1].from': 22, // a gap after [17, 21)
        'factors[0].rows[2].from': 24, // overlaps [22, 25)
        'factors[0].rows[3].to': null, // open in the middle
      }),
    );
    assert.deepEqual(paths(problems), [
      'factors[0].rows[1].from',
      'factors[0].rows[2].from',
      'factors[0].rows[3].to',
    ]);
    assert.match(problems[0]!.message, /gap.*rows\[0\].*21/);
    assert.match(problems[1]!.message, /overlaps.*rows\[1\].*25/);
    assert.match(problems[2]!.message, /only the last band/);
    const empty = problemsOf(edited({ 'factors[0].rows[0].to': 17 }));
    assert.deepEqual(paths(empty), ['factors[0].rows[0].to', 'factors[0].rows[1].from']);
  });

  test('factors: unknown source, text source banded, repeated names and keys, non-canonical numeric keys', () => {
    const problems = problemsOf(
      edited({
        'factors[1].source': 'star_sign',
        'factors[4].kind': 'bands',
        'factors[4].rows': [{ from: 0, to: 1, factor: '1' }],
        'factors[5].name': 'driver-age',
        'factors[5].rows[1].key': '01',
        'factors[7].rows[2].key': '100',
      }),
    );
    assert.deepEqual(paths(problems), [
      'factors[1].source',
      'factors[4].kind',
      'factors[5].name',
      'factors[5].rows[1].key',
      'factors[7].rows[2].key',
    ]);
    assert.match(problems[0]!.message, /one of postcode_district/);
    assert.match(problems[1]!.message, /use is text/);
    assert.match(problems[2]!.message, /repeats factors\[0\]/);
    assert.match(problems[3]!.message, /canonically/);
    assert.match(problems[4]!.message, /repeats rows\[1\]/);
  });

  test('limits: min above max, fees, plans, rules and unknown fields', () => {
    const problems = problemsOf(
      edited({
        min_fixed_premium_pence: 300_000,
        'fees.deposit_fee_pence': undefined,
        installment_plans: [
          { kind: 'monthly', installments: 13, loading_rate: '1' },
          { kind: 'monthly', installments: 2, loading_rate: '0', apr: '9.9' },
        ],
        'underwriting_rules[0].outcome': 'maybe',
        'underwriting_rules[1].when': { field: 'vehicle_colour', op: 'eq', value: 'red' },
        'underwriting_rules[2].when': { field: 'bans_in_3_years', op: 'gt', value: 'none' },
        'underwriting_rules[4].when.any[1]': { field: 'modification_count', op: 'in', value: [] },
        rounding: 'up',
      }),
    );
    assert.deepEqual(paths(problems), [
      'rounding',
      'min_fixed_premium_pence',
      'fees.deposit_fee_pence',
      'installment_plans[0].installments',
      'installment_plans[0].loading_rate',
      'installment_plans[1].kind',
      'installment_plans[1].apr',
      'underwriting_rules[0].outcome',
      'underwriting_rules[1].when.field',
      'underwriting_rules[2].when.value',
      'underwriting_rules[4].when.any[1].value',
    ]);
  });

  test('no amount is bound beyond what a policy takes: fees and premium limits, the rate per unit', () => {
    assert.ok(LIMITS.pence <= MONEY_MAX * 100);
    const problems = problemsOf(
      edited({
        max_fixed_premium_pence: LIMITS.pence + 1,
        'fees.cancellation_fee_pence': LIMITS.pence + 1,
        base_rate_per_unit: '1000.000001',
      }),
    );
    assert.deepEqual(problems, [
      { path: 'base_rate_per_unit', message: `must be at most ${String(USAGE_RATE_MAX)}` },
      { path: 'max_fixed_premium_pence', message: 'must be from 0 to 100000000 pence' },
      { path: 'fees.cancellation_fee_pence', message: 'must be from 0 to 100000000 pence' },
    ]);
    assert.ok(validateRateBookContent(edited({ base_rate_per_unit: '1000' })).ok);
  });

  test('not an object, or missing every field', () => {
    assert.deepEqual(problemsOf([]), [{ path: '', message: 'must be an object' }]);
    assert.equal(problemsOf({}).length, 11);
  });

  test('conditions nest at most eight deep', () => {
    let deep: unknown = { field: 'vehicle_group', op: 'gt', value: 1 };
    for (let i = 0; i < 9; i++) deep = { all: [deep] };
    const problems = problemsOf(edited({ 'underwriting_rules[0].when': deep }));
    assert.equal(problems.length, 1);
    assert.match(problems[0]!.message, /more than 8 deep/);
  });
});
