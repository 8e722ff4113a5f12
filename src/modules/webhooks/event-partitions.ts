import { sql } from 'kysely';
import {
  listMonthlyPartitions,
  maintainMonthlyPartitions,
  type MonthlyPartitioning,
  type PartitionMaintenance,
} from '../../platform/db/monthly-partitions.ts';
import type { Database, Executor } from '../../schema.ts';

/** Days events are kept by default (EVENT_RETENTION_DAYS). */
export const DEFAULT_EVENT_RETENTION_DAYS = 400;

/**
 * `events` by month of `created_at` (migration 0033). Past retention an event is still needed while
 * it waits to be fanned out, or while a delivery of it is pending (first attempt or a retry): its month
 * stays until then. What refers to events carries the event's created_at, so a month's references
 * are found by range, without reading the month.
 */
const EVENTS: MonthlyPartitioning<Database> = {
  table: 'events',
  column: 'created_at',
  lockKey: 18_240_033,
  async inUse(trx, { from, to }) {
    const result = await sql<{ used: boolean }>`
      select exists (
        select 1 from webhook_pending_events
        where event_created_at >= ${from} and event_created_at < ${to}
      ) or exists (
        select 1 from webhook_deliveries
        where status = 'pending' and event_created_at >= ${from} and event_created_at < ${to}
      ) as used`.execute(trx);
    return result.rows[0]?.used === true;
  },
  // The finished deliveries of the month's events go with them (the delivery log would forget them
  // within DELIVERY_LOG_RETENTION_MS anyway).
  async afterDrop(db, { from, to }) {
    await db
      .deleteFrom('webhook_deliveries')
      .where('event_created_at', '>=', from)
      .where('event_created_at', '<', to)
      .execute();
  },
  async purgeDefault(trx, cutoff) {
    // Usually nothing: DEFAULT holds only months the worker had not created in time.
    const any = await sql`select 1 from events_default where created_at < ${cutoff} limit 1`.execute(trx);
    if (any.rows.length === 0) return 0;
    // NOTE: fan-out and replay read an event in the transaction that creates its deliveries, so they
    // hold this partition's lock until they commit: with the lock, an event found unreferenced here
    // stays so until it is gone. (A retry revives a delivery without reading its event; should one
    // race this, the delivery meets no event when claimed and ends as failed.)
    await sql`lock table events_default in access exclusive mode`.execute(trx);
    const deleted = await sql<{ events: number }>`
      with expired as (
        delete from events_default e
        where e.created_at < ${cutoff}
          and not exists (select 1 from webhook_pending_events p where p.event_id = e.id)
          and not exists (
            select 1 from webhook_deliveries d where d.event_id = e.id and d.status = 'pending'
          )
        returning e.id, e.created_at
      ), deliveries as (
        delete from webhook_deliveries d using expired x
        where d.event_id = x.id and d.event_created_at = x.created_at
      )
      select count(*)::int as events from expired`.execute(trx);
    return deleted.rows[0]?.events ?? 0;
  },
};

/** The monthly partitions of `events` that exist now (the DEFAULT one aside). */
export function listEventPartitions(db: Executor): Promise<string[]> {
  return listMonthlyPartitions(db, EVENTS.table);
}

/**
 * Keeps `events` partitioned for `now`: the current month and the next ones created ahead; months
 * wholly older than `retentionDays` dropped once every event of theirs is fanned out and has no
 * delivery pending, with their finished deliveries; such DEFAULT rows deleted. Idempotent.
 */
export function maintainEventPartitions(
  db: Executor,
  now: Date,
  retentionDays: number,
): Promise<PartitionMaintenance> {
  return maintainMonthlyPartitions(db, EVENTS, now, retentionDays);
}
