import { sql, type Kysely } from 'kysely';
import { inTransaction } from './database.ts';
import {
  defaultPartitionName,
  monthEnd,
  monthStart,
  parsePartitionName,
  partitionName,
  planPartitions,
  type Month,
} from './monthly-partitions-plan.ts';

/**
 * A table partitioned by range of one timestamptz column, one partition per UTC month plus a DEFAULT
 * partition (`<table>_default`) for any time no month covers (see monthly-partitions-plan.ts).
 */
export interface MonthlyPartitioning<DB> {
  /** The partitioned table, e.g. `positions`. */
  readonly table: string;
  /** Its partition key, a timestamptz column. */
  readonly column: string;
  /** An advisory lock key of this table's own: one process maintains it at a time, the others queue. */
  readonly lockKey: number;
  /** Settings a new partition takes that LIKE does not copy (storage parameters), before it is attached. */
  readonly afterCreate?: (trx: Kysely<DB>, partition: string) => Promise<void>;
  /**
   * Whether rows of [from, to) are still needed although past retention; asked under the table's
   * lock, just before the month would be dropped (and again at the next run). Absent: never.
   */
  readonly inUse?: (trx: Kysely<DB>, range: MonthRange) => Promise<boolean>;
  /** After a month was dropped, outside the table's lock: deletes what referred to its rows. */
  readonly afterDrop?: (db: Kysely<DB>, range: MonthRange) => Promise<void>;
  /**
   * Deletes the DEFAULT partition's rows past retention (before `cutoff`), holding that partition's
   * lock; returns how many. Absent: every row before the cutoff.
   */
  readonly purgeDefault?: (trx: Kysely<DB>, cutoff: Date) => Promise<number>;
}

export interface MonthRange {
  readonly from: Date;
  readonly to: Date;
}

export interface PartitionMaintenance {
  readonly created: readonly string[];
  readonly dropped: readonly string[];
  /** Months past retention that stay for now: `releaseMonth` refused, or the table stayed busy. */
  readonly kept: readonly string[];
  /** Rows past retention deleted from the DEFAULT partition. */
  readonly deletedDefaultRows: number;
}

/**
 * How long dropping a month waits for the table's lock. Detaching a partition locks the whole table
 * against reads and writes, and every statement that arrives meanwhile queues behind the waiting
 * detach: better to give up and drop the month at the next run than to stall writes behind a long
 * transaction.
 */
const LOCK_TIMEOUT_MS = 2_000;
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * `work` in a transaction of its own that holds the table's advisory lock and waits at most
 * LOCK_TIMEOUT_MS for any lock; undefined when a lock was not had in time (nothing was done).
 */
