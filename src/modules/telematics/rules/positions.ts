/**
 * Positions as a device sends them → the rows to store, each with the policy its binding gives, and the
 * ones refused with their reason. Pure: `now` is a parameter.
 */

import { otherAttributes, type PositionAttributes } from './position-attributes.ts';

/** A device's clock may run ahead of ours by this much before its positions count as in the future. */
export const CLOCK_SKEW_ALLOWANCE_SECONDS = 300;

export interface IncomingPosition {
  /** UNIX seconds (an integer) or an ISO 8601 date-time with an offset. */
  readonly time: number | string;
  readonly lat: number;
  readonly lon: number;
  readonly speed_kmh?: number | undefined;
  readonly heading?: number | undefined;
  readonly accuracy_m?: number | undefined;
  readonly ignition?: boolean | undefined;
  readonly odometer_metres?: number | undefined;
  /** Any other field is one of the position's attributes (bounded by position-attributes.ts). */
  readonly [attribute: string]: unknown;
}

export interface BindingPeriod {
  readonly policyId: string;
  readonly boundAt: Date;
  /** Null while the binding is open. */
  readonly unboundAt: Date | null;
}

export type RejectReason = 'invalid_time' | 'in_future' | 'outside_binding' | 'out_of_range';

export interface Rejection {
  /** Index in the request's `positions`. */
  readonly index: number;
  readonly reason: RejectReason;
  readonly message: string;
}

export interface PositionRow {
  /** UNIX seconds. */
  readonly timeS: number;
  readonly policyId: string;
  readonly lat: number;
  readonly lon: number;
  readonly speedKmh: number | null;
  readonly heading: number | null;
  readonly accuracyM: number | null;
  readonly ignition: boolean | null;
  readonly odometerMetres: number | null;
  /** The position's other fields, or null when it sent none. */
  readonly attributes: PositionAttributes | null;
}

export interface AssignedPositions {
  /** One per distinct time, first arrival kept, in request order. */
  readonly rows: readonly PositionRow[];
  /** Valid positions repeating the time of an earlier one in the same request. */
  readonly duplicatesInRequest: number;
  readonly rejected: readonly Rejection[];
  /** The latest time among `rows`, or undefined when there are none. */
  readonly latestTimeS: number | undefined;
}

// RFC 3339 date-time: a date, a time and an offset (a time without one would be read in the server's zone).
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const UNIX_MAX_SECONDS = 4_102_444_800; // 2100-01-01

/**
 * Epoch milliseconds (whole seconds) of an RFC 3339 date-time whose every field is in its range, or
 * undefined. `Date.parse` alone rolls an impossible day over (30 February is 2 March, hour 24 the next
 * day), so the text's calendar fields must read back from the instant they make. A leap second (:60)
 * is refused: no device clock this service reads sends one.
 */
function isoDateTimeMs(time: string): number | undefined {
  const m = ISO_DATE_TIME.exec(time);
  if (m === null) return undefined;
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] =
    [1, 2, 3, 4, 5, 6, 8, 9].map((group) => Number(m[group] ?? 0));
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day); // setUTCFullYear, unlike Date.UTC, keeps years 0–99
  local.setUTCHours(hour, minute, second, 0);
  if (local.getUTCFullYear() !== year || local.getUTCMonth() !== month - 1 || local.getUTCDate() !== day)
    return undefined;
  const offsetMs = (offsetHours * 60 + offsetMinutes) * 60_000 * (m[7] === '-' ? -1 : 1);
  return local.getTime() - offsetMs;
}

/**
 * UNIX seconds of a position's `time`, or undefined when it is not one. An ISO time keeps its whole
 * second: positions are identified by device and second.
 */
export function positionTimeSeconds(time: number | string): number | undefined {
  if (typeof time === 'number') {
    return Number.isSafeInteger(time) && time >= 0 && time < UNIX_MAX_SECONDS ? time : undefined;
  }
  const ms = isoDateTimeMs(time);
  if (ms === undefined || ms < 0 || ms >= UNIX_MAX_SECONDS * 1000) return undefined;
  return Math.floor(ms / 1000);
}

