import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  crashThresholds,
  DEFAULT_CRASH_THRESHOLDS,
  detectCrashes,
  type CrashFix,
  type CrashThresholds,
} from './crash-detection.ts';

const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z, UNIX seconds
const LAT0 = 51.5;
const LON0 = -0.12;
const METRES_PER_DEGREE = 111_195;
const G = 9.80665;

/** A speed profile: constant speed, then a change at `accelMps2` until `toKmh`, each phase for a time. */
type Phase = { seconds: number; accelMps2: number; toKmh?: number } | { impactToKmh: number };

/**
 * Fixes at `rateHz` along a straight road north, from a speed profile integrated at 0.01 s. An impact
 * changes the speed at once. `withSpeed` false leaves the device speed out.
 */
function traceOf(startKmh: number, phases: Phase[], rateHz = 1, withSpeed = true, phaseS = 0): CrashFix[] {
  const stepS = 0.01;
  let speedMps = startKmh / 3.6;
  let northM = 0;
  let timeS = 0;
  let nextFixS = phaseS;
  const fixes: CrashFix[] = [];
  const emit = () => {
    while (nextFixS <= timeS + 1e-9) {
      const fix = {
        timeS: T0 + Math.round(nextFixS * 1000) / 1000,
        lat: LAT0 + northM / METRES_PER_DEGREE,
        lon: LON0,
      };
      fixes.push(withSpeed ? { ...fix, speedKmh: speedMps * 3.6 } : fix);
      nextFixS += 1 / rateHz;
    }
  };
  emit();
  for (const phase of phases) {
    if ('impactToKmh' in phase) {
      speedMps = phase.impactToKmh / 3.6;
      continue;
    }
    for (let i = 0; i < Math.round(phase.seconds / stepS); i++) {
      speedMps += phase.accelMps2 * stepS;
      if (phase.toKmh !== undefined && Math.sign(phase.accelMps2) * (speedMps * 3.6 - phase.toKmh) > 0)
        speedMps = phase.toKmh / 3.6;
      speedMps = Math.max(0, speedMps);
      northM += speedMps * stepS;
      timeS += stepS;
      emit();
    }
  }
  return fixes;
}

const cruise = (seconds: number): Phase => ({ seconds, accelMps2: 0 });
const brake = (g: number, seconds: number, toKmh = 0): Phase => ({ seconds, accelMps2: -g * G, toKmh });

