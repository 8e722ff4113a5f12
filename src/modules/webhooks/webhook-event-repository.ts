import type { Executor } from '../../schema.ts';
import type { DataEnvironment, Tenant } from '../companies/index.ts';
import { findScopedEvent, listEventsByKey } from '../../platform/events-lookups.ts';

/* The fan-out queue (webhook_pending_events, fed by a trigger on events) and the events webhooks send. */

/** An event a delivery sends (its environment is a tenant's: events are recorded only for one). */
export interface EventRecord {
  readonly id: string;
  readonly companyId: string;
  readonly environment: DataEnvironment;
  readonly type: string;
  readonly data: unknown;
  readonly createdAt: Date;
}

/**
 * One event of the tenant by id alone (the replay route's), so every monthly partition's key is
 * probed: reads that know the event's created_at name it, and read only its month.
 */
export async function findEvent(db: Executor, tenant: Tenant, id: string): Promise<EventRecord | undefined> {
  const event = await findScopedEvent(db, tenant, id);
  return event === undefined ? undefined : { ...event, environment: event.environment as DataEnvironment };
}

/**
 * Takes the oldest events not yet fanned out, locking their queue rows so that a second worker takes
 * the next ones instead of waiting (SKIP LOCKED). The events are then read by their full keys, which
 * name their months: only those months' partitions are read, whatever the planner makes of the queue.
 */
export async function claimPendingEvents(
  db: Executor,
  limit: number,
): Promise<Array<{ id: string; createdAt: Date; companyId: string; environment: string; type: string }>> {
  const queued = await db
    .selectFrom('webhook_pending_events')
    .select(['event_id', 'event_created_at', 'position'])
    .orderBy('position')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
  if (queued.length === 0) return [];
  const rows = await listEventsByKey(db, queued, ['id', 'created_at', 'company_id', 'environment', 'type']);
  const byId = new Map(rows.map((r) => [r.id, r]));
  // NOTE: nothing holds a queued event but the worker's rule (migration 0033); should one be gone all
  // the same, its queue row goes, rather than taking a place in every batch from then on.
  const orphans = queued.filter((q) => !byId.has(q.event_id)).map((q) => q.event_id);
  if (orphans.length > 0)
    await db.deleteFrom('webhook_pending_events').where('event_id', 'in', orphans).execute();
  return queued.flatMap((q) => {
    const r = byId.get(q.event_id);
    return r === undefined
      ? []
      : [
          {
            id: r.id,
            createdAt: r.created_at,
            companyId: r.company_id,
            environment: r.environment,
            type: r.type,
          },
        ];
  });
}

export async function deletePendingEvents(db: Executor, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db.deleteFrom('webhook_pending_events').where('event_id', 'in', eventIds).execute();
}
