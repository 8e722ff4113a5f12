import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { routeDistanceMetres, routeLengthMetres } from '../../../platform/geo/index.ts';
import { cutTrips, type Trip, type TripCut, type TripPosition } from './trips.ts';

const T0 = 1_760_000_000; // 2025-10-09, UNIX seconds
const METRES_PER_DEGREE_LAT = 111_200;

/** A point `metres` along `bearingDegrees` from (lat, lon), on a local flat approximation (enough for tests). */
function offset(lat: number, lon: number, metres: number, bearingDegrees: number): [number, number] {
  const bearing = (bearingDegrees * Math.PI) / 180;
  const north = metres * Math.cos(bearing);
  const east = metres * Math.sin(bearing);
  return [
    lat + north / METRES_PER_DEGREE_LAT,
    lon + east / (METRES_PER_DEGREE_LAT * Math.cos((lat * Math.PI) / 180)),
  ];
}

interface Cursor {
  lat: number;
  lon: number;
  timeS: number;
  heading: number;
}

/** 1 Hz fixes driving straight at `kmh` for `seconds` from the cursor (the cursor's own fix excluded). */
function drive(
  at: Cursor,
  seconds: number,
  kmh: number,
  extra: Partial<TripPosition> = {},
  withSpeed = true,
): TripPosition[] {
  const fixes: TripPosition[] = [];
  for (let s = 0; s < seconds; s++) {
    [at.lat, at.lon] = offset(at.lat, at.lon, kmh / 3.6, at.heading);
    at.timeS += 1;
    fixes.push({
      timeS: at.timeS,
      lat: at.lat,
      lon: at.lon,
      ...(withSpeed ? { speedKmh: kmh } : {}),
      ...extra,
    });
  }
  return fixes;
}

/** Stationary fixes every `everyS` seconds for `seconds`, speed 0. */
function park(at: Cursor, seconds: number, everyS = 1, extra: Partial<TripPosition> = {}): TripPosition[] {
  const fixes: TripPosition[] = [];
  for (let s = everyS; s <= seconds; s += everyS) {
    fixes.push({ timeS: at.timeS + s, lat: at.lat, lon: at.lon, speedKmh: 0, ...extra });
  }
  at.timeS += seconds;
  return fixes;
}

const start = (): Cursor => ({ lat: 51.5, lon: -0.12, timeS: T0, heading: 45 });

function pointsOf(trip: Trip): Float64Array {
  return Float64Array.from(trip.points.flatMap((p) => [p.lat, p.lon]));
}

/** The kept trace as the result implies it: the input minus the dropped fixes, in time order. */
function keptTrace(positions: readonly TripPosition[], cut: TripCut): TripPosition[] {
  const dropped = new Set(cut.dropped.map((d) => d.index));
  return positions.filter((_, i) => !dropped.has(i)).toSorted((a, b) => a.timeS - b.timeS);
}

// ---------------------------------------------------------------------------------------------------------
// Generated traces: drives (with or without speeds), stops (short, idle, ignition off), gaps while moving and
// sleeps while parked, all at integer seconds in the UK; then optionally some bad fixes.

type Piece =
  | { kind: 'drive'; seconds: number; kmh: number; turn: number; withSpeed: boolean; ignition: boolean }
  | { kind: 'stop'; seconds: number; everyS: number; ignitionOff: boolean }
  | { kind: 'gap'; seconds: number; kmh: number }
  | { kind: 'sleep'; seconds: number };

const pieceArb: fc.Arbitrary<Piece> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('drive' as const),
      seconds: fc.integer({ min: 1, max: 240 }),
      kmh: fc.integer({ min: 0, max: 130 }),
      turn: fc.integer({ min: -90, max: 90 }),
      withSpeed: fc.boolean(),
      ignition: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('stop' as const),
      seconds: fc.integer({ min: 1, max: 900 }),
      everyS: fc.integer({ min: 1, max: 30 }),
      ignitionOff: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('gap' as const),
      seconds: fc.integer({ min: 2, max: 900 }),
      kmh: fc.integer({ min: 10, max: 120 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('sleep' as const),
      seconds: fc.integer({ min: 2, max: 20_000 }),
    }),
  },
);