describe('detectCrashes', () => {
  test('a crash from 50 km/h to a stop between two 1 Hz fixes is found, with its speeds and deceleration', () => {
    const fixes = traceOf(50, [cruise(10.5), { impactToKmh: 0 }, cruise(20)]);
    const crashes = detectCrashes(fixes, DEFAULT_CRASH_THRESHOLDS);
    assert.equal(crashes.length, 1);
    const [crash] = crashes;
    assert.ok(crash);
    assert.equal(crash.at.getTime(), (T0 + 11) * 1000);
    assert.equal(crash.speedBeforeKmh, 50);
    assert.equal(crash.speedAfterKmh, 0);
    assert.equal(crash.dropKmh, 50);
    assert.equal(crash.decelerationG, 1.42); // 50 km/h in 1 s = 13.9 m/s²
    assert.ok(Math.abs(crash.lat - (LAT0 + ((50 / 3.6) * 10.5) / METRES_PER_DEGREE)) < 1e-6);
  });

  test('hard braking to a stop at 0.5 g, and an emergency stop at 0.6 g, are not crashes', () => {
    for (const g of [0.3, 0.4, 0.5, 0.6])
      for (const kmh of [30, 50, 80, 120])
        assert.deepEqual(
          detectCrashes(traceOf(kmh, [cruise(10), brake(g, 20), cruise(10)])),
          [],
          `${kmh} ${g}`,
        );
  });

  test('the drop alone is not enough: 0.5 g from 60 km/h loses 35 km/h in 2 s and is still braking', () => {
    const fixes = traceOf(60, [cruise(10), brake(0.5, 10), cruise(10)]);
    assert.deepEqual(detectCrashes(fixes, { ...DEFAULT_CRASH_THRESHOLDS, minDecelerationG: 0.1 }).length, 1);
    assert.deepEqual(detectCrashes(fixes), []);
  });

  test('an impact that leaves the car rolling is a crash only when it then stops', () => {
    const rollsOn = traceOf(60, [cruise(10.3), { impactToKmh: 20 }, cruise(30)]);
    assert.deepEqual(detectCrashes(rollsOn), []);
    const stops = traceOf(60, [cruise(10.3), { impactToKmh: 20 }, brake(0.4, 5), cruise(20)]);
    assert.equal(detectCrashes(stops).length, 1);
  });

  test('a drop smaller than the threshold, or from below the speed before, is no crash', () => {
    assert.deepEqual(
      detectCrashes(traceOf(50, [cruise(10.5), { impactToKmh: 35 }, brake(0.3, 5), cruise(10)])),
      [],
    );
    assert.deepEqual(detectCrashes(traceOf(28, [cruise(10.5), { impactToKmh: 0 }, cruise(10)])), []);
  });

  test('an impact in the middle of a fix interval at 1 Hz, at 10 Hz, and without device speeds', () => {
    for (const rateHz of [1, 2, 5, 10])
      for (const phaseS of [0, 0.25, 0.5, 0.75]) {
        const fixes = traceOf(
          60,
          [cruise(10), { impactToKmh: 0 }, cruise(15)],
          rateHz,
          true,
          phaseS / rateHz,
        );
        assert.equal(detectCrashes(fixes).length, 1, `${rateHz} Hz, phase ${phaseS}`);
        // Derived speeds see an impact mid-interval as two halves: 80 km/h is 40 km/h/s, above 0.65 + 0.4 g.
        const derived = traceOf(
          80,
          [cruise(10), { impactToKmh: 0 }, cruise(15)],
          rateHz,
          false,
          phaseS / rateHz,
        );
        assert.equal(detectCrashes(derived).length, 1, `${rateHz} Hz, phase ${phaseS}, no speed`);
      }
  });

  test('a crash in the first 5 s of data is not looked for (nothing shows the vehicle was moving)', () => {
    assert.deepEqual(detectCrashes(traceOf(60, [cruise(3.5), { impactToKmh: 0 }, cruise(10)])), []);
  });

  test('a product may lower the thresholds so that a 0.6 g stop counts', () => {
    const fixes = traceOf(60, [cruise(10), brake(0.6, 10), cruise(10)]);
    assert.deepEqual(detectCrashes(fixes), []);
    assert.equal(detectCrashes(fixes, crashThresholds({ min_deceleration_g: 0.55 })).length, 1);
  });

  test('two crashes on one trip, each once; bad fixes and repeated times are skipped', () => {
    const one = traceOf(60, [cruise(10.5), { impactToKmh: 0 }, cruise(10)]);
    const two = traceOf(60, [cruise(10.5), { impactToKmh: 0 }, cruise(10)]).map((f) => ({
      ...f,
      timeS: f.timeS + 100,
    }));
    const noise = [
      { timeS: Number.NaN, lat: 0, lon: 0 },
      { timeS: T0 + 3, lat: 91, lon: Number.POSITIVE_INFINITY },
    ];
    const crashes = detectCrashes([...two, ...noise, ...one, ...one.slice(0, 5)]);
    assert.deepEqual(
      crashes.map((c) => c.at.getTime() / 1000 - T0),
      [11, 111],
    );
    assert.deepEqual(detectCrashes([]), []);
  });
});

describe('crash thresholds', () => {
  test('an absent rule or field takes the default', () => {
    assert.deepEqual(crashThresholds(undefined), DEFAULT_CRASH_THRESHOLDS);
    assert.deepEqual(crashThresholds({ min_drop_kmh: 30, stop_within_seconds: 20 }), {
      ...DEFAULT_CRASH_THRESHOLDS,
      minDropKmh: 30,
      stopWithinSeconds: 20,
    });
  });
});

/** A generated trip: cruising, maybe braking, maybe an impact, then standing, with noise. */
const tripArbitrary = fc
  .record({
    kmh: fc.double({ min: 20, max: 130, noNaN: true }),
    cruiseS: fc.double({ min: 2, max: 15, noNaN: true }),
    brakeG: fc.double({ min: 0.1, max: 1.2, noNaN: true }),
    impactToKmh: fc.option(fc.double({ min: 0, max: 40, noNaN: true }), { nil: undefined }),
    rateHz: fc.constantFrom(1, 2, 5, 10),
    withSpeed: fc.boolean(),
    noiseM: fc.array(fc.tuple(fc.double({ min: -5, max: 5 }), fc.double({ min: -5, max: 5 })), {
      minLength: 1,
      maxLength: 50,
    }),
  })
  .map(({ kmh, cruiseS, brakeG, impactToKmh, rateHz, withSpeed, noiseM }) => {
    const phases: Phase[] = [cruise(cruiseS)];
    if (impactToKmh !== undefined) phases.push({ impactToKmh });
    phases.push(brake(brakeG, 10), cruise(5));
    return traceOf(kmh, phases, rateHz, withSpeed).map((f, i) => {
      const [north, east] = noiseM[i % noiseM.length] ?? [0, 0];
      return { ...f, lat: f.lat + north / METRES_PER_DEGREE, lon: f.lon + east / (METRES_PER_DEGREE * 0.62) };
    });
  });

