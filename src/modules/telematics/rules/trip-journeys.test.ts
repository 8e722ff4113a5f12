import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  planTripJourneys,
  tripProviderReference,
  type StoredTripJourney,
  type TripPlan,
} from './trip-journeys.ts';
import type { TripPosition } from './trips.ts';

const T0 = 1_760_000_000;

/** Drives of `seconds` at 1 Hz heading north at 36 km/h, each ended by the ignition, `apartS` apart. */
function day(drives: readonly number[], apartS = 900): TripPosition[] {
  const fixes: TripPosition[] = [];
  let timeS = T0;
  let lat = 51.5;
  for (const seconds of drives) {
    for (let s = 0; s < seconds; s++) {
      fixes.push({ timeS: timeS + s, lat, lon: -0.14, speedKmh: 36, ignition: true });
      lat += 0.00009;
    }
    fixes.push({ timeS: timeS + seconds, lat, lon: -0.14, speedKmh: 0, ignition: false });
    timeS += seconds + apartS;
  }
  return fixes;
}

/** What the plan would leave stored, as the journeys module stores it (new ids for new journeys). */
function apply(stored: readonly StoredTripJourney[], plan: TripPlan, policyId: string): StoredTripJourney[] {
  const voided = new Set([...plan.byPolicy.values()].flatMap((p) => p.voids));
  const kept = stored.filter((j) => !voided.has(j.id));
  const added = (plan.byPolicy.get(policyId)?.store ?? []).map((trip, k) => ({
    id: `${trip.providerReference}#${String(k)}#${String(stored.length)}`,
    policyId,
    startAt: trip.startAt,
    endAt: trip.endAt,
    route: trip.route.encoded,
  }));
  return [...kept, ...added].sort((a, b) => a.startAt.getTime() - b.startAt.getTime());
}

const plan = (
  positions: readonly TripPosition[],
  stored: readonly StoredTripJourney[] = [],
  nowS = T0 + 86_400,
) =>
  planTripJourneys({
    deviceId: 'car-1',
    positionsByPolicy: new Map([['p1', positions]]),
    stored,
    nowS,
    tripEndIdleMinutes: 5,
  });

describe('planTripJourneys', () => {
  test('finished trips are stored once, named by device and start; a second pass over the same positions changes nothing', () => {
    const positions = day([600, 300]);
    const first = plan(positions);
    const trips = first.byPolicy.get('p1')?.store ?? [];
    assert.equal(trips.length, 2);
    assert.equal(trips[0]?.providerReference, tripProviderReference('car-1', T0));
    assert.equal(trips[0].route.precision, 6);
    assert.equal(first.openTripFromS, null);
    const stored = apply([], first, 'p1');
    assert.equal(plan(positions, stored).byPolicy.size, 0);
  });

  test('a trip still moving within the idle time of now waits, and its start is returned', () => {
    const positions = day([600]).slice(0, 400); // no ignition off yet
    const lastS = T0 + 399;
    const waiting = plan(positions, [], lastS + 60);
    assert.equal(waiting.byPolicy.size, 0);
    assert.equal(waiting.openTripFromS, T0);
    const finished = plan(positions, [], lastS + 5 * 60);
    assert.equal(finished.byPolicy.get('p1')?.store.length, 1);
    assert.equal(finished.openTripFromS, null);
  });

  test('positions arriving in pieces, in any order, end with the journeys of all of them at once', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 120, max: 900 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 5 }),
        (drives, cuts) => {
          const all = day(drives);
          const whole = apply([], plan(all), 'p1');
          // Deliver the positions in pieces (each piece a random slice boundary), planning after each.
          const bounds = [...new Set(cuts.map((c) => c % all.length))].sort((a, b) => a - b);
          let stored: StoredTripJourney[] = [];
          let delivered: TripPosition[] = [];
          for (const end of [...bounds, all.length]) {
            delivered = all.slice(0, end).reverse();
            stored = apply(stored, plan(delivered, stored), 'p1');
          }
          const shape = (js: readonly StoredTripJourney[]) =>
            js.map((j) => [j.startAt.getTime(), j.endAt.getTime(), j.route]);
          assert.deepEqual(shape(stored), shape(whole));
        },
      ),
      { numRuns: 60 },
    );
  });

  test('positions of two policies (a device rebound) are cut apart', () => {
    const positions = day([600, 600]);
    const half = positions.findIndex((p) => p.timeS >= T0 + 1000);
    const result = planTripJourneys({
      deviceId: 'car-1',
      positionsByPolicy: new Map([
        ['p1', positions.slice(0, half)],
        ['p2', positions.slice(half)],
      ]),
      stored: [],
      nowS: T0 + 86_400,
      tripEndIdleMinutes: 5,
    });
    assert.equal(result.byPolicy.get('p1')?.store.length, 1);
    assert.equal(result.byPolicy.get('p2')?.store.length, 1);
  });
});
