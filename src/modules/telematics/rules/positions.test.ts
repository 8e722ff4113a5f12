import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assignPositions, CLOCK_SKEW_ALLOWANCE_SECONDS, positionTimeSeconds } from './positions.ts';

const at = (iso: string) => new Date(iso);
const s = (iso: string) => Date.parse(iso) / 1000;
const now = at('2025-06-10T12:00:00Z');
const bindings = [
  { policyId: 'p1', boundAt: at('2025-06-01T00:00:00Z'), unboundAt: at('2025-06-05T00:00:00Z') },
  { policyId: 'p2', boundAt: at('2025-06-07T00:00:00Z'), unboundAt: null },
];
const fix = (time: number | string, extra: object = {}) => ({ time, lat: 51.5, lon: -0.1, ...extra });

describe('positionTimeSeconds', () => {
  test('UNIX seconds and ISO 8601 with an offset; anything else is undefined', () => {
    assert.equal(positionTimeSeconds(1_749_556_800), 1_749_556_800);
    assert.equal(positionTimeSeconds('2025-06-10T12:00:00Z'), s('2025-06-10T12:00:00Z'));
    assert.equal(positionTimeSeconds('2025-06-10T13:00:00.900+01:00'), s('2025-06-10T12:00:00Z'));
    assert.equal(positionTimeSeconds('2024-02-29 23:59:59-00:30'), s('2024-03-01T00:29:59Z'));
    assert.equal(positionTimeSeconds('2025-12-31t23:59:59z'), s('2025-12-31T23:59:59Z'));
    assert.equal(positionTimeSeconds('1970-01-01T01:00:00+01:00'), 0);
    for (const bad of [
      '2025-06-10T12:00:00',
      '2025-06-10',
      'yesterday',
      '2025-13-40T12:00:00Z',
      // Fields out of range that Date.parse would roll over, not refuse.
      '2026-02-30T10:00:00Z',
      '2025-02-29T10:00:00Z',
      '2025-04-31T10:00:00Z',
      '2025-06-10T24:00:00Z',
      '2025-06-10T12:60:00Z',
      '2025-06-10T12:00:60Z',
      '2025-06-10T12:00:00+24:00',
      '2025-06-10T12:00:00+01:60',
      '0070-01-01T00:00:00Z',
      -1,
      1.5,
      5e9,
    ])
      assert.equal(positionTimeSeconds(bad), undefined, String(bad));
  });
});

describe('assignPositions', () => {
  test('each position takes the policy of the binding at its time; bound_at inclusive, unbound_at not', () => {
    const result = assignPositions(
      [
        fix(s('2025-06-01T00:00:00Z')),
        fix(s('2025-06-04T23:59:59Z')),
        fix(s('2025-06-05T00:00:00Z')),
        fix('2025-06-08T00:00:00Z'),
      ],
      bindings,
      now,
    );
    assert.deepEqual(
      result.rows.map((r) => r.policyId),
      ['p1', 'p1', 'p2'],
    );
    assert.deepEqual(
      result.rejected.map((r) => [r.index, r.reason]),
      [[2, 'outside_binding']],
    );
    assert.equal(result.latestTimeS, s('2025-06-08T00:00:00Z'));
  });

  test('future beyond the skew allowance, bad times and out-of-range values are refused one by one', () => {
    const nowS = s('2025-06-10T12:00:00Z');
    const result = assignPositions(
      [
        fix(nowS + CLOCK_SKEW_ALLOWANCE_SECONDS),
        fix(nowS + CLOCK_SKEW_ALLOWANCE_SECONDS + 1),
        fix('not a time'),
        { time: nowS, lat: 91, lon: 0 },
        { time: nowS, lat: 0, lon: -180.5 },
        fix(nowS, { speed_kmh: -1 }),
        fix(nowS, { odometer_metres: 1.5 }),
        fix(nowS - 1, { speed_kmh: 50, heading: 90, accuracy_m: 4, ignition: true, odometer_metres: 10 }),
      ],
      bindings,
      now,
    );
    assert.deepEqual(
      result.rejected.map((r) => [r.index, r.reason]),
      [
        [1, 'in_future'],
        [2, 'invalid_time'],
        [3, 'out_of_range'],
        [4, 'out_of_range'],
        [5, 'out_of_range'],
        [6, 'out_of_range'],
      ],
    );
    assert.equal(result.rows.length, 2);
    assert.deepEqual(result.rows[1], {
      timeS: nowS - 1,
      policyId: 'p2',
      lat: 51.5,
      lon: -0.1,
      speedKmh: 50,
      heading: 90,
      accuracyM: 4,
      ignition: true,
      odometerMetres: 10,
      attributes: null,
    });
  });

  test('fields beyond the known ones go with their row as its attributes', () => {
    const t = s('2025-06-08T00:00:00Z');
    const result = assignPositions([fix(t, { speed_kmh: 20, altitude: 31.5, sat: 9 })], bindings, now);
    const [row] = result.rows;
    assert.equal(row?.speedKmh, 20);
    assert.deepEqual({ ...row.attributes }, { altitude: 31.5, sat: 9 });
  });

  test('a second repeated in the request is kept once (the first) and counted', () => {
    const t = s('2025-06-08T00:00:00Z');
    const result = assignPositions(
      [fix(t, { lat: 1 }), fix(`2025-06-08T00:00:00.5Z`, { lat: 2 })],
      bindings,
      now,
    );
    assert.equal(result.rows.length, 1);
    assert.equal(result.rows[0]?.lat, 1);
    assert.equal(result.duplicatesInRequest, 1);
  });
});
