import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { drivingEvents, type DrivingEventKind, type ScoreFix } from './driving-events.ts';
import { scoringRules } from './driving-score.ts';
import { harshBrake, seeded, smoothDriving, Vehicle, type TraceOptions } from './trace-generator.ts';

const NOON = 1_781_870_400; // 2026-06-19T12:00:00Z, 13:00 in London
const { thresholds } = scoringRules(undefined);
const kinds = (fixes: readonly ScoreFix[]) => drivingEvents(fixes, thresholds).events.map((e) => e.kind);
const count = (fixes: readonly ScoreFix[], kind: DrivingEventKind) =>
  kinds(fixes).filter((k) => k === kind).length;
const vehicle = (seed: number, options: TraceOptions = {}, timeS = NOON) =>
  new Vehicle(
    { timeS, lat: 51.5 + (seed % 7) * 0.3, lon: -2 + (seed % 5) * 0.4, headingDegrees: seed % 360 },
    seeded(seed),
    options,
  );

describe('harsh braking', () => {
  test('k injected harsh brakes among smooth driving are exactly k events, with the speeds reported', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 1, max: 1e9 }),
        fc.double({ min: 3.5, max: 8, noNaN: true }),
        (k, seed, rate) => {
          const random = seeded(seed + 1);
          const v = vehicle(seed, { positionNoiseMetres: 5, speedNoiseMps: 0.2 });
          smoothDriving(v, random, 120);
          for (let b = 0; b < k; b++) smoothDriving(harshBrake(v, rate), random, 60);
          const events = drivingEvents(v.fixes, thresholds).events;
          assert.equal(events.filter((e) => e.kind === 'harsh_braking').length, k);
          assert.deepEqual(
            events.filter((e) => e.kind !== 'harsh_braking'),
            [],
          );
        },
      ),
      { numRuns: 40 },
    );
  });

  test('k injected brakes are found from distances alone when the device reports no speed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 1, max: 1e9 }), (k, seed) => {
        const random = seeded(seed + 1);
        const v = vehicle(seed, { reportSpeed: false, positionNoiseMetres: 1 });
        smoothDriving(v, random, 120);
        for (let b = 0; b < k; b++) smoothDriving(harshBrake(v, 4.5, true), random, 60);
        assert.equal(count(v.fixes, 'harsh_braking'), k);
        assert.equal(count(v.fixes, 'rapid_acceleration'), 0);
      }),
      { numRuns: 30 },
    );
  });

  test('a brake just under the threshold is not an event; one at it is', () => {
    const under = vehicle(3).reach(25, 1).drive(5);
    harshBrake(under, 3.0);
    assert.equal(count(under.fixes, 'harsh_braking'), 0);
    const at = vehicle(3).reach(25, 1).drive(5);
    harshBrake(at, 3.1);
    assert.equal(count(at.fixes, 'harsh_braking'), 1);
  });

  test('a brake repeated within 60 s counts once, and again after', () => {
    const v = vehicle(5).reach(25, 1).drive(5).drive(3, -4).reach(25, 1).drive(10).drive(3, -4);
    assert.equal(count(v.fixes, 'harsh_braking'), 1);
    v.reach(25, 1).drive(60).drive(3, -4);
    assert.equal(count(v.fixes, 'harsh_braking'), 2);
  });

  test('rapid acceleration is the same threshold the other way', () => {
    const v = vehicle(9).drive(3).drive(4, 3.5).drive(20);
    assert.deepEqual(kinds(v.fixes), ['rapid_acceleration']);
  });
});

describe('smooth driving', () => {
  test('with 5 m of GPS noise at 1 Hz and speeds reported yields no event, headings reported or derived', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), fc.boolean(), (seed, reportHeading) => {
        const v = vehicle(seed, { positionNoiseMetres: 5, speedNoiseMps: 0.2, reportHeading });
        smoothDriving(v, seeded(seed + 7), 1800);
        assert.deepEqual(drivingEvents(v.fixes, thresholds), { events: [], nightMetres: 0 });
      }),
      { numRuns: 25 },
    );
  });

  test('with speeds derived from 5 m-noisy positions, at most 1 in 100 half-hour trips shows an event', (t) => {
    // NOTE: a fixed set, not random draws: derived speeds let noise through now and then (4 trips of
    // the 800 here, each one harsh brake), so the rate is what is held, and docs/api.md states it.
    let withEvents = 0;
    let trips = 0;
    for (let seed = 1; seed <= 400; seed++)
      for (const reportHeading of [true, false]) {
        const v = vehicle(seed, { positionNoiseMetres: 5, reportSpeed: false, reportHeading });
        smoothDriving(v, seeded(seed + 7), 1800);
        trips++;
        if (drivingEvents(v.fixes, thresholds).events.length > 0) withEvents++;
      }
    t.diagnostic(
      `${String(withEvents)} of ${String(trips)} smooth half-hour trips with derived speeds show an event`,
    );
    assert.ok(withEvents * 100 <= trips, `${String(withEvents)} of ${String(trips)}`);
  });

  test('events do not depend on the order the fixes come in', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), (seed) => {
        const random = seeded(seed);
        const v = vehicle(seed, { positionNoiseMetres: 3 });
        smoothDriving(harshBrake(smoothDriving(v, random, 200), 5), random, 100).drive(5, 4);
        const shuffled = v.fixes.toSorted(() => random() - 0.5);
        assert.deepEqual(drivingEvents(shuffled, thresholds), drivingEvents(v.fixes, thresholds));
      }),
      { numRuns: 20 },
    );
  });
});

