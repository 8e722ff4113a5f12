import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scorePricingProblems } from './score-pricing.ts';

const P = '/body/rules/score_pricing';

test('a sound rule has no problems; each bad field is named', () => {
  assert.deepEqual(
    scorePricingProblems(
      {
        bands: [
          { min_score: 90, adjustment_percent: -10 },
          { min_score: 49.5, adjustment_percent: 12.25 },
        ],
        cap_percent: 15,
      },
      P,
    ),
    [],
  );
  assert.deepEqual(
    scorePricingProblems(
      {
        bands: [
          { min_score: 90.25, adjustment_percent: -10.125 },
          { min_score: 50, adjustment_percent: 5 },
          { min_score: 50, adjustment_percent: 1 },
        ],
        cap_percent: 2.001,
      },
      P,
    ),
    [
      { path: `${P}/bands/0/min_score`, message: 'must have at most 1 decimal place' },
      { path: `${P}/bands/0/adjustment_percent`, message: 'must have at most 2 decimal places' },
      { path: `${P}/bands/2/min_score`, message: 'must differ from every other band’s' },
      { path: `${P}/cap_percent`, message: 'must have at most 2 decimal places' },
    ],
  );
});
