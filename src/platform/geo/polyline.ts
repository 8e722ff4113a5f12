/**
 * Google's encoded polyline format, decoded strictly and fast.
 *
 * A route arrives as one string per journey and is decoded once per upload, so the decoder is a single
 * pass over char codes with integer arithmetic, writing straight into one Float64Array (no array per point).
 * It validates as it goes and reports expected failures as a result, never a throw. bench/geometry.ts
 * compares it with @mapbox/polyline's algorithm.
 */

export type PolylinePrecision = 5 | 6;

export type PolylineFailureReason =
  'EMPTY' | 'INVALID_CHARACTER' | 'TRUNCATED' | 'OUT_OF_RANGE' | 'TOO_FEW_POINTS' | 'TOO_MANY_POINTS';

export interface DecodedPolyline {
  readonly ok: true;
  /** Latitude and longitude interleaved, in degrees: `[lat0, lng0, lat1, lng1, …]`; length is `2 * count`. */
  readonly points: Float64Array<ArrayBuffer>;
  readonly count: number;
}

export interface PolylineFailure {
  readonly ok: false;
  readonly reason: PolylineFailureReason;
  /** Character offset in the encoded string where the problem starts (absent for EMPTY and TOO_FEW_POINTS). */
  readonly index?: number;
  readonly message: string;
}

export type PolylineDecodeResult = DecodedPolyline | PolylineFailure;

export interface DecodeOptions {
  /** Routes with more points are rejected with TOO_MANY_POINTS (default 100,000). */
  readonly maxPoints?: number;
  /**
   * Lend the decoder's own buffer instead of a copy (its first `count * 2` values are the points): for a
   * caller that is done with the points before it decodes again or awaits anything. Ingestion measures
   * each route and drops it; a copy per request was 16 kB of off-heap memory for the collector to chase.
   */
  readonly borrow?: boolean;
}

export const DEFAULT_MAX_POINTS = 100_000;

/** Largest zigzag value a legitimate coordinate delta can need: 2 × 360° × 10^6 < 2^30, i.e. six 5-bit chunks. */
const MAX_SHIFT = 30;

function failure(reason: PolylineFailureReason, message: string, index?: number): PolylineFailure {
  return index === undefined ? { ok: false, reason, message } : { ok: false, reason, index, message };
}

/**
 * Decodes an encoded polyline at precision 5 (1e-5°) or 6 (1e-6°) into interleaved lat/lng degrees.
 * Strict: only ASCII 63..126, no value left unfinished, latitudes within ±90 and longitudes within ±180,
 * at least 2 and at most `maxPoints` points. Coordinates are exact decimal quotients (`units / 10^precision`).
 */
