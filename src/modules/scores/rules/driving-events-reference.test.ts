import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { referenceDrivingEvents } from './driving-events-reference.ts';
import { drivingEvents, type EventThresholds, type ScoreFix } from './driving-events.ts';
import { scoringRules } from './driving-score.ts';
import { harshBrake, seeded, smoothDriving, Vehicle } from './trace-generator.ts';

// 2026-03-28T23:30:00Z: London's night, and the spring clock change the next night.
const BEFORE_MIDNIGHT = 1_774_740_600;

/** Drives with brakes, sharp bends, fast stretches and stops, reporting what `options` say. */
function trace(seed: number, reportSpeed: boolean, reportHeading: boolean): ScoreFix[] {
  const random = seeded(seed);
  const vehicle = new Vehicle(
    {
      timeS: BEFORE_MIDNIGHT + Math.floor(random() * 6 * 3600),
      lat: 50 + random() * 8,
      lon: -6 + random() * 8,
      headingDegrees: random() * 360,
    },
    random,
    { positionNoiseMetres: random() * 6, speedNoiseMps: 0.2, reportSpeed, reportHeading },
  );
  for (let part = 0; part < 8; part++) {
    const roll = random();
    if (roll < 0.25) harshBrake(vehicle, 2.5 + random() * 5);
    else if (roll < 0.45)
      vehicle.reach(8 + random() * 12, 1).drive(2 + Math.floor(random() * 5), 0, 40 * (random() - 0.5));
    else if (roll < 0.6) vehicle.reach(35 + random() * 5, 2).drive(10 + Math.floor(random() * 30));
    else if (roll < 0.7) vehicle.park(30 + Math.floor(random() * 90));
    else smoothDriving(vehicle, random, 60 + Math.floor(random() * 240));
  }
  return vehicle.fixes;
}

/** The trace as a device may send it: fixes missing (gaps), fields missing, repeated, out of order. */
function garble(fixes: readonly ScoreFix[], seed: number, rate: number, shuffle: boolean): ScoreFix[] {
  const random = seeded(seed);
  const out: ScoreFix[] = [];
  for (let i = 0; i < fixes.length; i++) {
    const f = fixes[i] as ScoreFix;
    const roll = random();
    if (roll < rate) {
      // A gap: up to 2 minutes of fixes lost.
      i += Math.floor(random() * 120);
      continue;
    }
    if (roll < 2 * rate) out.push({ timeS: f.timeS, lat: f.lat, lon: f.lon });
    else if (roll < 3 * rate) out.push(f, { ...f, lat: f.lat + 1e-5 });
    else out.push(f);
  }
  return shuffle ? out.toSorted(() => random() - 0.5) : out;
}

const thresholdsArbitrary: fc.Arbitrary<EventThresholds> = fc
  .record({
    harsh_acceleration_mps2: fc.double({ min: 0.5, max: 5, noNaN: true }),
    harsh_cornering_g: fc.constantFrom(0, 0.05, 0.2, 0.4, 0.6),
    speeding_above_mph: fc.integer({ min: 20, max: 90 }),
    speeding_min_seconds: fc.integer({ min: 0, max: 30 }),
  })
  .map((rule) => scoringRules(rule).thresholds);

describe('the fast path equals the plain implementation', () => {
  test('on generated traces, reported, derived or mixed, garbled and not, under any thresholds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1e9 }),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom(0, 0.002, 0.02),
        fc.boolean(),
        thresholdsArbitrary,
        (seed, reportSpeed, reportHeading, garbleRate, shuffle, thresholds) => {
          const fixes = garble(trace(seed, reportSpeed, reportHeading), seed + 1, garbleRate, shuffle);
          assert.deepEqual(drivingEvents(fixes, thresholds), referenceDrivingEvents(fixes, thresholds));
        },
      ),
      { numRuns: 150 },
    );
  });

  test('on traces that turn hard enough to count, so the arctangents run', () => {
    const { thresholds } = scoringRules(undefined);
    let cornering = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const vehicle = new Vehicle(
        { timeS: BEFORE_MIDNIGHT, lat: 53, lon: -1, headingDegrees: seed * 9 },
        seeded(seed),
        {
          positionNoiseMetres: 2,
          reportSpeed: seed % 2 === 0,
        },
      );
      for (let turn = 0; turn < 5; turn++)
        vehicle
          .reach(15, 1)
          .drive(10)
          .drive(3, 0, 20 + seed)
          .drive(70);
      const fast = drivingEvents(vehicle.fixes, thresholds);
      assert.deepEqual(fast, referenceDrivingEvents(vehicle.fixes, thresholds));
      cornering += fast.events.filter((e) => e.kind === 'harsh_cornering').length;
    }
    assert.ok(cornering >= 80, `${String(cornering)} cornering events`);
  });
});
