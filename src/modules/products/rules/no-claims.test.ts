import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DEFAULT_NO_CLAIMS_STEP_BACK, noClaimsStepBackProblems, noClaimsYearsAfter } from './no-claims.ts';

test('the default steps back two years per at-fault claim', () => {
  const cases: Array<[number, number, number]> = [
    // [years held, at-fault claims, years kept]
    [5, 0, 5],
    [5, 1, 3],
    [5, 2, 1],
    [5, 3, 0],
    [4, 1, 2],
    [3, 1, 1],
    [2, 1, 0],
    [1, 1, 0],
    [0, 1, 0],
    [9, 1, 7],
    [15, 1, 7],
  ];
  for (const [years, claims, kept] of cases)
    assert.equal(noClaimsYearsAfter(years, claims), kept, `${String(years)} years, ${String(claims)} claims`);
});

test('a product’s table: the row of the greatest key not above the years held; below every key, 0', () => {
  const table = { '3': 1, '4': 2, '5': 4 };
  assert.equal(noClaimsYearsAfter(5, 1, table), 4);
  assert.equal(noClaimsYearsAfter(12, 1, table), 4, '"5" serves 5 years or more');
  assert.equal(noClaimsYearsAfter(4, 1, table), 2);
  assert.equal(noClaimsYearsAfter(2, 1, table), 0);
  assert.equal(noClaimsYearsAfter(12, 2, table), 2, 'the second claim steps back from 4');
});

test('a table is refused when it adds years or is not keyed by whole years', () => {
  assert.deepEqual(
    noClaimsStepBackProblems(DEFAULT_NO_CLAIMS_STEP_BACK, '/body/rules/no_claims_step_back'),
    [],
  );
  assert.deepEqual(noClaimsStepBackProblems({}, '/r'), [
    { path: '/r', message: 'must have at least one row' },
  ]);
  assert.deepEqual(
    noClaimsStepBackProblems({ '3': 4 }, '/r').map((p) => p.path),
    ['/r/3'],
  );
  assert.deepEqual(
    noClaimsStepBackProblems({ five: 3, '100': 2, '2.5': 1, '-1': 0 }, '/r')
      .map((p) => p.path)
      .sort(),
    ['/r/-1', '/r/100', '/r/2.5', '/r/five'],
  );
  assert.equal(noClaimsStepBackProblems({ '4': 1.5 }, '/r').length, 1);
});

test('property: a claim never adds years, more claims never keep more, and no claim keeps them all', () => {
  const table = fc
    .dictionary(fc.integer({ min: 0, max: 99 }).map(String), fc.integer({ min: 0, max: 99 }), {
      minKeys: 1,
      maxKeys: 12,
    })
    .map((t) => Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.min(v, Number(k))])));
  fc.assert(
    fc.property(
      table,
      fc.integer({ min: 0, max: 99 }),
      fc.integer({ min: 0, max: 5 }),
      (t, years, claims) => {
        assert.deepEqual(noClaimsStepBackProblems(t, '/r'), []);
        const kept = noClaimsYearsAfter(years, claims, t);
        assert.ok(kept >= 0 && kept <= years);
        assert.ok(noClaimsYearsAfter(years, claims + 1, t) <= kept);
        assert.equal(noClaimsYearsAfter(years, 0, t), years);
      },
    ),
  );
});
