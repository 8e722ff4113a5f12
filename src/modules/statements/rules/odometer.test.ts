import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  chooseReadings,
  compareOdometer,
  discrepancyPercent,
  exceedsThreshold,
  reconciliationAt,
  type BillingDistanceSource,
  type Reading,
} from './odometer.ts';

const at = (iso: string) => new Date(iso);
const reading = (iso: string, readingMetres: number): Reading => ({ at: at(iso), readingMetres });
const JUNE = { periodStartAt: at('2025-06-01T00:00:00Z'), periodEndAt: at('2025-06-30T23:59:59Z') };

test('readings: nearest each end within three days, the end after the start', () => {
  const readings = [
    reading('2025-05-27T00:00:00Z', 500), // 5 days before: too far
    reading('2025-05-31T12:00:00Z', 1_000),
    reading('2025-06-02T00:00:00Z', 1_100),
    reading('2025-06-15T00:00:00Z', 2_000),
    reading('2025-07-02T00:00:00Z', 3_000),
    reading('2025-07-05T00:00:00Z', 4_000), // too far
  ];
  assert.deepEqual(chooseReadings({ readings, previousEnd: null, ...JUNE }), {
    ok: true,
    start: readings[1],
    end: readings[4],
  });
});

test('readings: the previous statement’s end reading starts the next span', () => {
  const previousEnd = reading('2025-06-02T00:00:00Z', 1_100);
  const readings = [
    reading('2025-05-31T00:00:00Z', 1_000),
    previousEnd,
    reading('2025-06-30T00:00:00Z', 2_000),
  ];
  const chosen = chooseReadings({ readings, previousEnd, ...JUNE });
  assert.ok(chosen.ok);
  assert.equal(chosen.start, previousEnd);
  assert.equal(chosen.end.readingMetres, 2_000);
});

test('readings: none near an end, or no end after the start', () => {
  const cases: Array<{ readings: Reading[]; previousEnd: Reading | null; reason: string }> = [
    { readings: [], previousEnd: null, reason: 'NO_START_READING' },
    { readings: [reading('2025-06-15T00:00:00Z', 1)], previousEnd: null, reason: 'NO_START_READING' },
    { readings: [reading('2025-06-01T00:00:00Z', 1)], previousEnd: null, reason: 'NO_END_READING' },
    {
      readings: [reading('2025-06-01T00:00:00Z', 1), reading('2025-06-20T00:00:00Z', 2)],
      previousEnd: null,
      reason: 'NO_END_READING',
    },
    {
      readings: [reading('2025-06-29T00:00:00Z', 5)],
      previousEnd: reading('2025-06-29T00:00:00Z', 5),
      reason: 'NO_END_READING',
    },
  ];
  for (const c of cases) {
    const chosen = chooseReadings({ readings: c.readings, previousEnd: c.previousEnd, ...JUNE });
    assert.deepEqual(chosen, { ok: false, reason: c.reason });
  }
});

test('readings: an end reading before the period’s start is not taken', () => {
  const short = { periodStartAt: at('2025-06-10T00:00:00Z'), periodEndAt: at('2025-06-11T00:00:00Z') };
  const readings = [reading('2025-06-08T00:00:00Z', 1), reading('2025-06-09T00:00:00Z', 2)];
  assert.deepEqual(chooseReadings({ readings, previousEnd: null, ...short }), {
    ok: false,
    reason: 'NO_END_READING',
  });
});

test('discrepancy: (odometer − gps) / odometer, half-even to 2 decimals', () => {
  const cases: Array<[number, number, number | null]> = [
    [100_000, 90_000, 10],
    [100_000, 110_000, -10],
    [3, 2, 33.33],
    [3, 1, 66.67],
    [80_000, 79_999, 0], // 0.00125 %
    [40_000, 39_998, 0], // exactly 0.005 %: half-even rounds to 0.00
    [40_000, 39_994, 0.02], // exactly 0.015 %: half-even rounds to 0.02
    [0, 0, null],
    [0, 500, null],
  ];
  for (const [odometer, gps, expected] of cases)
    assert.equal(discrepancyPercent(odometer, gps), expected, `${String(odometer)} vs ${String(gps)}`);
});

test('threshold: beyond it either way, never without one', () => {
  assert.equal(exceedsThreshold(10.01, 10), true);
  assert.equal(exceedsThreshold(-10.01, 10), true);
  assert.equal(exceedsThreshold(10, 10), false);
  assert.equal(exceedsThreshold(50, undefined), false);
  assert.equal(exceedsThreshold(null, 0), false);
});

test('reconciliation under each billing distance source', () => {
  const start = reading('2025-06-01T00:00:00Z', 10_000);
  const end = reading('2025-06-30T00:00:00Z', 110_000);
  const table: Array<[BillingDistanceSource, number, number]> = [
    ['gps', 90_000, 0],
    ['odometer', 90_000, 10_000],
    ['greater', 90_000, 10_000],
    ['gps', 120_000, 0],
    ['odometer', 120_000, 0], // not refunded
    ['greater', 120_000, 0],
    ['odometer', 100_000, 0],
  ];
  for (const [source, gpsMetres, expected] of table) {
    const result = compareOdometer({ start, end, gpsMetres, source });
    assert.equal(result.reconciliationMetres, expected, `${source} ${String(gpsMetres)}`);
    assert.equal(result.odometerMetres, 100_000);
  }
});

test('reconciliation instant: the end reading or the period end, inside the period', () => {
  const { periodStartAt, periodEndAt } = JUNE;
  assert.deepEqual(
    reconciliationAt(at('2025-06-29T00:00:00Z'), periodStartAt, periodEndAt),
    at('2025-06-29T00:00:00Z'),
  );
  assert.deepEqual(reconciliationAt(at('2025-07-02T00:00:00Z'), periodStartAt, periodEndAt), periodEndAt);
  assert.equal(reconciliationAt(at('2025-05-31T00:00:00Z'), periodStartAt, periodEndAt), undefined);
});
