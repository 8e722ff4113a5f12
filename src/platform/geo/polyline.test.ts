import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { decodePolyline, encodePolyline, firstPoint, lastPoint, type PolylinePrecision } from './polyline.ts';

/** The plain algorithm (@mapbox/polyline's), as an oracle for well-formed input. */
function referenceDecode(encoded: string, precision: number): number[] {
  const factor = 10 ** precision;
  const out: number[] = [];
  let index = 0;
  let lat = 0;
  let lng = 0;
  while (index < encoded.length) {
    const deltas: number[] = [];
    for (let k = 0; k < 2; k++) {
      let shift = 1;
      let result = 0;
      let byte: number;
      do {
        byte = encoded.charCodeAt(index++) - 63;
        result += (byte & 0x1f) * shift;
        shift *= 32;
      } while (byte >= 0x20);
      deltas.push(result & 1 ? (-result - 1) / 2 : result / 2);
    }
    lat += deltas[0] ?? 0;
    lng += deltas[1] ?? 0;
    out.push(lat / factor, lng / factor);
  }
  return out;
}

/** Builds a polyline from raw integer deltas, so tests can write what no valid encoder would. */
function rawPolyline(deltas: readonly number[]): string {
  let encoded = '';
  for (const delta of deltas) {
    let rest = delta < 0 ? -2 * delta - 1 : 2 * delta;
    while (rest >= 32) {
      encoded += String.fromCharCode((rest % 32) + 32 + 63);
      rest = Math.floor(rest / 32);
    }
    encoded += String.fromCharCode(rest + 63);
  }
  return encoded;
}

/** Points on the precision grid, as integer units, so a round trip must be exact. */
const gridRoute = (precision: PolylinePrecision) => {
  const factor = 10 ** precision;
  return fc.array(
    fc.tuple(
      fc.integer({ min: -90 * factor, max: 90 * factor }),
      fc.integer({ min: -180 * factor, max: 180 * factor }),
    ),
    { minLength: 2, maxLength: 60 },
  );
};

function expectFailure(encoded: string, precision: PolylinePrecision, reason: string, options = {}) {
  const result = decodePolyline(encoded, precision, options);
  assert.equal(result.ok, false, `expected ${reason} for ${JSON.stringify(encoded)}`);
  assert.equal(result.reason, reason, result.message);
  assert.ok(result.message.length > 0);
  return result;
}

