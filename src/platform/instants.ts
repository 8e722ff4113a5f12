/**
 * The instants a request may name: years 1000 to 9999 UTC, what every store and the calendar code hold
 * (PostgreSQL has no year 0, a JavaScript `Date` ends at ±8.64e15 ms, and the API's dates are four-digit
 * years). Cursors and query bounds that carry an instant are checked against these before use.
 */
import { Type, type TString } from 'typebox';

/** 1000-01-01T00:00:00Z in epoch milliseconds: the first instant a request may name. */
export const FIRST_INSTANT_MS = Date.UTC(1000, 0, 1);
/** 10000-01-01T00:00:00Z in epoch milliseconds: the first instant after the last a request may name. */
export const END_INSTANT_MS = Date.UTC(10000, 0, 1);

/** A `YYYY-MM` month of years 1000–9999, the months a request may name. */
export const MONTH_PATTERN = '^[1-9][0-9]{3}-(0[1-9]|1[0-2])$';

/** Whether `ms` is whole epoch milliseconds in years 1000–9999 UTC. */
export function isInstantMs(ms: unknown): ms is number {
  return typeof ms === 'number' && Number.isInteger(ms) && ms >= FIRST_INSTANT_MS && ms < END_INSTANT_MS;
}

/**
 * A date-time query or body string (RFC 3339) of years 1000–9999; the year is read before any offset,
 * so an offset can move the instant a few hours past either end, which every store still holds.
 */
export function dateTimeSchema(options: { description?: string } = {}): TString {
  return Type.String({ ...options, format: 'date-time', pattern: '^[1-9]\\d{3}-' });
}
