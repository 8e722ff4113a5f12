/**
 * Trip cutting: a device's positions, in the order they arrived, → the trips it drove. Pure: the times are
 * data (UNIX seconds in the positions), nothing reads the clock, and the same positions in any order give the
 * same trips.
 *
 * 1. Cleaning. A fix is dropped, and reported with its input index, for the first of these that applies:
 *    - `out_of_range`: `timeS` not a safe integer; `lat` outside [-90, 90] or `lon` outside [-180, 180]
 *      (NaN and ±Infinity included); `speedKmh` or `accuracyM` given but negative or not finite.
 *    - `accuracy`: `accuracyM` above `maxAccuracyM`.
 *    - `duplicate_time`: an earlier fix (by input index) that survived the two checks above has the same
 *      `timeS`. NOTE: the first arrival wins, so which copy of a repeated time is kept depends on arrival order;
 *      trips are independent of input order whenever fixes of one time are copies of one another (a device
 *      retransmitting), which is what a repeated time means in practice.
 *    - `speed`: reaching it from the previous kept fix (in time order) would take more than `maxSpeedKmh`.
 *      The previous kept fix stays the reference, so one far-away fix is dropped and the trace resumes from
 *      the fix before it.
 *      The first fix has no previous one: it is dropped for `speed` when the next two fixes (of other times)
      both contradict it, so that one bad fix at the start of a batch cannot hold the rest of it hostage.
    The survivors, sorted by time, are the kept trace.
 * 2. Movement. A kept fix is moving when it reports `speedKmh` ≥ MOVING_SPEED_KMH (5); a fix without a
 *    speed is moving when it lies more than MOVING_DISPLACEMENT_METRES (50) from the anchor. The anchor is
 *    the last moving fix (the first kept fix until one moves), so a parked vehicle's GPS drift inside 50 m is
 *    not movement, and a vehicle without speeds moves one fix in every 50 m it covers.
 * 3. Trips. A trip opens at a kept fix that moves, or that reports `ignition: true` after a fix that did not.
 *    A fix reporting `ignition: false` opens none (ignition off outranks a speed reading). A trip opened by
 *    movement starts from the fix before the opening one (where the vehicle set off) when that fix is at
 *    most GAP_SECONDS earlier; otherwise it starts at the opening fix. Its last active fix is the opening
 *    fix, then each moving fix. It ends
 *    - `ignition_off`: at a fix reporting `ignition: false`, that fix included;
 *    - `idle`: when a fix comes `tripEndIdleMinutes` or more after the last active fix and the vehicle has
 *      not moved since: the fix does not move, or it follows a gap and lies within 50 m of the anchor (a
 *      device that slept while the vehicle was parked, then woke moving). The trip ends at the fix after
 *      the last active one, where the vehicle had stopped;
 *    - `end_of_data`: still open after the last kept fix; it ends as `idle` would (at the fix after the last
 *      active one) and may grow when later positions arrive.
 *    Consecutive trips may share a point (one ends where the next sets off) but never a segment.
 * 4. Gaps. Consecutive kept fixes of one trip more than GAP_SECONDS apart are a gap while moving (had the
 *    vehicle stopped, the trip would have ended): the trip's distance bridges it in a straight line (the
 *    geodesic) and `gapDistanceMetres` reports how much of `distanceMetres` that is.
 * 5. Distances. A trip's `distanceMetres` is routeDistanceMetres (platform/geo) of its points: WGS84, each
 *    segment on a 2^-30 m grid, the exact sum rounded once to whole metres. The kept trace's segments are
 *    split between the trips and the stretches between them, so the trips' unrounded lengths plus the
 *    stretches' add up to the kept trace's length exactly, and the rounded trips to within 0.5 m per trip.
 *    A trip of fewer than 2 points or of 0 m (rounded) is not a trip; its segments join the stretches.
 *
 * The filters (speed, movement) measure with a local equirectangular approximation on the mean-radius sphere,
 * not the ellipsoid: within ±0.6 % for the 50 m and 300 km/h thresholds, which are not that precise, and it
 * keeps the hot loop to one cosine a fix. Only kept trips are measured on the ellipsoid.
 */
import { routeLengthMetres } from '../../../platform/geo/index.ts';

export interface TripPosition {
  /** UNIX seconds, integer. */
  readonly timeS: number;
  /** Degrees, WGS84. */
  readonly lat: number;
  readonly lon: number;
  readonly speedKmh?: number;
  /** Degrees clockwise from north; carried through, not used. */
  readonly heading?: number;
  readonly accuracyM?: number;
  readonly ignition?: boolean;
}

export interface TripOptions {
  readonly tripEndIdleMinutes?: number;
  readonly maxAccuracyM?: number;
  readonly maxSpeedKmh?: number;
}

