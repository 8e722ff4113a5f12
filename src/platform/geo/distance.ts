/**
 * Route length on the WGS84 ellipsoid.
 *
 * Short segments (what GPS trackers send: a point every 5–300 m) use the flat-ellipsoid approximation
 * (the formula of cheap-ruler): the segment is measured in the plane tangent at its mean latitude, scaled by
 * the WGS84 radii of curvature there (N·cosφ east–west, M north–south). Its error is second order in the
 * segment length. Measured against Karney's geodesics (geographiclib-geodesic, UK latitudes 49.9–58.7°, every
 * 5° of bearing), worst relative error of one segment:
 *
 *   length     5 m      50 m     100 m    200 m    300 m    400 m    500 m    600 m    1 km
 *   flat       4.4e-10  3.3e-11  3.9e-11  1.4e-10  3.0e-10  5.3e-10  8.3e-10  1.2e-9   3.3e-9
 *   Vincenty   4.7e-10  4.9e-11  2.6e-11  1.3e-11  1.1e-11  6.1e-12  5.1e-12  4.8e-12  4.2e-12
 *
 * Below ~50 m the figure is not the formula's error but the rounding noise of the reference (and of
 * Vincenty): both work from sines of whole latitudes, so they lose ~2e-9 m absolute per segment, while the
 * flat formula differences the coordinates exactly. Segments longer than LONG_SEGMENT_METRES (400 m) use
 * Vincenty's inverse formula (≤ 1e-11 there, 7e-12 up to 20,000 km), so no segment is worse than 5.3e-10
 * and neither is any route, its error being a length-weighted mean of its segments' (see distance.test.ts).
 *
 * The flat formula's error also grows towards the poles: 400 m segments reach 5.8e-10 at 60°, 8.0e-10 at
 * 64°, 1.2e-9 at 70° and 4e-7 at 89°. Segments further than FLAT_MAX_LATITUDE from the equator go to
 * Vincenty whatever their length, so a route anywhere on Earth stays within 1e-9 (all of Great Britain,
 * 49.9–60.9°, keeps the flat formula).
 *
 * Each segment is rounded to a grid of 2^-30 m (~1 nm, so ≤ 1e-10 of a 5 m segment) before it is added: the
 * sum is then exact in binary floating point (below 8,388 km) and does not depend on the order of addition, so
 * the length of a route is exactly the sum of the lengths of its parts. That needs each segment's length to
 * be a function of its two end points alone, which is why the loop carries no state but the running total.
 */

const WGS84_A = 6_378_137; // semi-major axis, metres
const WGS84_F = 1 / 298.257_223_563; // flattening
const WGS84_B = WGS84_A * (1 - WGS84_F);
const E2 = WGS84_F * (2 - WGS84_F); // first eccentricity squared
const ONE_MINUS_E2 = 1 - E2;
const RAD = Math.PI / 180;
const HALF_RAD = RAD / 2;
const A_RAD = WGS84_A * RAD;

/** Above this the flat approximation's error could exceed 5.3e-10 relative, so the segment goes to Vincenty. */
export const LONG_SEGMENT_METRES = 400;

/** Degrees of mean latitude beyond which every segment goes to Vincenty (see the table above). */
export const FLAT_MAX_LATITUDE = 64;
const FLAT_MIN_COS_LATITUDE = Math.cos(FLAT_MAX_LATITUDE * RAD);

/** The summation grid: 2^30 steps per metre. */
const GRID = 1_073_741_824;
/**
 * 1.5 × 2^52: adding it to a double in [0, 2^51) and subtracting it again rounds to an integer (half to even)
 * exactly, several times faster than Math.round in V8's optimised code.
 */
const ROUND_TO_INTEGER = 6_755_399_441_055_744;

/**
 * Distance in metres between two points (degrees) on the WGS84 ellipsoid: flat-ellipsoid approximation for
 * short segments, Vincenty's inverse for long ones. Longitudes are compared the short way round.
 */
export function segmentDistanceMetres(lat1: number, lng1: number, lat2: number, lng2: number): number {
  let dLng = lng2 - lng1;
  if (dLng > 180) dLng -= 360;
  else if (dLng < -180) dLng += 360;
  const cosLat = Math.cos((lat1 + lat2) * HALF_RAD);
  // With w2 = 1 / (1 − e² sin²φ): the prime-vertical radius is N = a·√w2 and the meridional radius is
  // M = a·w2^(3/2)·(1 − e²), so √((N cosφ Δλ)² + (M Δφ)²) = a·√(w2·((cosφ Δλ)² + (w2 (1 − e²) Δφ)²)).
  const w2 = 1 / (1 - E2 * (1 - cosLat * cosLat));
  const east = cosLat * dLng;
  const north = w2 * ONE_MINUS_E2 * (lat2 - lat1);
  const flat = A_RAD * Math.sqrt(w2 * (east * east + north * north));
  return flat > LONG_SEGMENT_METRES || cosLat < FLAT_MIN_COS_LATITUDE
    ? vincentyMetres(lat1, lng1, lat2, lng2)
    : flat;
}