async function withShortLocks<DB, T>(
  db: Kysely<DB>,
  lockKey: number,
  work: (trx: Kysely<DB>) => Promise<T>,
): Promise<T | undefined> {
  try {
    return await inTransaction(db, async (trx) => {
      await sql`select pg_advisory_xact_lock(${lockKey})`.execute(trx);
      await sql`select set_config('lock_timeout', ${`${LOCK_TIMEOUT_MS}ms`}, true)`.execute(trx);
      return work(trx);
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE) return undefined;
    throw error;
  }
}

/** The monthly partitions of `table` that exist now (the DEFAULT one aside), by name. */
export async function listMonthlyPartitions<DB>(db: Kysely<DB>, table: string): Promise<string[]> {
  const result = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${table}::regclass and c.relname <> ${defaultPartitionName(table)}
    order by 1`.execute(db);
  return result.rows.map((r) => r.name);
}

/**
 * Creates the partition of one month. `create table … partition of` would fail while the DEFAULT
 * partition holds rows of that month, so a new table is filled with those rows (moved out of DEFAULT)
 * and then attached. The moved rows keep their keys. NOTE: a foreign key to the table would see the
 * rows deleted: the partitioned tables maintained here have none.
 */
async function createMonth<DB>(
  trx: Kysely<DB>,
  spec: MonthlyPartitioning<DB>,
  month: Month,
): Promise<string> {
  const name = partitionName(spec.table, month);
  const from = monthStart(month).toISOString();
  const to = monthEnd(month).toISOString();
  const column = sql.ref(spec.column);
  await sql`create table ${sql.id(name)} (like ${sql.table(spec.table)} including defaults including constraints)`.execute(
    trx,
  );
  await sql`
    with moved as (
      delete from ${sql.table(defaultPartitionName(spec.table))}
      where ${column} >= ${from}::timestamptz and ${column} < ${to}::timestamptz
      returning *
    )
    insert into ${sql.id(name)} select * from moved`.execute(trx);
  await spec.afterCreate?.(trx, name);
  await sql`alter table ${sql.table(spec.table)} attach partition ${sql.id(name)}
    for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(trx);
  return name;
}

/** Drops one month past retention in a transaction of its own; false when it stays for now. */
async function dropMonth<DB>(db: Kysely<DB>, spec: MonthlyPartitioning<DB>, name: string): Promise<boolean> {
  const month = parsePartitionName(spec.table, name);
  if (month === undefined) return false;
  const range = { from: monthStart(month), to: monthEnd(month) };
  const dropped = await withShortLocks(db, spec.lockKey, async (trx) => {
    // NOTE: the table's lock before anything else, the lock the detach needs anyway: readers lock
    // the table before its partitions, so taking a partition's first could deadlock with them. Held,
    // no one reads the month meanwhile, so nothing can come to refer to it after `inUse` said no.
    await sql`lock table ${sql.table(spec.table)} in access exclusive mode`.execute(trx);
    // Another process may have dropped it since this one planned.
    if (!(await listMonthlyPartitions(trx, spec.table)).includes(name)) return false;
    if (spec.inUse !== undefined && (await spec.inUse(trx, range))) return false;
    await sql`alter table ${sql.table(spec.table)} detach partition ${sql.id(name)}`.execute(trx);
    await sql`drop table ${sql.id(name)}`.execute(trx);
    return true;
  });
  if (dropped !== true) return false;
  await spec.afterDrop?.(db, range);
  return true;
}

/**
 * Keeps `spec.table` partitioned for `now`: creates the current month's partition and the
 * PARTITION_MONTHS_AHEAD after it, drops those wholly older than `retentionDays` (each in its own
 * transaction, unless `inUse` keeps it), and deletes rows past retention from the DEFAULT partition.
 * Without `retentionDays` (undefined) the table is kept whole.
 * Idempotent; concurrent maintainers of one table queue on its advisory lock. A step whose lock was
 * not had within LOCK_TIMEOUT_MS is left to the next run (months are created PARTITION_MONTHS_AHEAD
 * early, so a missed run costs nothing).
 */
export async function maintainMonthlyPartitions<DB>(
  db: Kysely<DB>,
  spec: MonthlyPartitioning<DB>,
  now: Date,
  retentionDays: number | undefined,
): Promise<PartitionMaintenance> {
  // Creating a month locks the DEFAULT partition while the attach checks it: short locks here too.
  const created =
    (await withShortLocks(db, spec.lockKey, async (trx) => {
      const existing = await listMonthlyPartitions(trx, spec.table);
      const months = planPartitions(spec.table, now, retentionDays, existing).create;
      if (months.length === 0) return [];
      // NOTE: writes to the table wait until the new months are committed. An attach locks the table
      // only against other DDL, so a write that began meanwhile would route its row with the partitions
      // it knew, into DEFAULT, and fail there on DEFAULT's narrowed constraint once the attach commits
      // (PostgreSQL rechecks it): a client's 500. Writes that wait here route afresh afterwards.
      await sql`lock table only ${sql.table(spec.table)} in share mode`.execute(trx);
      const names: string[] = [];
      for (const month of months) names.push(await createMonth(trx, spec, month));
      return names;
    })) ?? [];
  const plan = planPartitions(spec.table, now, retentionDays, await listMonthlyPartitions(db, spec.table));
  const dropped: string[] = [];
  const kept: string[] = [];
  for (const name of plan.drop) ((await dropMonth(db, spec, name)) ? dropped : kept).push(name);
  const cutoff = plan.cutoff;
  const deletedDefaultRows =
    cutoff === undefined
      ? 0
      : await withShortLocks(db, spec.lockKey, async (trx) => {
          if (spec.purgeDefault !== undefined) return spec.purgeDefault(trx, cutoff);
          const deleted = await sql`
            delete from ${sql.table(defaultPartitionName(spec.table))}
            where ${sql.ref(spec.column)} < ${cutoff}::timestamptz`.execute(trx);
          return Number(deleted.numAffectedRows ?? 0);
        });
  return { created, dropped, kept, deletedDefaultRows: deletedDefaultRows ?? 0 };
}
