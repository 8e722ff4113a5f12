/**
 * An odometer reading as a client sends it → the policy's reading to store, or why not. Pure: `now` is
 * a parameter.
 */
import { Decimal } from 'decimal.js';
import { CLOCK_SKEW_ALLOWANCE_SECONDS, positionTimeSeconds } from './positions.ts';

/** Metres in an international mile, exactly. */
const METRES_PER_MILE = '1609.344';
/** Past any car's odometer (about 6 million miles): a larger value is a unit mistake. */
const MAX_READING_METRES = 10_000_000_000;

export interface OdometerInput {
  readonly device_id?: string | undefined;
  readonly policy_reference?: string | undefined;
  readonly reading_metres?: number | undefined;
  readonly reading_miles?: number | undefined;
  readonly time: number | string;
}

export type ParsedReading =
  | {
      readonly ok: true;
      readonly by: { readonly deviceId: string } | { readonly policyReference: string };
      readonly readingMetres: number;
      readonly timeS: number;
    }
  | { readonly ok: false; readonly path: string; readonly message: string };

/** Miles → whole metres, exactly (decimal), half-up. */
export function milesToMetres(miles: number): number {
  return new Decimal(miles).times(METRES_PER_MILE).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber();
}

/**
 * Checks a reading: exactly one of `device_id` and `policy_reference`, exactly one of `reading_metres`
 * and `reading_miles` (miles become whole metres), a readable `time` not more than the clock skew
 * allowance ahead of `now`.
 */
export function parseReading(input: OdometerInput, now: Date): ParsedReading {
  const fail = (path: string, message: string): ParsedReading => ({ ok: false, path, message });
  if ((input.device_id === undefined) === (input.policy_reference === undefined))
    return fail('/body', 'must have exactly one of device_id and policy_reference');
  if ((input.reading_metres === undefined) === (input.reading_miles === undefined))
    return fail('/body', 'must have exactly one of reading_metres and reading_miles');
  const readingMetres =
    input.reading_metres ?? (input.reading_miles === undefined ? 0 : milesToMetres(input.reading_miles));
  if (!Number.isSafeInteger(readingMetres) || readingMetres < 0 || readingMetres > MAX_READING_METRES)
    return fail(
      input.reading_metres === undefined ? '/body/reading_miles' : '/body/reading_metres',
      'is out of range',
    );
  const timeS = positionTimeSeconds(input.time);
  if (timeS === undefined)
    return fail('/body/time', 'must be UNIX seconds or an ISO 8601 date-time with an offset');
  if (timeS > Math.floor(now.getTime() / 1000) + CLOCK_SKEW_ALLOWANCE_SECONDS)
    return fail('/body/time', 'must not be in the future');
  return {
    ok: true,
    by:
      input.device_id === undefined
        ? { policyReference: input.policy_reference ?? '' }
        : { deviceId: input.device_id },
    readingMetres,
    timeS,
  };
}

/**
 * Whether a reading fits between the policy's readings next to it in time: an odometer never goes back,
 * so it must be at least the one before and at most the one after (equal is a car that stood still).
 */
export function monotonicAmong(
  readingMetres: number,
  neighbours: { readonly before?: number | undefined; readonly after?: number | undefined },
): boolean {
  return (
    (neighbours.before === undefined || readingMetres >= neighbours.before) &&
    (neighbours.after === undefined || readingMetres <= neighbours.after)
  );
}

/**
 * No car averages more than this between two readings (the fastest a position may imply, trips'
 * `DEFAULT_MAX_SPEED_KMH`): a reading that would is a typo or a unit mistake, and billed on an
 * odometer-billed product it would charge for miles never driven.
 */
export const MAX_AVERAGE_SPEED_KMH = 300;
/** What two readings may be out on top of that: a dashboard shows whole miles (1,609 m). */
const READING_RESOLUTION_METRES = 2_000;

interface TimedReading {
  readonly readingMetres: number;
  readonly timeS: number;
}

/** Whether `later` is within reach of `earlier` at MAX_AVERAGE_SPEED_KMH (integers: no rounding). */
function withinReach(earlier: TimedReading, later: TimedReading): boolean {
  const metres = later.readingMetres - earlier.readingMetres - READING_RESOLUTION_METRES;
  const seconds = later.timeS - earlier.timeS;
  // metres / seconds ≤ km/h × 1,000 / 3,600, multiplied out
  return metres * 36 <= seconds * MAX_AVERAGE_SPEED_KMH * 10;
}

/**
 * Which neighbour in time the reading is too far from to have been driven at MAX_AVERAGE_SPEED_KMH
 * (call after `monotonicAmong`), or undefined when it fits.
 */
export function unreachableFrom(
  reading: TimedReading,
  neighbours: { readonly before?: TimedReading | undefined; readonly after?: TimedReading | undefined },
): 'before' | 'after' | undefined {
  if (neighbours.before !== undefined && !withinReach(neighbours.before, reading)) return 'before';
  if (neighbours.after !== undefined && !withinReach(reading, neighbours.after)) return 'after';
  return undefined;
}

/** The binding of a device holding `timeS` in its half-open period [boundAt, unboundAt), if any. */
export function bindingAt<B extends { readonly boundAt: Date; readonly unboundAt: Date | null }>(
  bindings: readonly B[],
  timeS: number,
): B | undefined {
  const ms = timeS * 1000;
  return bindings.find(
    (b) => b.boundAt.getTime() <= ms && (b.unboundAt === null || ms < b.unboundAt.getTime()),
  );
}
