/**
 * A device's positions of a time window and the trip journeys stored for that window → what to void and
 * what to store so that the stored journeys are the trips the positions now make. Pure: `nowS` is data.
 *
 * - Positions are cut per policy (a binding's positions never join another's trip), by cutTrips.
 * - A trip is finished when it ended (ignition off, or idle for the trip-end time) or when nothing moved
 *   for the trip-end time before `nowS`: a device that lost power mid-trip still yields its trip. An
 *   unfinished trip is left for a later pass; the earliest start of one is returned, for that pass to read
 *   from.
 * - A finished trip becomes a journey named `device:{device_id}:{start UNIX}`, its route the kept fixes
 *   encoded at precision 6. A stored journey whose policy, times and route a trip repeats stands; every
 *   other stored journey of the window is voided, and every trip no stored journey repeats is stored. So
 *   a pass over positions that changed nothing changes nothing, and late positions replace exactly the
 *   trips they changed.
 */
import { encodePolyline } from '../../../platform/geo/index.ts';
import { cutTrips, type TripPosition } from './trips.ts';

/** A stored trip journey of the device (not void). */
export interface StoredTripJourney {
  readonly id: string;
  readonly policyId: string;
  readonly startAt: Date;
  readonly endAt: Date;
  readonly route: string;
}

export interface PlannedTrip {
  readonly providerReference: string;
  readonly startAt: Date;
  readonly endAt: Date;
  readonly route: { readonly encoded: string; readonly precision: 6 };
  readonly gapDistanceMetres: number;
  /** The trip's kept fixes (what its driving score is measured from) and its distance, whole metres. */
  readonly fixes: readonly TripPosition[];
  readonly distanceMetres: number;
}

export interface PolicyTripPlan {
  readonly voids: readonly string[];
  readonly store: readonly PlannedTrip[];
}

export interface TripPlan {
  /** By policy id; only policies with something to change. */
  readonly byPolicy: ReadonlyMap<string, PolicyTripPlan>;
  /** UNIX seconds: the start of the earliest trip not finished yet, or null. */
  readonly openTripFromS: number | null;
  /** Trips cut, finished or not, and fixes dropped by the cleaning (for metrics). */
  readonly tripCount: number;
  readonly droppedFixes: number;
}

export const TRIP_ROUTE_PRECISION = 6;

export const tripProviderReference = (deviceId: string, startS: number): string =>
  `device:${deviceId}:${String(startS)}`;

const keyOf = (policyId: string, startMs: number, endMs: number, route: string): string =>
  `${policyId}|${String(startMs)}|${String(endMs)}|${route}`;

export function planTripJourneys(input: {
  readonly deviceId: string;
  /** The window's positions of each policy, any order. */
  readonly positionsByPolicy: ReadonlyMap<string, readonly TripPosition[]>;
  readonly stored: readonly StoredTripJourney[];
  readonly nowS: number;
  readonly tripEndIdleMinutes: number;
}): TripPlan {
  const idleS = input.tripEndIdleMinutes * 60;
  const wanted = new Map<string, { policyId: string; trip: PlannedTrip }>();
  let openTripFromS: number | null = null;
  let tripCount = 0;
  let droppedFixes = 0;
  for (const [policyId, positions] of input.positionsByPolicy) {
    const cut = cutTrips(positions, { tripEndIdleMinutes: input.tripEndIdleMinutes });
    tripCount += cut.trips.length;
    droppedFixes += cut.dropped.length;
    for (const trip of cut.trips) {
      if (trip.endedBy === 'end_of_data' && input.nowS - trip.endTimeS < idleS) {
        openTripFromS = Math.min(openTripFromS ?? trip.startTimeS, trip.startTimeS);
        continue;
      }
      const coordinates = new Float64Array(trip.points.length * 2);
      trip.points.forEach((p, k) => {
        coordinates[2 * k] = p.lat;
        coordinates[2 * k + 1] = p.lon;
      });
      const planned: PlannedTrip = {
        providerReference: tripProviderReference(input.deviceId, trip.startTimeS),
        startAt: new Date(trip.startTimeS * 1000),
        endAt: new Date(trip.endTimeS * 1000),
        route: {
          encoded: encodePolyline(coordinates, TRIP_ROUTE_PRECISION),
          precision: TRIP_ROUTE_PRECISION,
        },
        gapDistanceMetres: trip.gapDistanceMetres,
        fixes: trip.points,
        distanceMetres: trip.distanceMetres,
      };
      wanted.set(keyOf(policyId, trip.startTimeS * 1000, trip.endTimeS * 1000, planned.route.encoded), {
        policyId,
        trip: planned,
      });
    }
  }

  const byPolicy = new Map<string, { voids: string[]; store: PlannedTrip[] }>();
  const planOf = (policyId: string) => {
    let plan = byPolicy.get(policyId);
    if (plan === undefined) {
      plan = { voids: [], store: [] };
      byPolicy.set(policyId, plan);
    }
    return plan;
  };
  for (const journey of input.stored) {
    const key = keyOf(journey.policyId, journey.startAt.getTime(), journey.endAt.getTime(), journey.route);
    if (wanted.has(key)) wanted.delete(key);
    else planOf(journey.policyId).voids.push(journey.id);
  }
  for (const { policyId, trip } of wanted.values()) planOf(policyId).store.push(trip);
  for (const plan of byPolicy.values()) plan.store.sort((a, b) => a.startAt.getTime() - b.startAt.getTime());
  return { byPolicy, openTripFromS, tripCount, droppedFixes };
}
