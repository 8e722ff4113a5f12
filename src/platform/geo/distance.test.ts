import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import CheapRuler from 'cheap-ruler';
import fc from 'fast-check';
import geographiclib from 'geographiclib-geodesic';
import {
  LONG_SEGMENT_METRES,
  routeDistanceMetres,
  routeLengthMetres,
  segmentDistanceMetres,
  vincentyMetres,
} from './distance.ts';

const WGS84 = geographiclib.Geodesic.WGS84;

function karneyMetres(lat1: number, lng1: number, lat2: number, lng2: number): number {
  return WGS84.Inverse(lat1, lng1, lat2, lng2).s12 ?? Number.NaN;
}

function karneyRouteMetres(points: Float64Array, count: number): number {
  let total = 0;
  for (let k = 1; k < count; k++) {
    total += karneyMetres(
      points[2 * k - 2] ?? 0,
      points[2 * k - 1] ?? 0,
      points[2 * k] ?? 0,
      points[2 * k + 1] ?? 0,
    );
  }
  return total;
}

/**
 * A drive in Great Britain's box (lat 49.9–58.7, lng -8.2–1.8) as a tracker reports it: a point every
 * 5–300 m, turning gradually, rounded to precision 5 as uploaded routes are.
 */
const ukRoute = fc
  .record({
    lat: fc.double({ min: 49.9, max: 58.7, noNaN: true }),
    lng: fc.double({ min: -8.2, max: 1.8, noNaN: true }),
    heading: fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
    steps: fc.array(
      fc.tuple(fc.double({ min: 5, max: 300, noNaN: true }), fc.double({ min: -0.5, max: 0.5, noNaN: true })),
      {
        minLength: 1,
        maxLength: 400,
        size: 'max',
      },
    ),
  })
  .map(({ lat, lng, heading, steps }) => {
    const points = new Float64Array((steps.length + 1) * 2);
    let bearing = heading;
    let here = { lat, lng };
    points[0] = Math.round(lat * 1e5) / 1e5;
    points[1] = Math.round(lng * 1e5) / 1e5;
    steps.forEach(([metres, turn], k) => {
      bearing += turn;
      const next = WGS84.Direct(here.lat, here.lng, (bearing * 180) / Math.PI, metres);
      here = { lat: next.lat2 ?? here.lat, lng: next.lon2 ?? here.lng };
      points[2 * k + 2] = Math.round(here.lat * 1e5) / 1e5;
      points[2 * k + 3] = Math.round(here.lng * 1e5) / 1e5;
    });
    return { points, count: steps.length + 1 };
  });

const ukPoint = fc.tuple(
  fc.double({ min: 49.9, max: 58.7, noNaN: true }),
  fc.double({ min: -8.2, max: 1.8, noNaN: true }),
);

