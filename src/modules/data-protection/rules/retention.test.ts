import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { decodePolyline, encodePolyline } from '../../../platform/geo/index.ts';
import { coarsenedRoute, routeRetentionCutoff } from './retention.ts';

describe('coarsenedRoute', () => {
  const points = [51.5074, -0.1278, 51.5101, -0.134, 51.5155, -0.1419];
  test('a route becomes the 2-point line from its start to its end, from the stored points or decoded', () => {
    for (const precision of [5, 6] as const) {
      const route = encodePolyline(points, precision);
      const expected = encodePolyline([51.5074, -0.1278, 51.5155, -0.1419], precision);
      assert.equal(
        coarsenedRoute({
          route,
          precision,
          start: { lat: 51.5074, lng: -0.1278 },
          end: { lat: 51.5155, lng: -0.1419 },
        }),
        expected,
      );
      assert.equal(coarsenedRoute({ route, precision, start: undefined, end: undefined }), expected);
    }
  });
  test('idempotent; the points are exactly the route’s ends', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: -9_000_000, max: 9_000_000 }),
            fc.integer({ min: -18_000_000, max: 18_000_000 }),
          ),
          {
            minLength: 2,
            maxLength: 20,
          },
        ),
        fc.constantFrom(5 as const, 6 as const),
        (units, precision) => {
          const factor = precision === 6 ? 1e6 : 1e5;
          const flat = units.flatMap(([lat, lng]) => [lat / factor, lng / factor]);
          const route = encodePolyline(flat, precision);
          const once = coarsenedRoute({ route, precision, start: undefined, end: undefined });
          assert.ok(once !== undefined);
          const decoded = decodePolyline(once, precision);
          assert.ok(decoded.ok);
          assert.equal(decoded.count, 2);
          const full = decodePolyline(route, precision);
          assert.ok(full.ok);
          assert.deepEqual(
            [...decoded.points.slice(0, 4)],
            [
              full.points[0],
              full.points[1],
              full.points[2 * full.count - 2],
              full.points[2 * full.count - 1],
            ],
          );
          assert.equal(coarsenedRoute({ route: once, precision, start: undefined, end: undefined }), once);
        },
      ),
    );
  });
  test('an unreadable route gives nothing', () => {
    assert.equal(coarsenedRoute({ route: '', precision: 5, start: undefined, end: undefined }), undefined);
  });
});

test('routeRetentionCutoff: now minus the days', () => {
  assert.equal(
    routeRetentionCutoff(new Date('2026-02-05T00:00:00Z'), 400).toISOString(),
    '2025-01-01T00:00:00.000Z',
  );
});