export type DropReason = 'accuracy' | 'speed' | 'duplicate_time' | 'out_of_range';

export interface DroppedFix {
  /** Index in the input array. */
  readonly index: number;
  readonly reason: DropReason;
}

export type TripEnd = 'ignition_off' | 'idle' | 'end_of_data';

export interface Trip {
  /** The kept fixes of the trip in time order: the input objects themselves. */
  readonly points: readonly TripPosition[];
  readonly startTimeS: number;
  readonly endTimeS: number;
  /** WGS84, whole metres: routeDistanceMetres of the points. */
  readonly distanceMetres: number;
  /** The part of distanceMetres bridged in a straight line across gaps while moving, whole metres. */
  readonly gapDistanceMetres: number;
  readonly endedBy: TripEnd;
}

export interface TripCut {
  /** In time order. */
  readonly trips: Trip[];
  /** In input index order. */
  readonly dropped: DroppedFix[];
}

export const DEFAULT_TRIP_END_IDLE_MINUTES = 5;
export const DEFAULT_MAX_ACCURACY_M = 100;
export const DEFAULT_MAX_SPEED_KMH = 300;
export const MOVING_SPEED_KMH = 5;
export const MOVING_DISPLACEMENT_METRES = 50;
export const GAP_SECONDS = 60;

const RAD = Math.PI / 180;
const MEAN_RADIUS_METRES = 6_371_008.8;
const METRES_PER_DEGREE = MEAN_RADIUS_METRES * RAD;
const MOVING_DISPLACEMENT_SQUARED = MOVING_DISPLACEMENT_METRES * MOVING_DISPLACEMENT_METRES;
// km/h = m/s × 3.6; compared squared to avoid a square root per fix.
const KMH_PER_MPS_SQUARED = 3.6 * 3.6;

const END_IGNITION_OFF = 0;
const END_IDLE = 1;
const END_OF_DATA = 2;
const END_NAMES: readonly TripEnd[] = ['ignition_off', 'idle', 'end_of_data'];

/** Squared equirectangular distance in square metres; cosines of the two latitudes come cached. */
function flatSquaredMetres(
  lat1: number,
  lon1: number,
  cos1: number,
  lat2: number,
  lon2: number,
  cos2: number,
): number {
  let dLon = lon2 - lon1;
  if (dLon > 180) dLon -= 360;
  else if (dLon < -180) dLon += 360;
  const east = dLon * (cos1 + cos2) * 0.5;
  const north = lat2 - lat1;
  return (east * east + north * north) * METRES_PER_DEGREE * METRES_PER_DEGREE;
}

/** Whether reaching fix `b` from fix `a` takes more than the speed whose square (m/s)² is given. */
function tooFast(a: TripPosition, b: TripPosition, maxSpeedSquared: number): boolean {
  const dt = b.timeS - a.timeS;
  const cosA = Math.cos(a.lat * RAD);
  const cosB = Math.cos(b.lat * RAD);
  return flatSquaredMetres(a.lat, a.lon, cosA, b.lat, b.lon, cosB) > maxSpeedSquared * dt * dt;
}

/**
 * Whether the would-be first kept fix, candidate `c` in time order, is contradicted by both of the next two
 * fixes of other times (with fewer than two to ask, it stands). NOTE: every later fix is checked against the
 * previous kept one, so a bad first fix would otherwise have the rest of the trace dropped behind it.
 */
function contradictedFromStart(
  positions: readonly TripPosition[],
  order: Int32Array,
  c: number,
  candidates: number,
  maxSpeedSquared: number,
): boolean {
  const first = positions[order[c] as number] as TripPosition;
  let lastTime = first.timeS;
  let asked = 0;
  for (let next = c + 1; next < candidates && asked < 2; next++) {
    const other = positions[order[next] as number] as TripPosition;
    if (other.timeS === lastTime) continue; // a duplicate, to be dropped
    lastTime = other.timeS;
    if (!tooFast(first, other, maxSpeedSquared)) return false;
    asked++;
  }
  return asked === 2;
}

/**
 * Sorts `order[0, count)` (input indices, ascending on entry) by `times`, stably, so that equal times keep
 * input order. Arrival order is nearly sorted, so insertion sort runs in about linear time; past a budget of
 * moves (an adversarial order) it gives way to the engine's sort.
 */
function sortByTime(order: Int32Array, count: number, times: Float64Array): void {
  let budget = 8 * count + 64;
  for (let k = 1; k < count; k++) {
    const index = order[k] as number;
    const time = times[index] as number;
    let j = k - 1;
    while (j >= 0 && (times[order[j] as number] as number) > time) {
      order[j + 1] = order[j] as number;
      j--;
      if (--budget === 0) {
        order[j + 1] = index;
        order.subarray(0, count).sort((a, b) => (times[a] as number) - (times[b] as number) || a - b);
        return;
      }
    }
    order[j + 1] = index;
  }
}