function buildTrace(pieces: readonly Piece[]): TripPosition[] {
  const at = start();
  const fixes: TripPosition[] = [{ timeS: at.timeS, lat: at.lat, lon: at.lon }];
  for (const piece of pieces) {
    if (piece.kind === 'drive') {
      at.heading += piece.turn;
      fixes.push(
        ...drive(at, piece.seconds, piece.kmh, piece.ignition ? { ignition: true } : {}, piece.withSpeed),
      );
    } else if (piece.kind === 'stop') {
      fixes.push(...park(at, piece.seconds, piece.everyS, piece.ignitionOff ? { ignition: false } : {}));
    } else if (piece.kind === 'gap') {
      [at.lat, at.lon] = offset(at.lat, at.lon, (piece.kmh / 3.6) * piece.seconds, at.heading);
      at.timeS += piece.seconds;
      fixes.push({ timeS: at.timeS, lat: at.lat, lon: at.lon, speedKmh: piece.kmh });
    } else {
      at.timeS += piece.seconds;
    }
  }
  return fixes;
}

type Noise =
  | { kind: 'accuracy'; at: number }
  | { kind: 'teleport'; at: number }
  | { kind: 'duplicate'; at: number }
  | { kind: 'range'; at: number };

const noiseArb: fc.Arbitrary<Noise> = fc.record({
  kind: fc.constantFrom('accuracy' as const, 'teleport' as const, 'duplicate' as const, 'range' as const),
  at: fc.nat(),
});

/** The first second after `timeS` that no fix in `taken` has. */
function freeTimeAfter(timeS: number, taken: Set<number>): number {
  let free = timeS + 1;
  while (taken.has(free)) free++;
  return free;
}

/**
 * Adds bad fixes to a clean trace: a copy with bad accuracy, repeated, or out of range, or a fix thousands of
 * kilometres away at a second of its own (a far-away fix at a taken second would be a duplicate whose arrival
 * order decides which copy is kept).
 */
function addNoise(fixes: readonly TripPosition[], noise: readonly Noise[]): TripPosition[] {
  const noisy = [...fixes];
  const taken = new Set(fixes.map((p) => p.timeS));
  for (const n of noise) {
    const base = fixes[n.at % fixes.length];
    if (base === undefined) continue;
    if (n.kind === 'accuracy') noisy.push({ ...base, accuracyM: 250 });
    else if (n.kind === 'teleport') {
      const timeS = freeTimeAfter(base.timeS, taken);
      taken.add(timeS);
      noisy.push({ ...base, timeS, lat: base.lat - 30, lon: base.lon + 20 });
    } else if (n.kind === 'duplicate') noisy.push({ ...base });
    else noisy.push({ ...base, lat: Number.NaN });
  }
  return noisy;
}

const traceArb = fc
  .tuple(fc.array(pieceArb, { minLength: 1, maxLength: 25 }), fc.array(noiseArb, { maxLength: 8 }))
  .map(([pieces, noise]) => addNoise(buildTrace(pieces), noise));

/** A permutation of `items` from fast-check's seed. */
const shuffled = <T>(items: readonly T[]) =>
  fc.array(fc.nat(), { minLength: items.length, maxLength: items.length }).map((keys) =>
    items
      .map((item, k) => ({ item, key: keys[k] ?? 0 }))
      .toSorted((a, b) => a.key - b.key)
      .map((x) => x.item),
  );