describe('routeLengthMetres', () => {
  test('near the poles every segment goes to Vincenty, as segmentDistanceMetres does', () => {
    // Steps of about 390 m north-east near 85°N, where the flat formula is off by about 1e-7.
    const points = new Float64Array(2 * 50);
    for (let k = 0; k < 50; k++) {
      points[2 * k] = 85 + k * 0.0025;
      points[2 * k + 1] = 20 + k * 0.03;
    }
    const length = routeLengthMetres(points, 50);
    assert.ok(Math.abs(length / karneyRouteMetres(points, 50) - 1) < 1e-9);
    let segments = 0;
    for (let k = 1; k < 50; k++)
      segments +=
        Math.round(
          segmentDistanceMetres(
            points[2 * k - 2] ?? 0,
            points[2 * k - 1] ?? 0,
            points[2 * k] ?? 0,
            points[2 * k + 1] ?? 0,
          ) * 1_073_741_824,
        ) / 1_073_741_824;
    assert.ok(Math.abs(length - segments) < 1e-6);
  });

  test('agrees with Karney within 1e-9 relative on generated UK routes', (t) => {
    let worst = 0;
    fc.assert(
      fc.property(ukRoute, ({ points, count }) => {
        const reference = karneyRouteMetres(points, count);
        fc.pre(reference > 0);
        const error = Math.abs(routeLengthMetres(points, count) - reference) / reference;
        worst = Math.max(worst, error);
        assert.ok(error <= 1e-9, `relative error ${error} on a ${reference.toFixed(1)} m route`);
      }),
      { numRuns: 150 },
    );
    assert.ok(worst > 0 && worst < 1e-9);
    t.diagnostic(`worst relative error against Karney: ${worst.toExponential(2)}`);
  });

  test('agrees with Karney within 1e-9 on single segments of any length in the UK (Vincenty above 400 m)', () => {
    fc.assert(
      fc.property(ukPoint, ukPoint, ([lat1, lng1], [lat2, lng2]) => {
        const reference = karneyMetres(lat1, lng1, lat2, lng2);
        fc.pre(reference > 1);
        const error = Math.abs(segmentDistanceMetres(lat1, lng1, lat2, lng2) - reference) / reference;
        assert.ok(error <= 1e-9, `relative error ${error} over ${reference.toFixed(0)} m`);
      }),
      { numRuns: 500 },
    );
  });

  test('agrees with Karney within 1e-9 anywhere on Earth, short segments and long, across the antimeridian', () => {
    const anywhere = fc.tuple(
      fc.double({ min: -89, max: 89, noNaN: true }),
      fc.double({ min: -180, max: 180, noNaN: true }),
    );
    fc.assert(
      fc.property(
        anywhere,
        fc.double({ min: 0, max: 360, noNaN: true }),
        fc.double({ min: 10, max: 5e6, noNaN: true }),
        ([lat, lng], bearing, metres) => {
          const to = WGS84.Direct(lat, lng, bearing, metres);
          const lat2 = to.lat2 ?? lat;
          const lng2 = to.lon2 ?? lng;
          const reference = karneyMetres(lat, lng, lat2, lng2);
          const error = Math.abs(segmentDistanceMetres(lat, lng, lat2, lng2) - reference) / reference;
          assert.ok(error <= 1e-9, `relative error ${error} from ${lat},${lng} to ${lat2},${lng2}`);
        },
      ),
      { numRuns: 500 },
    );
    // Short segments near the poles, where the flat formula alone was 1.0e-9 (81°) to 4e-7 (89°) out.
    for (const [lat, bearing, metres] of [
      [81.22647787125968, 53.886632318952806, 145.012649187541],
      [88.9, 90, 399],
      [-70, 10, 250],
    ] as const) {
      const to = WGS84.Direct(lat, 0, bearing, metres);
      const reference = karneyMetres(lat, 0, to.lat2 ?? lat, to.lon2 ?? 0);
      const error =
        Math.abs(segmentDistanceMetres(lat, 0, to.lat2 ?? lat, to.lon2 ?? 0) - reference) / reference;
      assert.ok(error <= 1e-9, `relative error ${error} at ${lat}°`);
    }
    const across = segmentDistanceMetres(10, 179.9995, 10, -179.9995);
    assert.ok(Math.abs(across - karneyMetres(10, 179.9995, 10, -179.9995)) < 1e-6);
    assert.ok(across < 200);
  });

  test('is the flat-ellipsoid formula of cheap-ruler for short segments', () => {
    fc.assert(
      fc.property(
        ukPoint,
        fc.double({ min: -0.002, max: 0.002, noNaN: true }),
        fc.double({ min: -0.003, max: 0.003, noNaN: true }),
        ([lat, lng], dLat, dLng) => {
          const metres = segmentDistanceMetres(lat, lng, lat + dLat, lng + dLng);
          fc.pre(metres <= LONG_SEGMENT_METRES);
          const ruler = new CheapRuler(lat + dLat / 2, 'metres');
          const expected = ruler.distance([lng, lat], [lng + dLng, lat + dLat]);
          assert.ok(Math.abs(metres - expected) <= 1e-9 * Math.max(1, expected));
        },
      ),
      { numRuns: 300 },
    );
  });

  test('is additive: a route is exactly as long as its two halves sharing the split point', () => {
    fc.assert(
      fc.property(
        ukRoute.filter(({ count }) => count >= 3),
        fc.double({ min: 0, max: 1, noNaN: true }),
        ({ points, count }, at) => {
          const split = 1 + Math.min(count - 2, Math.floor(at * (count - 1)));
          const head = points.subarray(0, (split + 1) * 2);
          const tail = points.subarray(split * 2);
          const whole = routeLengthMetres(points, count);
          assert.equal(routeLengthMetres(head, split + 1) + routeLengthMetres(tail, count - split), whole);
          const rounded = routeDistanceMetres(head, split + 1) + routeDistanceMetres(tail, count - split);
          assert.ok(Math.abs(rounded - routeDistanceMetres(points, count)) <= 1);
        },
      ),
      { numRuns: 150 },
    );
  });

  test('London → Edinburgh: 534,334 m on the ellipsoid (a sphere of mean radius says 533,653 m)', () => {
    const london = [51.5074, -0.1278];
    const edinburgh = [55.9533, -3.1883];
    const direct = Float64Array.from([...london, ...edinburgh]);
    assert.equal(routeDistanceMetres(direct, 2), 534_334); // Karney: 534,334.324 m
    // Through Cambridge, York and Newcastle (Karney, summed over the four legs: 556,493.96 m).
    const viaEast = Float64Array.from([
      ...london,
      52.2053,
      0.1218,
      53.959,
      -1.0815,
      54.9783,
      -1.6178,
      ...edinburgh,
    ]);
    assert.equal(routeDistanceMetres(viaEast, 5), Math.round(karneyRouteMetres(viaEast, 5)));
    assert.equal(routeDistanceMetres(viaEast, 5), 556_494);
  });

  test('rounds the total once: integer metres of the exact length', () => {
    const points = Float64Array.from([51.5, -0.1, 51.5001, -0.1, 51.5002, -0.1, 51.5003, -0.1]);
    const exact = routeLengthMetres(points, 4);
    assert.equal(routeDistanceMetres(points, 4), Math.round(exact));
    assert.ok(Math.abs(exact - 3 * segmentDistanceMetres(51.5, -0.1, 51.5001, -0.1)) < 1e-6);
  });

  test('is 0 for fewer than 2 points and refuses a count the array cannot hold', () => {
    assert.equal(routeDistanceMetres(new Float64Array(0), 0), 0);
    assert.equal(routeDistanceMetres(Float64Array.from([51, 0]), 1), 0);
    assert.throws(() => routeLengthMetres(Float64Array.from([51, 0, 52, 0]), 3), RangeError);
    assert.throws(() => routeLengthMetres(Float64Array.from([51, 0, 52, 0]), 1.5), RangeError);
  });
});

describe('vincentyMetres', () => {
  test('handles coincident points, the equator and meridians', () => {
    assert.equal(vincentyMetres(51, -1, 51, -1), 0);
    assert.ok(Math.abs(vincentyMetres(0, 0, 0, 1) - karneyMetres(0, 0, 0, 1)) < 1e-6);
    assert.ok(Math.abs(vincentyMetres(50, 2, 58, 2) - karneyMetres(50, 2, 58, 2)) < 1e-6);
  });
});