export function decodePolyline(
  encoded: string,
  precision: PolylinePrecision,
  options: DecodeOptions = {},
): PolylineDecodeResult {
  const maxPoints = options.maxPoints ?? DEFAULT_MAX_POINTS;
  const length = encoded.length;
  if (length === 0) return failure('EMPTY', 'the route is empty');

  const factor = precision === 6 ? 1e6 : 1e5;
  const maxLat = 90 * factor;
  const maxLng = 180 * factor;
  // Every value takes at least one character, so a point takes at least two: this bounds the output without a
  // counting pass. Points go into a reused scratch buffer and the result is one exact-size copy of it, which
  // costs less than zero-filling a fresh worst-case buffer for every route.
  const capacity = Math.min(length >> 1, maxPoints);
  const out = scratchFor(capacity * 2);

  let i = 0;
  let count = 0;
  let lat = 0;
  let lng = 0;
  const fastEnd = length - 6;
  while (i < length) {
    // Fast path, without a branch on how long each value is (a branch the processor cannot predict): read
    // three characters for each value, which covers steps up to 0.16° at precision 5 and 0.016° at precision 6.
    // Anything else (a longer value, a character out of range, a coordinate out of range, the end of the
    // string, the point limit) falls through to the general path below, which decodes and reports it.
    if (i <= fastEnd) {
      const a0 = encoded.charCodeAt(i) - 63;
      const a1 = encoded.charCodeAt(i + 1) - 63;
      const a2 = encoded.charCodeAt(i + 2) - 63;
      const aMore0 = a0 >> 5; // 1 when a second chunk follows (for chunks in 0..63)
      const aMore1 = aMore0 & (a1 >> 5);
      const j = i + 1 + aMore0 + aMore1;
      const b0 = encoded.charCodeAt(j) - 63;
      const b1 = encoded.charCodeAt(j + 1) - 63;
      const b2 = encoded.charCodeAt(j + 2) - 63;
      const bMore0 = b0 >> 5;
      const bMore1 = bMore0 & (b1 >> 5);
      if ((((a0 | a1 | a2 | b0 | b1 | b2) >>> 6) | (aMore1 & (a2 >> 5)) | (bMore1 & (b2 >> 5))) === 0) {
        const a = (a0 & 31) | (((a1 & 31) << 5) & -aMore0) | (((a2 & 31) << 10) & -aMore1);
        const b = (b0 & 31) | (((b1 & 31) << 5) & -bMore0) | (((b2 & 31) << 10) & -bMore1);
        const nextLat = lat + ((a >> 1) ^ -(a & 1));
        const nextLng = lng + ((b >> 1) ^ -(b & 1));
        if (
          nextLat >= -maxLat &&
          nextLat <= maxLat &&
          nextLng >= -maxLng &&
          nextLng <= maxLng &&
          count < maxPoints
        ) {
          lat = nextLat;
          lng = nextLng;
          out[count * 2] = lat / factor;
          out[count * 2 + 1] = lng / factor;
          count++;
          i = j + 1 + bMore0 + bMore1;
          continue;
        }
      }
    }

    // General path: one point, value by value, with every check.
    const pointStart = i;

    // Latitude delta: 5-bit chunks, least significant first; a chunk ≥ 32 says another follows.
    let chunk = encoded.charCodeAt(i) - 63;
    if (chunk < 0 || chunk > 63) return invalidCharacter(encoded, i);
    let value = chunk & 31;
    let shift = 5;
    i++;
    while (chunk >= 32) {
      if (i === length) return truncatedValue(pointStart);
      if (shift === MAX_SHIFT) return stepTooLarge(count, 'latitude', pointStart);
      chunk = encoded.charCodeAt(i) - 63;
      if (chunk < 0 || chunk > 63) return invalidCharacter(encoded, i);
      value |= (chunk & 31) << shift;
      shift += 5;
      i++;
    }
    lat += (value & 1) === 0 ? value >> 1 : ~(value >> 1);

    if (i === length)
      return failure('TRUNCATED', `point ${count} has a latitude but no longitude`, pointStart);
    const lngStart = i;
    chunk = encoded.charCodeAt(i) - 63;
    if (chunk < 0 || chunk > 63) return invalidCharacter(encoded, i);
    value = chunk & 31;
    shift = 5;
    i++;
    while (chunk >= 32) {
      if (i === length) return truncatedValue(lngStart);
      if (shift === MAX_SHIFT) return stepTooLarge(count, 'longitude', lngStart);
      chunk = encoded.charCodeAt(i) - 63;
      if (chunk < 0 || chunk > 63) return invalidCharacter(encoded, i);
      value |= (chunk & 31) << shift;
      shift += 5;
      i++;
    }
    lng += (value & 1) === 0 ? value >> 1 : ~(value >> 1);

    // Checked at every point, this also keeps the accumulators far inside 31-bit integers.
    if (lat < -maxLat || lat > maxLat || lng < -maxLng || lng > maxLng)
      return outOfRange(count, lat / factor, lng / factor, precision, pointStart);
    if (count === maxPoints)
      return failure('TOO_MANY_POINTS', `the route has more than ${maxPoints} points`, pointStart);
    out[count * 2] = lat / factor;
    out[count * 2 + 1] = lng / factor;
    count++;
  }

  if (count < 2) return failure('TOO_FEW_POINTS', 'a route needs at least 2 points');
  return { ok: true, points: options.borrow === true ? out : out.slice(0, count * 2), count };
}

/**
 * Scratch kept between calls only up to this size (2 MB); a longer route gets a buffer of its own. Sharing it
 * is safe: decoding is synchronous, and the scratch leaves decodePolyline only when lent (`borrow`).
 */
const SCRATCH_KEPT = 1 << 18;
let scratch = new Float64Array(1 << 12);

function scratchFor(size: number): Float64Array<ArrayBuffer> {
  if (size <= scratch.length) return scratch;
  if (size > SCRATCH_KEPT) return new Float64Array(size);
  scratch = new Float64Array(Math.min(SCRATCH_KEPT, Math.max(size, scratch.length * 2)));
  return scratch;
}