/**
 * Length in metres of a route of `count` points (interleaved lat/lng degrees) on the WGS84 ellipsoid,
 * unrounded (a multiple of 2^-30 m). Additive: a route's length is exactly the sum of the lengths of the
 * two routes it splits into at any point. 0 for fewer than 2 points.
 */
export function routeLengthMetres(points: ArrayLike<number>, count: number): number {
  if (!Number.isInteger(count) || count < 0 || count * 2 > points.length) {
    throw new RangeError(`count ${count} does not fit ${points.length} coordinates`);
  }
  if (count < 2) return 0;
  let total = 0;
  let lat1 = points[0] as number;
  let lng1 = points[1] as number;
  // The bounds check above makes every read below defined; the loop is the hot path of journey upload,
  // so the segment formula is inlined rather than called.
  for (let k = 1; k < count; k++) {
    const lat2 = points[2 * k] as number;
    const lng2 = points[2 * k + 1] as number;
    let dLng = lng2 - lng1;
    if (dLng > 180) dLng -= 360;
    else if (dLng < -180) dLng += 360;
    const cosLat = Math.cos((lat1 + lat2) * HALF_RAD);
    const w2 = 1 / (1 - E2 * (1 - cosLat * cosLat));
    const east = cosLat * dLng;
    const north = w2 * ONE_MINUS_E2 * (lat2 - lat1);
    const metres = A_RAD * Math.sqrt(w2 * (east * east + north * north));
    total +=
      metres > LONG_SEGMENT_METRES || cosLat < FLAT_MIN_COS_LATITUDE
        ? Math.round(vincentyMetres(lat1, lng1, lat2, lng2) * GRID)
        : metres * GRID + ROUND_TO_INTEGER - ROUND_TO_INTEGER;
    lat1 = lat2;
    lng1 = lng2;
  }
  return total / GRID;
}

/**
 * Distance in whole metres of a route of `count` points (interleaved lat/lng degrees) on the WGS84 ellipsoid.
 * The exact total is rounded once, with Math.round (a tie, which needs a total of exactly n + 0.5 m, goes up).
 */
export function routeDistanceMetres(points: ArrayLike<number>, count: number): number {
  return Math.round(routeLengthMetres(points, count));
}

/**
 * Vincenty's inverse formula (1975) on WGS84, in metres. Converges in a few iterations for any pair of
 * points that are not nearly antipodal; for those (which no road journey has between consecutive points)
 * it stops after 200 iterations with an answer good to about 0.1 %.
 */
export function vincentyMetres(lat1: number, lng1: number, lat2: number, lng2: number): number {
  let dLng = lng2 - lng1;
  if (dLng > 180) dLng -= 360;
  else if (dLng < -180) dLng += 360;
  const L = dLng * RAD;
  const U1 = Math.atan((1 - WGS84_F) * Math.tan(lat1 * RAD));
  const U2 = Math.atan((1 - WGS84_F) * Math.tan(lat2 * RAD));
  const sinU1 = Math.sin(U1);
  const cosU1 = Math.cos(U1);
  const sinU2 = Math.sin(U2);
  const cosU2 = Math.cos(U2);

  let lambda = L;
  let sinSigma = 0;
  let cosSigma = 1;
  let sigma = 0;
  let cos2Alpha = 1;
  let cos2SigmaM = 0;
  for (let iteration = 0; iteration < 200; iteration++) {
    const sinLambda = Math.sin(lambda);
    const cosLambda = Math.cos(lambda);
    const t1 = cosU2 * sinLambda;
    const t2 = cosU1 * sinU2 - sinU1 * cosU2 * cosLambda;
    sinSigma = Math.sqrt(t1 * t1 + t2 * t2);
    if (sinSigma === 0) return 0; // coincident points
    cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda;
    sigma = Math.atan2(sinSigma, cosSigma);
    const sinAlpha = (cosU1 * cosU2 * sinLambda) / sinSigma;
    cos2Alpha = 1 - sinAlpha * sinAlpha;
    cos2SigmaM = cos2Alpha === 0 ? 0 : cosSigma - (2 * sinU1 * sinU2) / cos2Alpha; // 0 on the equator
    const C = (WGS84_F / 16) * cos2Alpha * (4 + WGS84_F * (4 - 3 * cos2Alpha));
    const previous = lambda;
    lambda =
      L +
      (1 - C) *
        WGS84_F *
        sinAlpha *
        (sigma + C * sinSigma * (cos2SigmaM + C * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)));
    // Relative test: λ is as small as the segment, and an absolute tolerance would cap short-line accuracy.
    if (Math.abs(lambda - previous) <= 1e-15 * Math.abs(lambda)) break;
  }

  const u2 = (cos2Alpha * (WGS84_A * WGS84_A - WGS84_B * WGS84_B)) / (WGS84_B * WGS84_B);
  const A = 1 + (u2 / 16384) * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)));
  const B = (u2 / 1024) * (256 + u2 * (-128 + u2 * (74 - 47 * u2)));
  const deltaSigma =
    B *
    sinSigma *
    (cos2SigmaM +
      (B / 4) *
        (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM) -
          (B / 6) * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)));
  return WGS84_B * A * (sigma - deltaSigma);
}