describe('cutTrips, properties', () => {
  test('trips + the stretches between them = the kept trace, exactly unrounded and within 0.5 m a trip rounded', () => {
    fc.assert(
      fc.property(traceArb, (positions) => {
        const cut = cutTrips(positions);
        const kept = keptTrace(positions, cut);
        const keptPoints = Float64Array.from(kept.flatMap((p) => [p.lat, p.lon]));
        const totalMetres = routeLengthMetres(keptPoints, kept.length);

        let tripMetres = 0;
        let roundedTripMetres = 0;
        const inTrip = new Array<boolean>(Math.max(kept.length - 1, 0)).fill(false);
        let previousEndS = -Infinity;
        for (const trip of cut.trips) {
          assert.ok(trip.points.length >= 2 && trip.distanceMetres > 0);
          assert.ok(trip.startTimeS >= previousEndS, 'trips overlap or are out of order');
          previousEndS = trip.endTimeS;
          const first = kept.indexOf(trip.points[0]!);
          // A trip is a run of consecutive kept fixes.
          assert.deepEqual(trip.points, kept.slice(first, first + trip.points.length));
          assert.equal(trip.startTimeS, trip.points[0]!.timeS);
          assert.equal(trip.endTimeS, trip.points.at(-1)!.timeS);
          const length = routeLengthMetres(pointsOf(trip), trip.points.length);
          assert.equal(trip.distanceMetres, routeDistanceMetres(pointsOf(trip), trip.points.length));
          assert.ok(trip.gapDistanceMetres >= 0 && trip.gapDistanceMetres <= trip.distanceMetres);
          tripMetres += length;
          roundedTripMetres += trip.distanceMetres;
          for (let k = first; k < first + trip.points.length - 1; k++) inTrip[k] = true;
        }
        let stretchMetres = 0;
        inTrip.forEach((covered, k) => {
          if (!covered) stretchMetres += routeLengthMetres(keptPoints.subarray(2 * k, 2 * k + 4), 2);
        });
        assert.equal(tripMetres + stretchMetres, totalMetres);
        assert.ok(Math.abs(roundedTripMetres + stretchMetres - totalMetres) <= 0.5 * cut.trips.length);
      }),
      { numRuns: 300 },
    );
  });

  test('shuffling the input (repeated times being copies) changes neither the trips nor what is dropped', () => {
    fc.assert(
      fc.property(
        traceArb.chain((positions) => fc.tuple(fc.constant(positions), shuffled(positions))),
        ([positions, reordered]) => {
          const a = cutTrips(positions);
          const b = cutTrips(reordered);
          assert.deepEqual(b.trips, a.trips);
          const droppedOf = (input: readonly TripPosition[], cut: TripCut) =>
            cut.dropped.map((d) => JSON.stringify([d.reason, input[d.index]])).toSorted();
          assert.deepEqual(droppedOf(reordered, b), droppedOf(positions, a));
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a far-away fix in the middle is dropped for speed and adds no distance: the trips stay as they were', () => {
    fc.assert(
      fc.property(
        fc.array(pieceArb, { minLength: 1, maxLength: 25 }),
        fc.nat(),
        fc.double({ min: 30, max: 60, noNaN: true }),
        (pieces, at, jumpDegrees) => {
          const clean = buildTrace(pieces);
          // A second between two fixes that no fix has.
          const m = clean.findIndex(
            (p, k) => k >= at % clean.length && (clean[k + 1]?.timeS ?? 0) > p.timeS + 1,
          );
          fc.pre(m >= 0);
          const before = clean[m]!;
          const teleport = { ...before, timeS: before.timeS + 1, lat: before.lat - jumpDegrees };
          const cut = cutTrips(clean.toSpliced(m + 1, 0, teleport));
          assert.deepEqual(cut.dropped, [{ index: m + 1, reason: 'speed' }]);
          assert.deepEqual(cut.trips, cutTrips(clean).trips);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a far-away first fix is dropped for speed instead of the trace behind it', () => {
    fc.assert(
      fc.property(fc.array(pieceArb, { minLength: 1, maxLength: 25 }), (pieces) => {
        const clean = buildTrace(pieces);
        fc.pre(clean.length >= 2);
        const first = clean[0]!;
        // 20° (2,220 km) away is beyond 300 km/h of the next two fixes only while they are within hours of
        // it: after a device's sleep of 7.4 h or more the far fix is a possible one and stands.
        fc.pre(clean[1]!.timeS - first.timeS <= 3600);
        const cut = cutTrips([{ ...first, timeS: first.timeS - 1, lat: first.lat + 20 }, ...clean]);
        assert.deepEqual(cut.dropped, [{ index: 0, reason: 'speed' }]);
        assert.deepEqual(cut.trips, cutTrips(clean).trips);
      }),
      { numRuns: 100 },
    );
  });
});

describe('cutTrips, examples', () => {
  test('ignition off ends a trip at the fix that reports it', () => {
    const at = start();
    const positions = [
      { timeS: at.timeS, lat: at.lat, lon: at.lon, ignition: true },
      ...drive(at, 120, 50, { ignition: true }),
      ...park(at, 30, 1, { ignition: false }),
      ...drive(at, 60, 30, { ignition: true }),
    ];
    const { trips, dropped } = cutTrips(positions);
    assert.deepEqual(dropped, []);
    assert.equal(trips.length, 2);
    const [first, second] = trips as [Trip, Trip];
    assert.equal(first.endedBy, 'ignition_off');
    assert.equal(first.startTimeS, T0);
    assert.equal(first.endTimeS, T0 + 121);
    assert.equal(first.points.length, 122);
    assert.ok(Math.abs(first.distanceMetres - (120 * 50) / 3.6) < 5);
    assert.equal(second.endedBy, 'end_of_data');
    // It sets off from the last parked fix, a second before the first moving one.
    assert.equal(second.startTimeS, T0 + 150);
    assert.equal(second.endTimeS, T0 + 210);
  });

  test('five minutes without movement end a trip where the vehicle stopped; four do not', () => {
    for (const [idleS, expected] of [
      [300, 2],
      [240, 1],
    ] as const) {
      const at = start();
      const positions = [
        { timeS: at.timeS, lat: at.lat, lon: at.lon, speedKmh: 0 },
        ...drive(at, 100, 40),
        ...park(at, idleS),
        ...drive(at, 100, 40),
      ];
      const { trips } = cutTrips(positions);
      assert.equal(trips.length, expected, `idle ${idleS} s`);
      if (expected === 2) {
        const [first, second] = trips as [Trip, Trip];
        assert.equal(first.endedBy, 'idle');
        assert.equal(first.endTimeS, T0 + 101); // the first fix at rest
        assert.equal(second.startTimeS, T0 + 100 + idleS);
      }
    }
  });

  test('the idle time is an option', () => {
    const at = start();
    const positions = [...drive(at, 100, 40), ...park(at, 130), ...drive(at, 100, 40)];
    assert.equal(cutTrips(positions).trips.length, 1);
    assert.equal(cutTrips(positions, { tripEndIdleMinutes: 2 }).trips.length, 2);
  });

  test('a GPS gap while moving is bridged in a straight line and reported', () => {
    const at = start();
    const before = drive(at, 60, 72);
    [at.lat, at.lon] = offset(at.lat, at.lon, 20 * 180, at.heading); // 3 minutes at 72 km/h, unseen
    at.timeS += 180;
    const after = [{ timeS: at.timeS, lat: at.lat, lon: at.lon, speedKmh: 72 }, ...drive(at, 60, 72)];
    const { trips } = cutTrips([...before, ...after]);
    assert.equal(trips.length, 1);
    const trip = trips[0]!;
    const bridge = Float64Array.of(before.at(-1)!.lat, before.at(-1)!.lon, after[0]!.lat, after[0]!.lon);
    assert.equal(trip.gapDistanceMetres, routeDistanceMetres(bridge, 2));
    assert.ok(Math.abs(trip.gapDistanceMetres - 3600) < 20);
    assert.equal(trip.distanceMetres, routeDistanceMetres(pointsOf(trip), trip.points.length));
    assert.ok(Math.abs(trip.distanceMetres - 20 * 300) < 30);
  });

  test('a device that sleeps while parked and wakes moving starts a new trip', () => {
    const at = start();
    const positions = [
      ...drive(at, 100, 40),
      ...park(at, 20),
      ...park(at, 3600, 3600),
      ...drive(at, 100, 40),
    ];
    const { trips } = cutTrips(positions);
    assert.equal(trips.length, 2);
    assert.equal(trips[0]?.gapDistanceMetres, 0);
  });

  test('a fix less accurate than 100 m is dropped', () => {
    const at = start();
    const positions = drive(at, 30, 50);
    positions[10] = { ...positions[10]!, accuracyM: 101 };
    positions[11] = { ...positions[11]!, accuracyM: 100 };
    const { trips, dropped } = cutTrips(positions);
    assert.deepEqual(dropped, [{ index: 10, reason: 'accuracy' }]);
    assert.ok(!trips[0]?.points.includes(positions[10]));
    assert.deepEqual(cutTrips(positions, { maxAccuracyM: 200 }).dropped, []);
  });

  test('a repeated time keeps the first arrival and drops the rest', () => {
    const at = start();
    const positions = drive(at, 30, 50);
    const late = { ...positions[5]!, lat: positions[5]!.lat + 0.0001 };
    const input = [...positions, late, { ...positions[20]! }];
    const { trips, dropped } = cutTrips(input);
    assert.deepEqual(dropped, [
      { index: 30, reason: 'duplicate_time' },
      { index: 31, reason: 'duplicate_time' },
    ]);
    assert.ok(trips[0]?.points.includes(positions[5]!));
  });

  test('out-of-range fixes are dropped', () => {
    const at = start();
    const good = drive(at, 10, 50);
    const input: TripPosition[] = [
      ...good,
      { timeS: at.timeS + 1, lat: 91, lon: 0 },
      { timeS: at.timeS + 2, lat: 51, lon: -180.5 },
      { timeS: at.timeS + 3, lat: Number.NaN, lon: 0 },
      { timeS: at.timeS + 4.5, lat: 51, lon: 0 },
      { timeS: at.timeS + 5, lat: 51, lon: 0, speedKmh: Number.POSITIVE_INFINITY },
      { timeS: at.timeS + 6, lat: 51, lon: 0, accuracyM: -1 },
    ];
    const { dropped } = cutTrips(input);
    assert.deepEqual(
      dropped,
      [10, 11, 12, 13, 14, 15].map((index) => ({ index, reason: 'out_of_range' })),
    );
  });

  test('a fix that would need more than 300 km/h is dropped; the trace resumes from the fix before it', () => {
    const at = start();
    const positions = drive(at, 30, 100);
    const jumped = offset(positions[14]!.lat, positions[14]!.lon, 90, 0); // 90 m in 1 s: 324 km/h
    positions[15] = { ...positions[15]!, lat: jumped[0], lon: jumped[1] };
    assert.deepEqual(cutTrips(positions).dropped, [{ index: 15, reason: 'speed' }]);
    assert.deepEqual(cutTrips(positions, { maxSpeedKmh: 350 }).dropped, []);
  });

  test('positions arriving out of order are placed by time', () => {
    const at = start();
    const positions = [...drive(at, 100, 40), ...park(at, 400), ...drive(at, 100, 40, {}, false)];
    const forwards = cutTrips(positions);
    assert.equal(forwards.trips.length, 2);
    assert.deepEqual(cutTrips(positions.toReversed()), forwards);
  });

  test('movement without speeds is displacement of more than 50 m from the anchor', () => {
    const at = start();
    const creep = drive(at, 120, 1.8, {}, false); // 0.5 m/s: 60 m in two minutes
    const { trips } = cutTrips([{ timeS: T0, lat: 51.5, lon: -0.12 }, ...creep]);
    assert.equal(trips.length, 1);
    // Opens at the first fix beyond 50 m, from the fix before it.
    assert.equal(trips[0]?.startTimeS, T0 + 100);
    assert.equal(cutTrips([{ timeS: T0, lat: 51.5, lon: -0.12 }, ...creep.slice(0, 99)]).trips.length, 0);
  });

  test('no positions, one position, only parked fixes: no trips', () => {
    const at = start();
    assert.deepEqual(cutTrips([]), { trips: [], dropped: [] });
    assert.deepEqual(cutTrips([{ timeS: T0, lat: 51.5, lon: -0.12, speedKmh: 40 }]).trips, []);
    assert.deepEqual(cutTrips(park(at, 3600, 10)).trips, []);
  });
});
