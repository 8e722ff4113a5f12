import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clipRing, hundredthText, simplifyLine } from './map-geometry.ts';

/** Twice the signed area of a ring (shoelace): what a fill covers. */
function area(ring: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < ring.length; i += 2) {
    const j = (i + 2) % ring.length;
    sum += (ring[i] ?? 0) * (ring[j + 1] ?? 0) - (ring[j] ?? 0) * (ring[i + 1] ?? 0);
  }
  return sum / 2;
}

const RECT = { left: 0, top: 0, right: 10, bottom: 10 };

test('a ring across the rectangle keeps exactly the part inside it', () => {
  // A 20 × 20 square from (5, 5): a quarter of it, 5 × 5, lies inside.
  const clipped = clipRing([5, 5, 25, 5, 25, 25, 5, 25], RECT);
  assert.equal(Math.abs(area(clipped)), 25);
  for (let i = 0; i < clipped.length; i += 2) {
    assert.ok((clipped[i] ?? -1) >= 0 && (clipped[i] ?? 99) <= 10);
    assert.ok((clipped[i + 1] ?? -1) >= 0 && (clipped[i + 1] ?? 99) <= 10);
  }
});

test('a ring inside is kept as it is, one outside leaves nothing to draw', () => {
  assert.deepEqual(clipRing([1, 1, 9, 1, 5, 9], RECT), [1, 1, 9, 1, 5, 9]);
  assert.ok(clipRing([20, 20, 30, 20, 25, 30], RECT).length < 6);
});

test('a ring around the rectangle becomes the rectangle', () => {
  assert.equal(Math.abs(area(clipRing([-5, -5, 15, -5, 15, 15, -5, 15], RECT))), 100);
});

test('points within the tolerance of the line are dropped, corners and ends are kept', () => {
  const line = [0, 0, 1, 0.1, 2, -0.1, 3, 0, 3.1, 2, 3, 4];
  assert.deepEqual(simplifyLine(line, 0.25), [0, 0, 3, 0, 3, 4]);
  assert.deepEqual(simplifyLine(line, 0.05), line);
  assert.deepEqual(simplifyLine([0, 0, 5, 5], 1), [0, 0, 5, 5]);
});

test('a coordinate is written as String writes it rounded to a hundredth', () => {
  let seed = 7;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const values = [0, -0, 0.004, -0.004, 0.005, -0.005, 0.05, -0.05, 7, -7, 12.3, 99.999, 841.89, 1e16, -1e16];
  for (let i = 0; i < 100_000; i += 1)
    values.push((next() - 0.5) * 2000, Math.round((next() - 0.5) * 2e5) / 100);
  for (const value of values)
    assert.equal(hundredthText(value), String(Math.round(value * 100) / 100), String(value));
});
