import {
  listMonthlyPartitions,
  maintainMonthlyPartitions,
  type MonthlyPartitioning,
  type PartitionMaintenance,
} from '../../platform/db/monthly-partitions.ts';
import type { Database, Executor } from '../../schema.ts';

export type { PartitionMaintenance } from '../../platform/db/monthly-partitions.ts';

/**
 * `positions` by month of `time` (migration 0024). Nothing refers to positions, so a month past
 * retention is simply dropped, and DEFAULT rows past it deleted.
 */
const POSITIONS: MonthlyPartitioning<Database> = { table: 'positions', column: 'time', lockKey: 18_240_024 };

/** The monthly partitions of `positions` that exist now (the DEFAULT one aside). */
export function listPositionPartitions(db: Executor): Promise<string[]> {
  return listMonthlyPartitions(db, POSITIONS.table);
}

/**
 * Keeps `positions` partitioned for `now`: the current month and the next ones created ahead, months
 * wholly older than `retentionDays` dropped, DEFAULT rows past retention deleted (see
 * maintainMonthlyPartitions). Idempotent.
 */
export function maintainPositionPartitions(
  db: Executor,
  now: Date,
  retentionDays: number,
): Promise<PartitionMaintenance> {
  return maintainMonthlyPartitions(db, POSITIONS, now, retentionDays);
}