describe('decodePolyline', () => {
  test("decodes Google's documented example", () => {
    const result = decodePolyline('_p~iF~ps|U_ulLnnqC_mqNvxq`@', 5);
    assert.ok(result.ok);
    assert.equal(result.count, 3);
    assert.deepEqual(Array.from(result.points), [38.5, -120.2, 40.7, -120.95, 43.252, -126.453]);
  });

  for (const precision of [5, 6] as const) {
    test(`round-trips random routes exactly at precision ${precision}`, () => {
      const factor = 10 ** precision;
      fc.assert(
        fc.property(gridRoute(precision), (units) => {
          const degrees = units.flatMap(([lat, lng]) => [lat / factor, lng / factor]);
          const result = decodePolyline(encodePolyline(degrees, precision), precision);
          assert.ok(result.ok);
          assert.equal(result.count, units.length);
          assert.equal(result.points.length, units.length * 2);
          assert.deepEqual(Array.from(result.points), degrees);
        }),
        { numRuns: 300 },
      );
    });

    test(`agrees with the reference algorithm on valid input at precision ${precision}`, () => {
      const factor = 10 ** precision;
      fc.assert(
        fc.property(gridRoute(precision), (units) => {
          const encoded = encodePolyline(
            units.flatMap(([lat, lng]) => [lat / factor, lng / factor]),
            precision,
          );
          const result = decodePolyline(encoded, precision);
          assert.ok(result.ok);
          assert.deepEqual(Array.from(result.points), referenceDecode(encoded, precision));
        }),
        { numRuns: 200 },
      );
    });
  }

  /** Tracker-like routes: small steps (1 to 3 characters a value, the decoder's fast path) and some jumps. */
  const trackerRoute = (precision: PolylinePrecision) => {
    const factor = 10 ** precision;
    const step = fc.oneof(
      { weight: 20, arbitrary: fc.integer({ min: -3 * factor * 1e-3, max: 3 * factor * 1e-3 }) },
      { weight: 1, arbitrary: fc.integer({ min: -2 * factor, max: 2 * factor }) },
    );
    return fc
      .tuple(
        fc.integer({ min: -80 * factor, max: 80 * factor }),
        fc.integer({ min: -170 * factor, max: 170 * factor }),
        fc.array(fc.tuple(step, step), { minLength: 1, maxLength: 300 }),
      )
      .map(([lat0, lng0, steps]) => {
        const degrees = [lat0 / factor, lng0 / factor];
        let lat = lat0;
        let lng = lng0;
        for (const [dLat, dLng] of steps) {
          lat = Math.max(-90 * factor, Math.min(90 * factor, lat + dLat));
          lng = Math.max(-180 * factor, Math.min(180 * factor, lng + dLng));
          degrees.push(lat / factor, lng / factor);
        }
        return { degrees, encoded: encodePolyline(degrees, precision) };
      });
  };

  for (const precision of [5, 6] as const) {
    test(`decodes tracker-like routes exactly at precision ${precision}`, () => {
      fc.assert(
        fc.property(trackerRoute(precision), ({ degrees, encoded }) => {
          const result = decodePolyline(encoded, precision);
          assert.ok(result.ok);
          assert.deepEqual(Array.from(result.points), degrees);
        }),
        { numRuns: 200 },
      );
    });

    test(`finds a bad character or a cut anywhere in a long route at precision ${precision}`, () => {
      fc.assert(
        fc.property(
          trackerRoute(precision),
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.constantFrom(' ', '>', '\u007f', 'é', '\n'),
          ({ degrees, encoded }, at, bad) => {
            const position = Math.floor(at * encoded.length);
            const corrupted = decodePolyline(
              encoded.slice(0, position) + bad + encoded.slice(position + 1),
              precision,
            );
            assert.equal(corrupted.ok, false);
            assert.equal(corrupted.reason, 'INVALID_CHARACTER');
            assert.equal(corrupted.index, position);

            const cut = decodePolyline(encoded.slice(0, Math.max(1, position)), precision);
            const whole = referenceDecode(encoded.slice(0, Math.max(1, position)), precision);
            const complete =
              encodePolyline(degrees.slice(0, whole.length), precision) ===
              encoded.slice(0, Math.max(1, position));
            if (cut.ok) {
              assert.ok(complete);
              assert.deepEqual(Array.from(cut.points), whole);
            } else {
              assert.ok(['TRUNCATED', 'TOO_FEW_POINTS'].includes(cut.reason), cut.reason);
            }
          },
        ),
        { numRuns: 300 },
      );
    });
  }

  test('never throws on arbitrary strings, and what it accepts is in range', () => {
    const polylineish = fc.string({
      unit: fc.constantFrom(...'?@AZ_`az{|}~ \n\\é'.split('')),
      maxLength: 40,
    });
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), polylineish),
        fc.constantFrom<PolylinePrecision[]>(5, 6),
        (text, precision) => {
          const result = decodePolyline(text, precision);
          if (result.ok) {
            assert.ok(result.count >= 2);
            for (let k = 0; k < result.count; k++) {
              assert.ok(Math.abs(result.points[2 * k] ?? Infinity) <= 90);
              assert.ok(Math.abs(result.points[2 * k + 1] ?? Infinity) <= 180);
            }
          } else if (result.index !== undefined) {
            assert.ok(result.index >= 0 && result.index <= text.length);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  test("borrow: the same points in the decoder's own buffer, which the next decode reuses", () => {
    const one = encodePolyline([51.5, -0.12, 51.51, -0.11, 51.52, -0.1], 5);
    const two = encodePolyline([40.7, -74, 40.71, -74.01], 5);
    const copied = decodePolyline(one, 5);
    const lent = decodePolyline(one, 5, { borrow: true });
    assert.ok(copied.ok && lent.ok);
    assert.equal(lent.count, copied.count);
    assert.deepEqual([...lent.points.subarray(0, lent.count * 2)], [...copied.points]);
    const again = decodePolyline(two, 5, { borrow: true });
    assert.ok(again.ok);
    assert.equal(again.points, lent.points, 'one buffer, lent twice');
    assert.deepEqual(
      [...copied.points],
      [51.5, -0.12, 51.51, -0.11, 51.52, -0.1],
      "a copy is the caller's own",
    );
  });

  test('EMPTY for an empty string', () => {
    expectFailure('', 5, 'EMPTY');
  });

  test('INVALID_CHARACTER outside ASCII 63..126, with its offset', () => {
    const valid = '_p~iF~ps|U_ulLnnqC';
    for (const bad of [' ', '>', '\n', '\u007f', 'é', '\u{1F697}']) {
      const failure = expectFailure(valid.slice(0, 7) + bad + valid.slice(7), 5, 'INVALID_CHARACTER');
      assert.equal(failure.index, 7);
    }
  });

  test('TRUNCATED when the last value still has its continuation bit, or a latitude has no longitude', () => {
    const onePoint = '_p~iF~ps|U';
    expectFailure(`${onePoint}_ulLnnq`, 5, 'TRUNCATED'); // 'q' continues
    expectFailure(`${onePoint}_ulL`, 5, 'TRUNCATED'); // a latitude alone
    expectFailure('_', 5, 'TRUNCATED');
  });

  test('OUT_OF_RANGE beyond ±90 latitude or ±180 longitude, at either precision', () => {
    expectFailure(rawPolyline([9_000_001, 0, 0, 0]), 5, 'OUT_OF_RANGE');
    expectFailure(rawPolyline([0, 0, -9_000_001, 0]), 5, 'OUT_OF_RANGE');
    expectFailure(rawPolyline([0, 18_000_001, 0, 0]), 5, 'OUT_OF_RANGE');
    expectFailure(rawPolyline([0, 179_000_000, 0, 2_000_000]), 6, 'OUT_OF_RANGE');
    expectFailure(rawPolyline([90_000_001, 0, 0, 0]), 6, 'OUT_OF_RANGE');
    // The same steps are fine where they stay in range.
    assert.ok(decodePolyline(rawPolyline([9_000_000, -18_000_000, -18_000_000, 36_000_000]), 5).ok);
    assert.ok(decodePolyline(rawPolyline([90_000_000, 180_000_000, -180_000_000, -360_000_000]), 6).ok);
  });

  test('OUT_OF_RANGE for a value too long to be a coordinate step (7 chunks)', () => {
    const failure = expectFailure(`${rawPolyline([0, 0])}${rawPolyline([2 ** 31])}?`, 6, 'OUT_OF_RANGE');
    assert.equal(failure.index, 2);
  });

  test('TOO_FEW_POINTS for a single point', () => {
    expectFailure('_p~iF~ps|U', 5, 'TOO_FEW_POINTS');
  });

  test('TOO_MANY_POINTS above the limit (default 100,000)', () => {
    const three = '_p~iF~ps|U_ulLnnqC_mqNvxq`@';
    expectFailure(three, 5, 'TOO_MANY_POINTS', { maxPoints: 2 });
    assert.ok(decodePolyline(three, 5, { maxPoints: 3 }).ok);
    const big = rawPolyline(Array.from({ length: 200_002 }, () => 0));
    expectFailure(big, 5, 'TOO_MANY_POINTS');
    const limit = decodePolyline(rawPolyline(Array.from({ length: 200_000 }, () => 0)), 5);
    assert.ok(limit.ok);
    assert.equal(limit.count, 100_000);
  });

  test('results do not share storage between calls', () => {
    const a = decodePolyline('_p~iF~ps|U_ulLnnqC', 5);
    const b = decodePolyline('??_ulLnnqC', 5);
    assert.ok(a.ok && b.ok);
    assert.deepEqual(Array.from(a.points), [38.5, -120.2, 40.7, -120.95]);
    assert.notEqual(a.points.buffer, b.points.buffer);
  });
});

describe('encodePolyline', () => {
  test("encodes Google's documented example", () => {
    assert.equal(
      encodePolyline([38.5, -120.2, 40.7, -120.95, 43.252, -126.453], 5),
      '_p~iF~ps|U_ulLnnqC_mqNvxq`@',
    );
  });

  test('rounds half away from zero, as the reference encoder', () => {
    assert.equal(encodePolyline([0.000025, -0.000025], 5), encodePolyline([0.00003, -0.00003], 5));
  });

  test('rejects coordinates that are not coordinates', () => {
    assert.throws(() => encodePolyline([91, 0], 5), RangeError);
    assert.throws(() => encodePolyline([0, Number.NaN], 5), RangeError);
    assert.throws(() => encodePolyline([0], 5), RangeError);
  });
});

describe('firstPoint / lastPoint', () => {
  test('give the ends of a decoded route', () => {
    const result = decodePolyline('_p~iF~ps|U_ulLnnqC_mqNvxq`@', 5);
    assert.ok(result.ok);
    assert.deepEqual(firstPoint(result.points, result.count), { lat: 38.5, lng: -120.2 });
    assert.deepEqual(lastPoint(result.points, result.count), { lat: 43.252, lng: -126.453 });
    assert.equal(firstPoint(result.points, 0), undefined);
  });
});
