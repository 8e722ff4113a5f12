import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  dayAfter,
  earlierDaysOf,
  hasRules,
  rulesInForce,
  startsAtMidnight,
  yearOfFrom,
  type BillingProduct,
} from './rules-in-force.ts';
import { londonMidnight } from './statement-period.ts';

const at = (iso: string) => new Date(iso);

describe('rulesInForce', () => {
  const product: BillingProduct = {
    usageUnit: 'mile',
    versions: [
      { sequence: 1, effectiveFrom: at('2025-01-01T00:00:00Z'), rules: { daily_cap_distance: 100 } },
      {
        sequence: 2,
        effectiveFrom: londonMidnight('2025-06-15'),
        rules: { daily_cap_distance: 50, free_distance_per_statement: 10, minimum_usage_premium: 5.5 },
      },
    ],
  };
  const rules = rulesInForce(product);

  test('a day’s caps are those in force at its London midnight, in whole metres', () => {
    assert.deepEqual(rules.on('2025-06-14'), { dailyCapMetres: 160_934, annualCapMetres: null });
    assert.deepEqual(rules.on('2025-06-15'), { dailyCapMetres: 80_467, annualCapMetres: null });
  });

  test('a period takes the least cap of its days and the free distance and minimum at its end', () => {
    assert.deepEqual(rules.period(londonMidnight('2025-06-01'), at('2025-06-30T22:59:59Z')), {
      leastDailyCapMetres: 80_467,
      leastAnnualCapMetres: null,
      freeDistanceMetres: 16_094,
      minimumUsagePremiumPence: 550,
    });
    assert.deepEqual(rules.period(londonMidnight('2025-05-01'), at('2025-05-31T22:59:59Z')), {
      leastDailyCapMetres: 160_934,
      leastAnnualCapMetres: null,
      freeDistanceMetres: 0,
      minimumUsagePremiumPence: 0,
    });
  });

  test('a version with none of billing’s rules has none', () => {
    assert.equal(hasRules({}), false);
    assert.equal(hasRules({ minimum_usage_premium: 0 }), true);
  });
});

describe('calendar facts', () => {
  test('the policy year of an instant is the latest term start not after it', () => {
    const yearOf = yearOfFrom(
      [at('2024-06-01T00:00:00Z'), at('2025-06-01T00:00:00Z')],
      at('2000-01-01T00:00:00Z'),
    );
    assert.equal(yearOf(at('2025-05-31T23:59:59Z')), '2024-06-01T00:00:00.000Z');
    assert.equal(yearOf(at('2025-06-01T00:00:00Z')), '2025-06-01T00:00:00.000Z');
    assert.equal(
      yearOfFrom([], at('2025-03-01T00:00:00Z'))(at('2025-04-01T00:00:00Z')),
      '2025-03-01T00:00:00.000Z',
    );
  });

  test('a period starts at a London midnight when the previous ended on the second before one', () => {
    assert.equal(startsAtMidnight(null), true);
    assert.equal(startsAtMidnight(new Date(londonMidnight('2025-07-01').getTime() - 1000)), true);
    assert.equal(startsAtMidnight(at('2025-07-01T11:59:59Z')), false);
    assert.equal(dayAfter('2025-03-29').toISOString(), '2025-03-30T00:00:00.000Z');
    assert.equal(dayAfter('2025-03-30').toISOString(), '2025-03-30T23:00:00.000Z');
  });

  test('earlier statements’ distance is summed for the days of this statement’s journeys only', () => {
    const journey = (iso: string, distanceMetres: number, claimed: boolean, dailyCapCreditMetres = 0) => ({
      startAt: at(iso),
      distanceMetres,
      dailyCapCreditMetres,
      claimed,
    });
    const days = earlierDaysOf([
      journey('2025-07-01T08:00:00Z', 1000, false, 200),
      journey('2025-07-01T09:00:00Z', 500, false),
      journey('2025-07-01T18:00:00Z', 300, true),
      journey('2025-07-02T08:00:00Z', 4000, false),
    ]);
    assert.deepEqual([...days], [['2025-07-01', { drivenMetres: 1500, chargedMetres: 1300 }]]);
  });
});