// The decoder's failures, described apart from it: they are its cold paths, and the loop stays short.

function truncatedValue(start: number): PolylineFailure {
  return failure('TRUNCATED', `the route ends inside a value started at character ${start}`, start);
}

function stepTooLarge(point: number, axis: 'latitude' | 'longitude', start: number): PolylineFailure {
  return failure('OUT_OF_RANGE', `point ${point} has a ${axis} step too large to be a coordinate`, start);
}

function outOfRange(
  point: number,
  latDegrees: number,
  lngDegrees: number,
  precision: PolylinePrecision,
  start: number,
): PolylineFailure {
  return failure(
    'OUT_OF_RANGE',
    `point ${point} is at latitude ${latDegrees.toFixed(precision)}, longitude ${lngDegrees.toFixed(precision)}: latitude must be within ±90 and longitude within ±180`,
    start,
  );
}

function invalidCharacter(encoded: string, index: number): PolylineFailure {
  const code = encoded.charCodeAt(index);
  const shown =
    code >= 32 && code < 127
      ? `'${encoded.charAt(index)}'`
      : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return failure(
    'INVALID_CHARACTER',
    `character ${index} (${shown}) is not part of an encoded polyline (ASCII 63 to 126)`,
    index,
  );
}

/**
 * Encodes interleaved lat/lng degrees (`[lat0, lng0, lat1, lng1, …]`) at precision 5 or 6.
 * Coordinates are rounded half away from zero to the precision, as Google's reference encoder does.
 * Throws RangeError on a coordinate that is not finite or is out of range (a caller bug, not user input).
 */
export function encodePolyline(points: ArrayLike<number>, precision: PolylinePrecision): string {
  if (points.length % 2 !== 0) throw new RangeError('points must hold latitude and longitude pairs');
  const factor = precision === 6 ? 1e6 : 1e5;
  const codes: number[] = [];
  let previousLat = 0;
  let previousLng = 0;
  for (let k = 0; k < points.length; k += 2) {
    const latDegrees = points[k] ?? Number.NaN;
    const lngDegrees = points[k + 1] ?? Number.NaN;
    if (!(Math.abs(latDegrees) <= 90) || !(Math.abs(lngDegrees) <= 180)) {
      throw new RangeError(`point ${k / 2} (${latDegrees}, ${lngDegrees}) is not a valid coordinate`);
    }
    const lat = roundHalfAwayFromZero(latDegrees * factor);
    const lng = roundHalfAwayFromZero(lngDegrees * factor);
    pushValue(codes, lat - previousLat);
    pushValue(codes, lng - previousLng);
    previousLat = lat;
    previousLng = lng;
  }
  let encoded = '';
  // fromCharCode with a spread is bounded by the engine's argument limit, so convert in slices.
  for (let start = 0; start < codes.length; start += 8192) {
    encoded += String.fromCharCode(...codes.slice(start, start + 8192));
  }
  return encoded;
}

function roundHalfAwayFromZero(value: number): number {
  return value < 0 ? -Math.round(-value) : Math.round(value);
}

function pushValue(codes: number[], delta: number): void {
  // Zigzag with arithmetic rather than bit shifts, so no 32-bit overflow is possible.
  let rest = delta < 0 ? -2 * delta - 1 : 2 * delta;
  while (rest >= 32) {
    codes.push((rest % 32) + 32 + 63);
    rest = Math.floor(rest / 32);
  }
  codes.push(rest + 63);
}

/** The first point of a decoded route as `{ lat, lng }` degrees; undefined for an empty route. */
export function firstPoint(
  points: ArrayLike<number>,
  count: number,
): { lat: number; lng: number } | undefined {
  return pointAt(points, count, 0);
}

/** The last point of a decoded route as `{ lat, lng }` degrees; undefined for an empty route. */
export function lastPoint(
  points: ArrayLike<number>,
  count: number,
): { lat: number; lng: number } | undefined {
  return pointAt(points, count, count - 1);
}

function pointAt(
  points: ArrayLike<number>,
  count: number,
  k: number,
): { lat: number; lng: number } | undefined {
  if (k < 0 || k >= count) return undefined;
  const lat = points[2 * k];
  const lng = points[2 * k + 1];
  return lat === undefined || lng === undefined ? undefined : { lat, lng };
}