/** Every fix dropped so far: input indices and reasons, in the order they were dropped. */
interface Drops {
  readonly index: number[];
  readonly reason: DropReason[];
}

interface TripLimits {
  readonly idleS: number;
  readonly maxAccuracyM: number;
  /** The speed limit squared, (m/s)². */
  readonly maxSpeedSquared: number;
}

/** The kept trace (in time order) and the trips cut from it, as [first kept, last kept, end reason] triples. */
interface Traced {
  readonly kept: TripPosition[];
  readonly keptCoords: Float64Array;
  readonly keptTimes: Float64Array;
  readonly keptCount: number;
  readonly cuts: number[];
}

function tripLimits(options: TripOptions): TripLimits {
  const idleS = (options.tripEndIdleMinutes ?? DEFAULT_TRIP_END_IDLE_MINUTES) * 60;
  const maxAccuracyM = options.maxAccuracyM ?? DEFAULT_MAX_ACCURACY_M;
  const maxSpeedKmh = options.maxSpeedKmh ?? DEFAULT_MAX_SPEED_KMH;
  if (!(idleS > 0) || !(maxAccuracyM >= 0) || !(maxSpeedKmh > 0)) {
    throw new RangeError('trip options must be positive numbers');
  }
  return { idleS, maxAccuracyM, maxSpeedSquared: (maxSpeedKmh * maxSpeedKmh) / KMH_PER_MPS_SQUARED };
}

/**
 * Pass 1, per fix: the checks that need no other fix (`out_of_range`, `accuracy`); the survivors' input
 * indices in `order[0, candidates)`, sorted by time.
 */
function candidatesInTimeOrder(
  positions: readonly TripPosition[],
  maxAccuracyM: number,
  drops: Drops,
): { order: Int32Array; candidates: number } {
  const count = positions.length;
  const times = new Float64Array(count);
  const order = new Int32Array(count);
  let candidates = 0;
  let sorted = true;
  let lastTime = -Infinity;
  for (let i = 0; i < count; i++) {
    const p = positions[i] as TripPosition;
    const { timeS, lat, lon, speedKmh, accuracyM } = p;
    if (
      !Number.isSafeInteger(timeS) ||
      !(lat >= -90 && lat <= 90) ||
      !(lon >= -180 && lon <= 180) ||
      (speedKmh !== undefined && !(speedKmh >= 0 && speedKmh < Infinity)) ||
      (accuracyM !== undefined && !(accuracyM >= 0 && accuracyM < Infinity))
    ) {
      drops.index.push(i);
      drops.reason.push('out_of_range');
      continue;
    }
    if (accuracyM !== undefined && accuracyM > maxAccuracyM) {
      drops.index.push(i);
      drops.reason.push('accuracy');
      continue;
    }
    times[i] = timeS;
    order[candidates++] = i;
    if (timeS < lastTime) sorted = false;
    else lastTime = timeS;
  }
  if (!sorted) sortByTime(order, candidates, times);
  return { order, candidates };
}

