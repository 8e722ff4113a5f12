/**
 * Which journeys are accepted, and against which policy version they are rated. Pure: time is passed in,
 * expected outcomes are results, nothing throws for a rejected journey.
 *
 * Times are half-open: a journey is [start, end), a term is [start_date, end_date), and cover that a
 * cancellation or lapse ends stops at its effective instant. A journey belongs to the instant it starts:
 * it is rated on the version in force then, and a statement bills it by its start (DESIGN, Journeys).
 */
import {
  decodePolyline,
  firstPoint,
  lastPoint,
  routeDistanceMetres,
  type PolylineFailureReason,
  type PolylinePrecision,
} from '../../../platform/geo/index.ts';
import { setsTerm, termsAt, type TermMark } from '../../policies/rules/index.ts';

/** Most points one route may have (a point a second for 27 hours). */
export const ROUTE_MAX_POINTS = 100_000;
/**
 * Longest route string: room for ROUTE_MAX_POINTS points whatever their spacing (a point needs at most
 * 12 characters, 6 per coordinate step), so the point limit is the one a real route meets first.
 */
export const ROUTE_MAX_CHARACTERS = 12 * ROUTE_MAX_POINTS;
/**
 * How far past the service's clock a journey may end: devices' clocks drift, and a journey that ended
 * "30 seconds from now" by a phone's clock is a journey that has just ended.
 */
export const CLOCK_SKEW_ALLOWANCE_SECONDS = 300;

export interface LatLng {
  readonly lat: number;
  readonly lng: number;
}

export interface MeasuredRoute {
  readonly ok: true;
  readonly pointCount: number;
  /** On the WGS84 ellipsoid, whole metres. */
  readonly distanceMetres: number;
  readonly start: LatLng;
  readonly end: LatLng;
}

export interface RouteRejection {
  readonly ok: false;
  readonly reason: PolylineFailureReason;
  readonly message: string;
}

/** Decodes and measures a route: its length on the ellipsoid and its end points, or why it is unusable. */
export function measureRoute(route: string, precision: PolylinePrecision): MeasuredRoute | RouteRejection {
  // The points are used here and dropped before anything else decodes: borrowed, not copied.
  const decoded = decodePolyline(route, precision, { maxPoints: ROUTE_MAX_POINTS, borrow: true });
  if (!decoded.ok) return { ok: false, reason: decoded.reason, message: decoded.message };
  const start = firstPoint(decoded.points, decoded.count);
  const end = lastPoint(decoded.points, decoded.count);
  // A decoded route has at least 2 points, so both ends exist; the check keeps the types honest.
  if (start === undefined || end === undefined)
    return { ok: false, reason: 'TOO_FEW_POINTS', message: 'a route needs at least 2 points' };
  return {
    ok: true,
    pointCount: decoded.count,
    distanceMetres: routeDistanceMetres(decoded.points, decoded.count),
    start,
    end,
  };
}

/**
 * What rating needs of a policy version: its term and when it took effect (the policies module's
 * `PolicyTermVersion` is one, with the rate and unit a journey is rated at).
 */
export interface RatedVersion extends TermMark {
  readonly effectiveAt: Date;
  /** The term in the snapshot, UNIX seconds. */
  readonly startDate: number;
  readonly endDate: number;
}

export type TimeRejectionReason = 'END_NOT_AFTER_START' | 'IN_THE_FUTURE';

/** `end_time` after `start_time`, and not later than now plus the clock-skew allowance (UNIX seconds). */
export function checkJourneyTimes(
  startTime: number,
  endTime: number,
  now: Date,
): { ok: true } | { ok: false; reason: TimeRejectionReason; message: string } {
  if (endTime <= startTime)
    return { ok: false, reason: 'END_NOT_AFTER_START', message: 'end_time must be after start_time' };
  const latest = Math.floor(now.getTime() / 1000) + CLOCK_SKEW_ALLOWANCE_SECONDS;
  if (endTime > latest) {
    return {
      ok: false,
      reason: 'IN_THE_FUTURE',
      message: `end_time ${new Date(endTime * 1000).toISOString()} is in the future (the service's time is ${now.toISOString()}; ${CLOCK_SKEW_ALLOWANCE_SECONDS} s of clock skew are allowed)`,
    };
  }
  return { ok: true };
}

