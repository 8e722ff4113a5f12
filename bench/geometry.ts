/**
 * Journey geometry: decode an encoded polyline and measure it on the WGS84 ellipsoid.
 *
 *   npx node bench/geometry.ts [seconds per loop, default 3]
 *
 * Generates 2,000 UK routes of 1,000 points (a point every 5–300 m, as trackers send), encodes them at
 * precision 5, then on one core times `decodePolyline` + `routeDistanceMetres` over all of them against the
 * baseline in the same run: a straightforward decoder into [lat, lng] pairs (the code of @mapbox/polyline)
 * followed by cheap-ruler's `lineDistance`. Passes of the loops alternate for about `seconds` each; the figures
 * are the best pass (least disturbed by other processes), with the median beside it.
 * Budget (DESIGN §5): ≥ 20 million points/s.
 */
import CheapRuler from 'cheap-ruler';
import { decodePolyline, encodePolyline, routeDistanceMetres } from '../src/platform/geo/index.ts';
import { seededRandom } from './support.ts';

const ROUTES = 2000;
const POINTS_PER_ROUTE = 1000;
const secondsPerLoop = Number(process.argv[2] ?? 3);

function generateRoute(random: () => number, points: number): Float64Array {
  const route = new Float64Array(points * 2);
  let lat = 50.5 + random() * 7;
  let lng = -5 + random() * 6;
  let heading = random() * 2 * Math.PI;
  for (let k = 0; k < points; k++) {
    route[2 * k] = lat;
    route[2 * k + 1] = lng;
    const step = 5 + random() * 295;
    heading += (random() - 0.5) * 0.6;
    lat += (step * Math.cos(heading)) / 111_200;
    lng += (step * Math.sin(heading)) / (111_320 * Math.cos((lat * Math.PI) / 180));
  }
  return route;
}

/** The baseline decoder: @mapbox/polyline's algorithm, one [lat, lng] array per point. */
function referenceDecode(encoded: string, precision: number): [number, number][] {
  const factor = 10 ** precision;
  const coordinates: [number, number][] = [];
  let index = 0;
  let lat = 0;
  let lng = 0;
  while (index < encoded.length) {
    let shift = 1;
    let result = 0;
    let byte: number;
    do {
      byte = encoded.charCodeAt(index++) - 63;
      result += (byte & 0x1f) * shift;
      shift *= 32;
    } while (byte >= 0x20);
    const latitudeChange = result & 1 ? (-result - 1) / 2 : result / 2;
    shift = 1;
    result = 0;
    do {
      byte = encoded.charCodeAt(index++) - 63;
      result += (byte & 0x1f) * shift;
      shift *= 32;
    } while (byte >= 0x20);
    const longitudeChange = result & 1 ? (-result - 1) / 2 : result / 2;
    lat += latitudeChange;
    lng += longitudeChange;
    coordinates.push([lat / factor, lng / factor]);
  }
  return coordinates;
}

function baselineDistance(encoded: string): number {
  const latLng = referenceDecode(encoded, 5);
  const lngLat = latLng.map(([lat, lng]): [number, number] => [lng, lat]);
  const first = latLng[0];
  if (first === undefined) return 0;
  return new CheapRuler(first[0], 'metres').lineDistance(lngLat);
}

function milepostDistance(encoded: string): number {
  const decoded = decodePolyline(encoded, 5);
  if (!decoded.ok) throw new Error(decoded.message);
  return routeDistanceMetres(decoded.points, decoded.count);
}

/** One pass of `measure` over every route; returns points per second. */
function timePass(encoded: readonly string[], measure: (route: string) => number): number {
  let checksum = 0;
  const started = process.hrtime.bigint();
  for (const route of encoded) checksum += measure(route);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (!(checksum > 0)) throw new Error('no distance measured');
  return (encoded.length * POINTS_PER_ROUTE) / seconds;
}

interface Rates {
  best: number;
  median: number;
}

/**
 * Alternates passes of the loops until each has run about `seconds`, and keeps each one's best and median
 * pass: on a shared machine the best pass is the one least disturbed by other processes, and alternating
 * exposes every loop to the same conditions.
 */
function race(
  encoded: readonly string[],
  loops: readonly ((route: string) => number)[],
  seconds: number,
): Rates[] {
  for (const route of encoded.slice(0, 300)) for (const measure of loops) measure(route); // warm the JIT
  const rates = loops.map((): number[] => []);
  let spent = 0;
  while (spent < loops.length * seconds) {
    loops.forEach((measure, k) => {
      const rate = timePass(encoded, measure);
      rates[k]?.push(rate);
      spent += (encoded.length * POINTS_PER_ROUTE) / rate;
    });
  }
  return rates.map((passes) => {
    const sorted = passes.toSorted((a, b) => a - b);
    return { best: sorted.at(-1) ?? 0, median: sorted[sorted.length >> 1] ?? 0 };
  });
}

function decodeOnly(encoded: string): number {
  const decoded = decodePolyline(encoded, 5);
  return decoded.ok ? decoded.count : 0;
}

function referenceDecodeOnly(encoded: string): number {
  return referenceDecode(encoded, 5).length;
}

const random = seededRandom(20261121);
const encoded: string[] = [];
let characters = 0;
for (let r = 0; r < ROUTES; r++) {
  const route = encodePolyline(generateRoute(random, POINTS_PER_ROUTE), 5);
  encoded.push(route);
  characters += route.length;
}
console.log(
  `routes: ${ROUTES} × ${POINTS_PER_ROUTE} points, ${(characters / ROUTES / POINTS_PER_ROUTE).toFixed(2)} characters a point, precision 5`,
);

const [baseline, milepost, referenceDecoder, decoder] = race(
  encoded,
  [baselineDistance, milepostDistance, referenceDecodeOnly, decodeOnly],
  secondsPerLoop,
) as [Rates, Rates, Rates, Rates];
const millions = (perSecond: number) => `${(perSecond / 1e6).toFixed(1)}M`;
const show = (rates: Rates) => `${millions(rates.best)} points/s (median pass ${millions(rates.median)})`;
console.log(`decode only: reference (@mapbox/polyline's algorithm) ${show(referenceDecoder)}`);
console.log(`decode only: decodePolyline ${show(decoder)}`);
console.log(`baseline (reference decode + cheap-ruler lineDistance, one ruler a route): ${show(baseline)}`);
console.log(`milepost (decodePolyline + routeDistanceMetres, WGS84 per segment): ${show(milepost)}`);
let baselineMetres = 0;
let milepostMetres = 0;
for (const route of encoded) {
  baselineMetres += baselineDistance(route);
  milepostMetres += milepostDistance(route);
}
console.log(
  `mean route ${(milepostMetres / ROUTES / 1000).toFixed(3)} km; the baseline's single-latitude ruler reads ${(((baselineMetres - milepostMetres) / milepostMetres) * 100).toFixed(4)} % off it`,
);
console.log(
  `geometry: ${millions(milepost.best)} points/s (baseline ${millions(baseline.best)} points/s, ratio ${(milepost.best / baseline.best).toFixed(2)})`,
);