/** Pass 2, in time order: duplicates, the speed filter, movement and the trip state machine. */
function traceTrips(
  positions: readonly TripPosition[],
  { order, candidates }: { order: Int32Array; candidates: number },
  { idleS, maxSpeedSquared }: TripLimits,
  drops: Drops,
): Traced {
  const keptCoords = new Float64Array(2 * candidates);
  const kept: TripPosition[] = [];
  const keptTimes = new Float64Array(candidates);
  const cuts: number[] = [];
  let keptCount = 0;
  let previousCandidateTime = Number.NaN;
  let prevLat = 0;
  let prevLon = 0;
  let prevCos = 1;
  let prevTime = 0;
  let prevIgnitionOn = false;
  let anchorLat = 0;
  let anchorLon = 0;
  let anchorCos = 1;
  let inTrip = false;
  let tripStart = 0;
  let lastActive = 0; // kept index of the trip's last active fix
  let lastActiveTime = 0;
  for (let c = 0; c < candidates; c++) {
    const i = order[c] as number;
    const p = positions[i] as TripPosition;
    const timeS = p.timeS;
    if (timeS === previousCandidateTime) {
      drops.index.push(i);
      drops.reason.push('duplicate_time');
      continue;
    }
    previousCandidateTime = timeS;
    const lat = p.lat;
    const lon = p.lon;
    const cos = Math.cos(lat * RAD);
    const k = keptCount;
    let dt = 0;
    if (k > 0) {
      dt = timeS - prevTime;
      if (flatSquaredMetres(prevLat, prevLon, prevCos, lat, lon, cos) > maxSpeedSquared * dt * dt) {
        drops.index.push(i);
        drops.reason.push('speed');
        continue;
      }
    } else if (contradictedFromStart(positions, order, c, candidates, maxSpeedSquared)) {
      drops.index.push(i);
      drops.reason.push('speed');
      continue;
    } else {
      anchorLat = lat;
      anchorLon = lon;
      anchorCos = cos;
    }
    keptCoords[2 * k] = lat;
    keptCoords[2 * k + 1] = lon;
    keptTimes[k] = timeS;
    kept.push(p);
    keptCount++;

    const speedKmh = p.speedKmh;
    const ignition = p.ignition;
    const displacedSquared = flatSquaredMetres(anchorLat, anchorLon, anchorCos, lat, lon, cos);
    const moving =
      speedKmh === undefined ? displacedSquared > MOVING_DISPLACEMENT_SQUARED : speedKmh >= MOVING_SPEED_KMH;

    if (inTrip) {
      if (ignition === false) {
        cuts.push(tripStart, k, END_IGNITION_OFF);
        inTrip = false;
      } else if (moving && !(dt > GAP_SECONDS && displacedSquared <= MOVING_DISPLACEMENT_SQUARED)) {
        lastActive = k;
        lastActiveTime = timeS;
      } else if (timeS - lastActiveTime >= idleS) {
        cuts.push(tripStart, lastActive + 1, END_IDLE);
        inTrip = false;
      } else if (moving) {
        // Moving after a short gap without leaving the anchor: still active.
        lastActive = k;
        lastActiveTime = timeS;
      }
    }
    if (!inTrip && ignition !== false && (moving || (ignition === true && !prevIgnitionOn))) {
      inTrip = true;
      // NOTE: a trip opened by movement starts where the vehicle set off, unless a gap hides when that was.
      tripStart = moving && k > 0 && dt <= GAP_SECONDS && cuts.at(-2) !== k ? k - 1 : k;
      lastActive = k;
      lastActiveTime = timeS;
    }

    if (moving) {
      anchorLat = lat;
      anchorLon = lon;
      anchorCos = cos;
    }
    prevLat = lat;
    prevLon = lon;
    prevCos = cos;
    prevTime = timeS;
    prevIgnitionOn = ignition === true;
  }
  if (inTrip) cuts.push(tripStart, Math.min(lastActive + 1, keptCount - 1), END_OF_DATA);
  return { kept, keptCoords, keptTimes, keptCount, cuts };
}

/** Measures the cuts on the ellipsoid; those without a point to travel to or any distance are not trips. */
function measureTrips({ kept, keptCoords, keptTimes, cuts }: Traced): Trip[] {
  const trips: Trip[] = [];
  for (let t = 0; t < cuts.length; t += 3) {
    const first = cuts[t] as number;
    const last = cuts[t + 1] as number;
    const pointCount = last - first + 1;
    if (pointCount < 2) continue;
    const lengthMetres = routeLengthMetres(keptCoords.subarray(2 * first, 2 * last + 2), pointCount);
    const distanceMetres = Math.round(lengthMetres);
    if (distanceMetres === 0) continue;
    let gapMetres = 0;
    for (let k = first + 1; k <= last; k++) {
      if ((keptTimes[k] as number) - (keptTimes[k - 1] as number) > GAP_SECONDS) {
        gapMetres += routeLengthMetres(keptCoords.subarray(2 * k - 2, 2 * k + 2), 2);
      }
    }
    trips.push({
      points: kept.slice(first, last + 1),
      startTimeS: keptTimes[first] as number,
      endTimeS: keptTimes[last] as number,
      distanceMetres,
      gapDistanceMetres: Math.round(gapMetres),
      endedBy: END_NAMES[cuts[t + 2] as number] ?? 'end_of_data',
    });
  }
  return trips;
}

/**
 * Cuts a device's positions (any order) into trips: time-ordered, each of at least 2 points and more than 0 m,
 * distances in whole metres on WGS84; every dropped fix is reported once with its reason. Deterministic, and
 * independent of input order when fixes sharing a time are identical (see the header for the rules).
 */
export function cutTrips(positions: readonly TripPosition[], options: TripOptions = {}): TripCut {
  const limits = tripLimits(options);
  const drops: Drops = { index: [], reason: [] };
  const candidates = candidatesInTimeOrder(positions, limits.maxAccuracyM, drops);
  const trips = measureTrips(traceTrips(positions, candidates, limits, drops));
  const dropped: DroppedFix[] = drops.index.map((index, d) => ({
    index,
    reason: drops.reason[d] ?? 'out_of_range',
  }));
  dropped.sort((a, b) => a.index - b.index);
  return { trips, dropped };
}
