import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { DrivingEventKind } from './driving-events.ts';
import {
  DEFAULT_DRIVING_SCORE_RULE,
  METRES_PER_MILE,
  monthIsFinal,
  monthScore,
  roundScore,
  scoreTrip,
  scoringRules,
  tripScore,
} from './driving-score.ts';
import { harshBrake, seeded, Vehicle } from './trace-generator.ts';

const weights = scoringRules(undefined).weights;
const events = (...kinds: DrivingEventKind[]) => kinds.map((kind) => ({ kind }));

describe('the worked example in docs/api.md', () => {
  test('a 12.5-mile trip with a harsh brake, a speeding spell and 2 miles at night scores 64.8', () => {
    assert.equal(tripScore(events('harsh_braking', 'speeding'), 2 * METRES_PER_MILE, 20_117, weights), 64.8);
  });

  test('with a 25-mile trip of no events and a short trip, the month scores 88.3, provisional', () => {
    assert.equal(tripScore([], 0, 40_234, weights), 100);
    assert.equal(tripScore(events('harsh_braking'), 0, 1_500, weights), null);
    const month = monthScore([
      { score: 64.8, distanceMetres: 20_117 },
      { score: 100, distanceMetres: 40_234 },
    ]);
    assert.equal(month, 88.3);
    const monthEnd = new Date('2026-07-01T00:00:00+01:00');
    assert.equal(monthIsFinal(monthEnd, new Date('2026-07-02T00:00:00Z'), 60_351), false);
    assert.equal(monthIsFinal(monthEnd, new Date('2026-07-02T00:00:00Z'), 50 * METRES_PER_MILE), true);
    assert.equal(monthIsFinal(monthEnd, new Date('2026-06-30T22:59:59Z'), 100 * METRES_PER_MILE), false);
  });
});

describe('trip scores', () => {
  test('lie in [0, 100], never rise with another event, and fall as events per mile rise', () => {
    const kind = fc.constantFrom<DrivingEventKind>(
      'harsh_braking',
      'rapid_acceleration',
      'harsh_cornering',
      'speeding',
      'fatigue',
    );
    fc.assert(
      fc.property(
        fc.array(kind, { maxLength: 30 }),
        kind,
        fc.integer({ min: 1610, max: 500_000 }),
        fc.nat(100_000),
        (list, extra, metres, night) => {
          const base = tripScore(events(...list), night, metres, weights);
          const more = tripScore(events(...list, extra), night, metres, weights);
          assert.ok(base !== null && more !== null);
          assert.ok(base >= 0 && base <= 100 && more <= base);
          const longer = tripScore(events(...list), night, metres * 2, weights);
          assert.ok(longer !== null && longer >= base);
        },
      ),
    );
  });

  test('a product’s weights replace the defaults one by one', () => {
    const rules = scoringRules({ weights: { harsh_braking: 10 } });
    assert.equal(rules.weights.harsh_braking, 10);
    assert.equal(rules.weights.speeding, DEFAULT_DRIVING_SCORE_RULE.weights.speeding);
    // 10 per event per 100 miles: one brake in 10 miles takes off 100.
    assert.equal(tripScore(events('harsh_braking'), 0, 16_094, rules.weights), 0);
  });

  test('scoreTrip scores the events it finds and leaves trips under a mile unscored', () => {
    const v = new Vehicle({ timeS: 1_781_870_400, lat: 52, lon: -1, headingDegrees: 90 }, seeded(1));
    v.reach(25, 1).drive(120);
    harshBrake(v, 5);
    const scored = scoreTrip(v.fixes, 5_000, scoringRules(undefined));
    assert.ok(scored.scored);
    assert.deepEqual(
      scored.events.map((e) => e.kind),
      ['harsh_braking'],
    );
    assert.equal(scored.score, roundScore(100 - (2 * 100 * METRES_PER_MILE) / 5_000));
    assert.deepEqual(scoreTrip(v.fixes, 1_609, scoringRules(undefined)), {
      scored: false,
      reason: 'SHORT_TRIP',
    });
  });

  test('rounds half up to one decimal', () => {
    assert.equal(roundScore(72.25), 72.3);
    assert.equal(roundScore(72.24999), 72.2);
    assert.equal(roundScore(0), 0);
  });
});