/**
 * The version in force at `at`: the term in force then (the latest that has started; a renewal written
 * ahead of its term waits for it), and of that term's versions that took effect at or before `at`, the
 * one written last (highest sequence). So an adjustment effective mid-term rates journeys from its
 * effective time on, and an adjustment of the current term written after an early renewal does not
 * reach into the renewal's term. Statements, cancellations, lapses and superseded versions set no rate.
 */
export function versionInForce<V extends RatedVersion>(versions: readonly V[], at: Date): V | undefined {
  const terms = termsAt(versions, at, (v) => v.startDate);
  let found: V | undefined;
  for (const v of terms?.current.versions ?? []) {
    if (v.effectiveAt.getTime() > at.getTime()) continue;
    if (found === undefined || v.sequence > found.sequence) found = v;
  }
  return found;
}

export type CoverRejectionReason = 'OUTSIDE_COVER' | 'POLICY_NOT_ACTIVE';

export type CoverResult<V extends RatedVersion> =
  | { readonly ok: true; readonly version: V }
  | { readonly ok: false; readonly reason: CoverRejectionReason; readonly message: string };

const iso = (at: Date): string => at.toISOString();

/**
 * Whether a journey starting at `startAt` is on cover, and the version that rates it.
 * - A cancellation or lapse ends cover at its effective time: a journey starting then or later is
 *   POLICY_NOT_ACTIVE; one starting earlier is still accepted (a late upload) and rated as it stood.
 * - Cover runs from the first term's `start_date` to the current term's `end_date`: a journey starting
 *   outside that is OUTSIDE_COVER (so is one before any version took effect).
 */
export function coverFor<V extends RatedVersion>(versions: readonly V[], startAt: Date): CoverResult<V> {
  const t = startAt.getTime();
  const ending = versions.find(
    (v) => (v.versionType === 'cn' || v.versionType === 'ls') && v.supersededAt === null,
  );
  if (ending !== undefined && t >= ending.effectiveAt.getTime()) {
    const what = ending.versionType === 'cn' ? 'was cancelled' : 'lapsed';
    return {
      ok: false,
      reason: 'POLICY_NOT_ACTIVE',
      message: `The journey starts at ${iso(startAt)}, but the policy ${what} with effect from ${iso(ending.effectiveAt)}`,
    };
  }
  const terms = versions.filter(setsTerm);
  if (terms.length === 0) {
    return { ok: false, reason: 'OUTSIDE_COVER', message: 'The policy has no terms to rate a journey on' };
  }
  const coverStart = new Date(Math.min(...terms.map((v) => v.startDate)) * 1000);
  const coverEnd = new Date(Math.max(...terms.map((v) => v.endDate)) * 1000);
  if (t < coverStart.getTime() || t >= coverEnd.getTime()) {
    return {
      ok: false,
      reason: 'OUTSIDE_COVER',
      message: `The journey starts at ${iso(startAt)}, outside the policy's cover (${iso(coverStart)} to ${iso(coverEnd)})`,
    };
  }
  const version = versionInForce(versions, startAt);
  if (version === undefined) {
    return {
      ok: false,
      reason: 'OUTSIDE_COVER',
      message: `The journey starts at ${iso(startAt)}, before any version of the policy took effect`,
    };
  }
  return { ok: true, version };
}

/** Two journeys overlap when each starts before the other ends; end-to-start contact is no overlap. */
export function overlaps(
  a: { readonly startAt: Date; readonly endAt: Date },
  b: { readonly startAt: Date; readonly endAt: Date },
): boolean {
  return a.startAt.getTime() < b.endAt.getTime() && b.startAt.getTime() < a.endAt.getTime();
}