const thresholdsArbitrary: fc.Arbitrary<CrashThresholds> = fc.record({
  minSpeedBeforeKmh: fc.double({ min: 10, max: 80, noNaN: true }),
  minDropKmh: fc.double({ min: 5, max: 60, noNaN: true }),
  dropWindowSeconds: fc.double({ min: 0.5, max: 5, noNaN: true }),
  minDecelerationG: fc.double({ min: 0.2, max: 2, noNaN: true }),
  stopSpeedKmh: fc.double({ min: 0, max: 9, noNaN: true }),
  stopWithinSeconds: fc.double({ min: 1, max: 30, noNaN: true }),
});

describe('crash detection properties', () => {
  test('fixes in any order give the same crashes', () => {
    fc.assert(
      fc.property(
        tripArbitrary.chain((fixes) =>
          fc.tuple(
            fc.constant(fixes),
            fc.shuffledSubarray(fixes, { minLength: fixes.length, maxLength: fixes.length }),
          ),
        ),
        ([fixes, shuffled]) => {
          assert.deepEqual(detectCrashes(shuffled), detectCrashes(fixes));
        },
      ),
      { numRuns: 200 },
    );
  });

  test('a parked device’s noise never triggers: positions within 5 m, speeds up to 3 km/h or none', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            northM: fc.double({ min: -5, max: 5, noNaN: true }),
            eastM: fc.double({ min: -5, max: 5, noNaN: true }),
            speedKmh: fc.option(fc.double({ min: 0, max: 3, noNaN: true }), { nil: undefined }),
          }),
          { maxLength: 300 },
        ),
        fc.constantFrom(1, 2, 5, 10),
        (noise, rateHz) => {
          const fixes = noise.map((n, i) => ({
            timeS: T0 + i / rateHz,
            lat: LAT0 + n.northM / METRES_PER_DEGREE,
            lon: LON0 + n.eastM / (METRES_PER_DEGREE * 0.62),
            speedKmh: n.speedKmh,
          }));
          assert.deepEqual(detectCrashes(fixes), []);
          assert.deepEqual(detectCrashes(fixes.map(({ speedKmh: _, ...f }) => f)), []);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('moving the trip in time moves its crashes by as much and changes nothing else', () => {
    // Shifts that keep every time in [2^30, 2^31) s add exactly in binary, so the times' differences
    // are the same bits and the answer must be identical, not just close.
    fc.assert(
      fc.property(tripArbitrary, fc.integer({ min: -600_000_000, max: 350_000_000 }), (fixes, shiftS) => {
        const moved = detectCrashes(fixes.map((f) => ({ ...f, timeS: f.timeS + shiftS })));
        assert.deepEqual(
          moved.map((c) => ({ ...c, at: c.at.getTime() - shiftS * 1000 })),
          detectCrashes(fixes).map((c) => ({ ...c, at: c.at.getTime() })),
        );
      }),
      { numRuns: 200 },
    );
  });

  test('stricter thresholds never find a crash the defaults miss; a crash found meets its thresholds', () => {
    fc.assert(
      fc.property(tripArbitrary, thresholdsArbitrary, (fixes, t) => {
        for (const crash of detectCrashes(fixes, t)) {
          assert.ok(crash.dropKmh >= t.minDropKmh - 0.05);
          assert.ok(crash.decelerationG >= t.minDecelerationG - 0.005);
          assert.ok(crash.speedBeforeKmh >= t.minSpeedBeforeKmh - 0.05);
        }
        const stricter: CrashThresholds = {
          ...DEFAULT_CRASH_THRESHOLDS,
          minDecelerationG: Math.max(t.minDecelerationG, DEFAULT_CRASH_THRESHOLDS.minDecelerationG),
          minDropKmh: Math.max(t.minDropKmh, DEFAULT_CRASH_THRESHOLDS.minDropKmh),
          minSpeedBeforeKmh: Math.max(t.minSpeedBeforeKmh, DEFAULT_CRASH_THRESHOLDS.minSpeedBeforeKmh),
        };
        if (detectCrashes(fixes).length === 0) assert.deepEqual(detectCrashes(fixes, stricter), []);
      }),
      { numRuns: 200 },
    );
  });
});
