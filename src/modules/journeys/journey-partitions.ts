import { sql } from 'kysely';
import {
  maintainMonthlyPartitions,
  type MonthlyPartitioning,
  type PartitionMaintenance,
} from '../../platform/db/monthly-partitions.ts';
import type { Database, Executor } from '../../schema.ts';

/**
 * `journeys` by month of `start_at` (migration 0035). Journeys are financial records: no month is
 * ever dropped here (retention coarsens old routes instead, data-protection/retention-service.ts).
 * A new month takes the storage settings of migration 0014, which a partition does not inherit: pages
 * filled, and the visibility map that index-only statement sums rely on kept fresh by a vacuum every
 * 50,000 inserts.
 */
const JOURNEYS: MonthlyPartitioning<Database> = {
  table: 'journeys',
  column: 'start_at',
  lockKey: 18_240_036,
  afterCreate: async (trx, partition) => {
    await sql`alter table ${sql.id(partition)} set (fillfactor = 100,
      autovacuum_vacuum_insert_threshold = 50000, autovacuum_vacuum_insert_scale_factor = 0)`.execute(trx);
  },
};

/** Creates the current month's partition of journeys and those ahead of it. Idempotent. */
export function maintainJourneyPartitions(db: Executor, now: Date): Promise<PartitionMaintenance> {
  return maintainMonthlyPartitions(db, JOURNEYS, now, undefined);
}
