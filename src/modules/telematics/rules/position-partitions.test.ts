import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addMonths, parsePartitionName, partitionName, planPartitions } from './position-partitions.ts';

test('names round-trip and months roll over the year', () => {
  assert.equal(partitionName({ year: 2025, month: 6 }), 'positions_p2025_06');
  assert.deepEqual(parsePartitionName('positions_p2025_12'), { year: 2025, month: 12 });
  assert.equal(parsePartitionName('positions_default'), undefined);
  assert.equal(parsePartitionName('positions_p2025_13'), undefined);
  assert.deepEqual(addMonths({ year: 2025, month: 11 }, 3), { year: 2026, month: 2 });
  assert.deepEqual(addMonths({ year: 2025, month: 1 }, -1), { year: 2024, month: 12 });
});

test('the current month and two ahead are created; whole months past retention are dropped', () => {
  const now = new Date('2025-12-15T10:00:00Z');
  const plan = planPartitions(now, 400, [
    'positions_p2024_10', // ends 2024-11-01, the cutoff is 2024-11-10: dropped
    'positions_p2024_11', // ends 2024-12-01, after the cutoff: kept
    'positions_p2025_12',
  ]);
  assert.deepEqual(plan.create.map(partitionName), ['positions_p2026_01', 'positions_p2026_02']);
  assert.deepEqual(plan.drop, ['positions_p2024_10']);
  assert.equal(plan.cutoff.toISOString(), '2024-11-10T10:00:00.000Z');
});