const finiteIn = (value: number, min: number, max: number): boolean =>
  Number.isFinite(value) && value >= min && value <= max;

/** The first field of a position out of its range, if any. */
function outOfRange(p: IncomingPosition): string | undefined {
  if (!finiteIn(p.lat, -90, 90)) return 'lat must be from -90 to 90';
  if (!finiteIn(p.lon, -180, 180)) return 'lon must be from -180 to 180';
  if (p.speed_kmh !== undefined && !finiteIn(p.speed_kmh, 0, 1000)) return 'speed_kmh must be from 0 to 1000';
  if (p.heading !== undefined && !finiteIn(p.heading, 0, 360)) return 'heading must be from 0 to 360';
  if (p.accuracy_m !== undefined && !finiteIn(p.accuracy_m, 0, 1e6))
    return 'accuracy_m must be from 0 to 1,000,000';
  if (p.odometer_metres !== undefined && !(Number.isSafeInteger(p.odometer_metres) && p.odometer_metres >= 0))
    return 'odometer_metres must be a whole number, 0 or more';
  return undefined;
}

/** The binding whose half-open period [boundAt, unboundAt) holds `timeS`. */
function bindingAt(bindings: readonly BindingPeriod[], timeS: number): BindingPeriod | undefined {
  const ms = timeS * 1000;
  return bindings.find(
    (b) => b.boundAt.getTime() <= ms && (b.unboundAt === null || ms < b.unboundAt.getTime()),
  );
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/**
 * Checks each position on its own (a bad one never refuses the batch) and gives each good one the
 * policy of the device's binding at its time. A position is refused when its time is unreadable, more
 * than CLOCK_SKEW_ALLOWANCE_SECONDS after `now`, or outside every binding, or a value is out of range.
 */
export function assignPositions(
  positions: readonly IncomingPosition[],
  bindings: readonly BindingPeriod[],
  now: Date,
): AssignedPositions {
  const latestAllowedS = Math.floor(now.getTime() / 1000) + CLOCK_SKEW_ALLOWANCE_SECONDS;
  const rows: PositionRow[] = [];
  const rejected: Rejection[] = [];
  const seen = new Set<number>();
  let duplicatesInRequest = 0;
  let latestTimeS: number | undefined;
  positions.forEach((p, index) => {
    const timeS = positionTimeSeconds(p.time);
    if (timeS === undefined) {
      rejected.push({
        index,
        reason: 'invalid_time',
        message:
          'time must be UNIX seconds (an integer) or an ISO 8601 date-time with an offset, before 2100',
      });
      return;
    }
    const range = outOfRange(p);
    if (range !== undefined) {
      rejected.push({ index, reason: 'out_of_range', message: range });
      return;
    }
    if (timeS > latestAllowedS) {
      rejected.push({
        index,
        reason: 'in_future',
        message: `time ${iso(timeS)} is more than ${CLOCK_SKEW_ALLOWANCE_SECONDS} seconds ahead of the server's clock`,
      });
      return;
    }
    const binding = bindingAt(bindings, timeS);
    if (binding === undefined) {
      rejected.push({
        index,
        reason: 'outside_binding',
        message: `the device was not bound to a policy at ${iso(timeS)}`,
      });
      return;
    }
    if (seen.has(timeS)) {
      duplicatesInRequest++;
      return;
    }
    seen.add(timeS);
    if (latestTimeS === undefined || timeS > latestTimeS) latestTimeS = timeS;
    rows.push({
      timeS,
      policyId: binding.policyId,
      lat: p.lat,
      lon: p.lon,
      speedKmh: p.speed_kmh ?? null,
      heading: p.heading ?? null,
      accuracyM: p.accuracy_m ?? null,
      ignition: p.ignition ?? null,
      odometerMetres: p.odometer_metres ?? null,
      attributes: otherAttributes(p),
    });
  });
  return { rows, duplicatesInRequest, rejected, latestTimeS };
}