describe('cornering, speeding, fatigue', () => {
  test('a 90° turn at 15 m/s in 3 s is harsh cornering, from headings or from positions; a gentle bend is not', () => {
    for (const reportHeading of [true, false]) {
      const sharp = vehicle(11, { reportHeading }).reach(15, 1).drive(10).drive(3, 0, 30).drive(10);
      assert.deepEqual(
        kinds(sharp.fixes),
        ['harsh_cornering'],
        `headings reported: ${String(reportHeading)}`,
      );
      const gentle = vehicle(11, { reportHeading }).reach(15, 1).drive(10).drive(30, 0, 3).drive(10);
      assert.deepEqual(kinds(gentle.fixes), []);
    }
  });

  test('speeding needs 15 s above the product’s speed', () => {
    const limitMps = thresholds.speedingAboveKmh / 3.6;
    const long = vehicle(1)
      .reach(limitMps + 2, 1)
      .drive(16)
      .reach(25, 1);
    const event = drivingEvents(long.fixes, thresholds).events.find((e) => e.kind === 'speeding');
    assert.ok(event !== undefined && event.durationSeconds !== null && event.durationSeconds >= 15);
    const short = vehicle(1)
      .reach(limitMps + 2, 1)
      .drive(10)
      .reach(25, 1);
    assert.equal(count(short.fixes, 'speeding'), 0);
    const strict = scoringRules({ speeding_above_mph: 30 }).thresholds;
    const urban = vehicle(1).reach(15, 1).drive(20).reach(10, 1);
    assert.equal(drivingEvents(urban.fixes, strict).events.filter((e) => e.kind === 'speeding').length, 1);
  });

  test('more than 2 h of driving without a 20-minute stop is fatigue; a 20-minute stop resets it', () => {
    const tired = vehicle(2)
      .reach(25, 1)
      .drive(2 * 3600 + 60);
    assert.equal(count(tired.fixes, 'fatigue'), 1);
    const rested = vehicle(2)
      .reach(25, 1)
      .drive(3600 + 1800)
      .park(20 * 60)
      .reach(25, 1)
      .drive(3600 + 1800);
    assert.equal(count(rested.fixes, 'fatigue'), 0);
    const shortStop = vehicle(2)
      .reach(25, 1)
      .drive(3600 + 1800)
      .park(10 * 60)
      .reach(25, 1)
      .drive(3600);
    assert.equal(count(shortStop.fixes, 'fatigue'), 1);
  });
});

describe('night driving', () => {
  test('counts the distance between 00:00 and 04:00 London time, across a clock change', () => {
    // 2026-03-29: clocks go forward at 01:00 GMT, so London's 04:00 is 03:00 UTC.
    const start = Date.UTC(2026, 2, 29, 2, 30) / 1000;
    const v = vehicle(4, {}, start).reach(20, 20).drive(3600);
    const { nightMetres } = drivingEvents(v.fixes, thresholds);
    // Driving from 02:30 UTC, night until 03:00 UTC: 30 minutes at 20 m/s.
    assert.ok(Math.abs(nightMetres - 30 * 60 * 20) < 40, String(nightMetres));
    const day = vehicle(4, {}, NOON).reach(20, 20).drive(3600);
    assert.equal(drivingEvents(day.fixes, thresholds).nightMetres, 0);
    // 2026-10-25: clocks go back at 01:00 UTC, so London's 04:00 is 04:00 UTC.
    const autumn = vehicle(4, {}, Date.UTC(2026, 9, 25, 3, 30) / 1000)
      .reach(20, 20)
      .drive(3600);
    assert.ok(Math.abs(drivingEvents(autumn.fixes, thresholds).nightMetres - 30 * 60 * 20) < 40);
  });
});
