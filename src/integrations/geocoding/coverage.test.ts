import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { distance } from 'geokdbush';
import { createCoverage } from './coverage.ts';

describe('coverage grid', () => {
  test('never says "none within" when a point is within (great-circle), and says it for far points', () => {
    const lngLat = fc.tuple(
      fc.double({ min: -6, max: 2, noNaN: true }),
      fc.double({ min: 50, max: 59, noNaN: true }),
    );
    fc.assert(
      fc.property(
        fc.array(lngLat, { minLength: 1, maxLength: 30 }),
        lngLat,
        fc.double({ min: 100, max: 30_000, noNaN: true }),
        (points, [lng, lat], metres) => {
          const coverage = createCoverage(points.flat());
          const nearest = Math.min(...points.map(([x, y]) => distance(lng, lat, x, y) * 1000));
          if (nearest <= metres) assert.ok(coverage.mayHaveWithin(lat, lng, metres));
          if (nearest > metres * 1.5 + 10_000) assert.ok(!coverage.mayHaveWithin(lat, lng, metres));
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('an empty set has nothing anywhere', () => {
    assert.equal(createCoverage([]).mayHaveWithin(51, 0, 1e6), false);
  });
});
