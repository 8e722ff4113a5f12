import { sql } from 'kysely';
import { inTransaction } from '../../platform/db/database.ts';
import type { Executor } from '../../schema.ts';
import { monthEnd, monthStart, partitionName, planPartitions } from './rules/position-partitions.ts';

/** Any constant shared by the processes that maintain partitions; only one does it at a time. */
const MAINTENANCE_LOCK = 18_240_024;

export interface PartitionMaintenance {
  readonly created: readonly string[];
  readonly dropped: readonly string[];
  /** Rows past retention deleted from the DEFAULT partition. */
  readonly deletedDefaultRows: number;
}

/** The monthly partitions of `positions` that exist now (the DEFAULT one aside). */
export async function listPositionPartitions(db: Executor): Promise<string[]> {
  const result = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'positions'::regclass and c.relname <> 'positions_default'
    order by 1`.execute(db);
  return result.rows.map((r) => r.name);
}

/**
 * Keeps `positions` partitioned for `now`: creates the current month's partition and
 * PARTITION_MONTHS_AHEAD after it, drops those wholly older than `retentionDays`, and deletes rows past
 * retention that sit in the DEFAULT partition. Idempotent; concurrent workers queue on an advisory lock.
 * A month is created by filling a new table from the DEFAULT partition's rows of that month and then
 * attaching it: `create table … partition of` would fail when the DEFAULT partition holds such rows.
 */
export async function maintainPositionPartitions(
  db: Executor,
  now: Date,
  retentionDays: number,
): Promise<PartitionMaintenance> {
  return inTransaction(db, async (trx) => {
    await sql`select pg_advisory_xact_lock(${MAINTENANCE_LOCK})`.execute(trx);
    const plan = planPartitions(now, retentionDays, await listPositionPartitions(trx));
    const created: string[] = [];
    for (const month of plan.create) {
      // Months older than retention are not worth creating (the worker was down for a long time).
      if (monthEnd(month).getTime() <= plan.cutoff.getTime()) continue;
      const name = partitionName(month);
      const from = monthStart(month).toISOString();
      const to = monthEnd(month).toISOString();
      await sql`create table ${sql.id(name)} (like positions including defaults including constraints)`.execute(
        trx,
      );
      await sql`
        with moved as (
          delete from positions_default where time >= ${from}::timestamptz and time < ${to}::timestamptz
          returning *
        )
        insert into ${sql.id(name)} select * from moved`.execute(trx);
      await sql`alter table positions attach partition ${sql.id(name)}
        for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(trx);
      created.push(name);
    }
    for (const name of plan.drop) await sql`drop table ${sql.id(name)}`.execute(trx);
    const deleted = await sql`delete from positions_default where time < ${plan.cutoff}::timestamptz`.execute(
      trx,
    );
    return { created, dropped: plan.drop, deletedDefaultRows: Number(deleted.numAffectedRows ?? 0) };
  });
}
