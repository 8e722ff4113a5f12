import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addMonths,
  defaultPartitionName,
  monthEnd,
  monthOf,
  monthStart,
  parsePartitionName,
  partitionName,
  planPartitions,
} from './monthly-partitions-plan.ts';

test('names round-trip per table, and months roll over the year', () => {
  assert.equal(partitionName('positions', { year: 2025, month: 6 }), 'positions_p2025_06');
  assert.equal(partitionName('events', { year: 2025, month: 12 }), 'events_p2025_12');
  assert.equal(defaultPartitionName('events'), 'events_default');
  assert.deepEqual(parsePartitionName('positions', 'positions_p2025_12'), { year: 2025, month: 12 });
  assert.deepEqual(parsePartitionName('events', 'events_p2031_01'), { year: 2031, month: 1 });
  assert.equal(parsePartitionName('positions', 'positions_default'), undefined);
  assert.equal(parsePartitionName('positions', 'positions_p2025_13'), undefined);
  assert.equal(parsePartitionName('positions', 'positions_p2025_00'), undefined);
  assert.equal(parsePartitionName('events', 'positions_p2025_01'), undefined, "another table's partition");
  assert.equal(parsePartitionName('events', 'events_p2025_01_old'), undefined);
  assert.deepEqual(addMonths({ year: 2025, month: 11 }, 3), { year: 2026, month: 2 });
  assert.deepEqual(addMonths({ year: 2025, month: 1 }, -1), { year: 2024, month: 12 });
  assert.deepEqual(addMonths({ year: 2025, month: 1 }, -13), { year: 2023, month: 12 });
});

test('months are UTC calendar months, half-open', () => {
  assert.deepEqual(monthOf(new Date('2025-03-31T23:59:59.999Z')), { year: 2025, month: 3 });
  assert.deepEqual(monthOf(new Date('2025-04-01T00:00:00Z')), { year: 2025, month: 4 });
  assert.equal(monthStart({ year: 2025, month: 3 }).toISOString(), '2025-03-01T00:00:00.000Z');
  assert.equal(monthEnd({ year: 2025, month: 12 }).toISOString(), '2026-01-01T00:00:00.000Z');
});

test('the current month and two ahead are created; whole months past retention are dropped', () => {
  const now = new Date('2025-12-15T10:00:00Z');
  const plan = planPartitions('positions', now, 400, [
    'positions_p2024_10', // ends 2024-11-01, the cutoff is 2024-11-10: dropped
    'positions_p2024_11', // ends 2024-12-01, after the cutoff: kept
    'positions_p2025_12',
    'positions_default',
  ]);
  assert.deepEqual(
    plan.create.map((m) => partitionName('positions', m)),
    ['positions_p2026_01', 'positions_p2026_02'],
  );
  assert.deepEqual(plan.drop, ['positions_p2024_10']);
  assert.equal(plan.cutoff?.toISOString(), '2024-11-10T10:00:00.000Z');
});

test('a month ending exactly at the cutoff is dropped; one ending after it stays', () => {
  const now = new Date('2025-03-01T00:00:00Z');
  const plan = planPartitions('events', now, 28, ['events_p2025_01', 'events_p2025_02']);
  assert.equal(plan.cutoff?.toISOString(), '2025-02-01T00:00:00.000Z');
  assert.deepEqual(plan.drop, ['events_p2025_01']);
});

test('nothing to do when every month exists and none has expired; drops come oldest first', () => {
  const now = new Date('2025-06-10T00:00:00Z');
  const have = ['events_p2025_06', 'events_p2025_07', 'events_p2025_08'];
  assert.deepEqual(planPartitions('events', now, 30, have).create, []);
  assert.deepEqual(planPartitions('events', now, 30, have).drop, []);
  const later = planPartitions('events', new Date('2026-06-10T00:00:00Z'), 30, [...have].reverse());
  assert.deepEqual(later.drop, have);
});

test('without a retention, months are only created', () => {
  const plan = planPartitions('journeys', new Date('2040-01-15T00:00:00Z'), undefined, ['journeys_p2020_01']);
  assert.deepEqual(plan.drop, []);
  assert.equal(plan.cutoff, undefined);
  assert.equal(plan.create.length, 3);
});
