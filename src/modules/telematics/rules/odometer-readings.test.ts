import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  bindingAt,
  milesToMetres,
  monotonicAmong,
  parseReading,
  unreachableFrom,
} from './odometer-readings.ts';

const NOW = new Date('2025-11-20T12:00:00Z');
const NOW_S = NOW.getTime() / 1000;

test('miles → whole metres, exactly, half up', () => {
  const cases: Array<[number, number]> = [
    [1, 1609], // 1,609.344
    [1000.5, 1_610_149], // 1,610,148.672
    [0.1, 161], // 160.9344: binary 0.1 does not leak into the product
    [0.0003107, 1], // 0.50002...
    [0.00031, 0], // 0.4989
    [123_456.7, 198_684_299], // 198,684,299.4048
    [0, 0],
  ];
  for (const [miles, metres] of cases) assert.equal(milesToMetres(miles), metres, String(miles));
});

test('a reading names one policy or device and one unit, at a readable time not ahead of the clock', () => {
  const ok = parseReading(
    { policy_reference: 'p', reading_miles: 1, time: '2025-11-20T12:05:00+00:00' },
    NOW,
  );
  assert.deepEqual(ok, { ok: true, by: { policyReference: 'p' }, readingMetres: 1609, timeS: NOW_S + 300 });
  const byDevice = parseReading({ device_id: 'd', reading_metres: 7, time: NOW_S }, NOW);
  assert.deepEqual(byDevice, { ok: true, by: { deviceId: 'd' }, readingMetres: 7, timeS: NOW_S });
  const refused: Array<[Parameters<typeof parseReading>[0], string]> = [
    [{ policy_reference: 'p', device_id: 'd', reading_metres: 1, time: NOW_S }, '/body'],
    [{ reading_metres: 1, time: NOW_S }, '/body'],
    [{ policy_reference: 'p', reading_metres: 1, reading_miles: 1, time: NOW_S }, '/body'],
    [{ policy_reference: 'p', time: NOW_S }, '/body'],
    [{ policy_reference: 'p', reading_metres: 1.5, time: NOW_S }, '/body/reading_metres'],
    [{ policy_reference: 'p', reading_miles: 1e12, time: NOW_S }, '/body/reading_miles'],
    [{ policy_reference: 'p', reading_metres: 1, time: '2025-11-20 12:00' }, '/body/time'],
    [{ policy_reference: 'p', reading_metres: 1, time: NOW_S + 301 }, '/body/time'],
  ];
  for (const [input, path] of refused) {
    const result = parseReading(input, NOW);
    assert.equal(result.ok ? 'accepted' : result.path, path, JSON.stringify(input));
  }
});

test('an odometer never goes back; standing still is fine', () => {
  assert.equal(monotonicAmong(10, {}), true);
  assert.equal(monotonicAmong(10, { before: 10, after: 10 }), true);
  assert.equal(monotonicAmong(9, { before: 10 }), false);
  assert.equal(monotonicAmong(11, { after: 10 }), false);
  assert.equal(monotonicAmong(15, { before: 10, after: 20 }), true);
});

test('the binding holding a time: half-open periods', () => {
  const bindings = [
    { policyId: 'a', boundAt: new Date('2025-06-01T00:00:00Z'), unboundAt: new Date('2025-07-01T00:00:00Z') },
    { policyId: 'b', boundAt: new Date('2025-07-01T00:00:00Z'), unboundAt: null },
  ];
  const at = (iso: string) => bindingAt(bindings, Date.parse(iso) / 1000)?.policyId;
  assert.equal(at('2025-05-31T23:59:59Z'), undefined);
  assert.equal(at('2025-06-01T00:00:00Z'), 'a');
  assert.equal(at('2025-07-01T00:00:00Z'), 'b');
  assert.equal(at('2030-01-01T00:00:00Z'), 'b');
});

test('a reading farther from its neighbour than 300 km/h (and 2 km of a dashboard’s rounding) is unreachable', () => {
  const before = { readingMetres: 10_000_000, timeS: NOW_S - 3600 };
  const after = { readingMetres: 10_400_000, timeS: NOW_S + 3600 };
  // An hour: 300 km, and 2 km on top for a reading in whole miles.
  assert.equal(unreachableFrom({ readingMetres: 10_302_000, timeS: NOW_S }, { before }), undefined);
  assert.equal(unreachableFrom({ readingMetres: 10_302_001, timeS: NOW_S }, { before }), 'before');
  assert.equal(unreachableFrom({ readingMetres: 10_098_000, timeS: NOW_S }, { after }), undefined);
  assert.equal(unreachableFrom({ readingMetres: 10_097_999, timeS: NOW_S }, { after }), 'after');
  // A mile rounded up ten seconds later is a dashboard, not a drive.
  assert.equal(unreachableFrom({ readingMetres: 10_001_609, timeS: NOW_S - 3590 }, { before }), undefined);
  // Ten million kilometres in a day is a typo, whatever the unit.
  assert.equal(
    unreachableFrom({ readingMetres: 10_000_000_000, timeS: NOW_S + 86_400 }, { before }),
    'before',
  );
  assert.equal(unreachableFrom({ readingMetres: 5, timeS: NOW_S }, {}), undefined);
});
