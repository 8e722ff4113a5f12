import type { Executor } from '../schema.ts';
import type { EventScope } from './events.ts';

/*
 * Reads of the events table for the modules that act on events after they were recorded (webhook
 * fan-out, delivery and replay). The table is partitioned by month of `created_at`: a read that
 * knows an event's created_at names it, so that only that month's partition is read.
 */

/** An event as recorded: its scope, type and payload (jsonb, parsed by both drivers). */
export interface StoredEvent {
  readonly id: string;
  readonly companyId: string;
  readonly environment: string;
  readonly type: string;
  readonly data: unknown;
  readonly createdAt: Date;
}

/**
 * One event of a company's environment by id alone (the replay route's), so every monthly
 * partition's key is probed; undefined when the scope has no such event.
 */
export async function findScopedEvent(
  db: Executor,
  scope: EventScope,
  id: string,
): Promise<StoredEvent | undefined> {
  const row = await db
    .selectFrom('events')
    .select(['id', 'company_id', 'environment', 'type', 'data', 'created_at'])
    .where('id', '=', id)
    .where('company_id', '=', scope.companyId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : {
        id: row.id,
        companyId: row.company_id,
        environment: row.environment,
        type: row.type,
        data: row.data,
        createdAt: row.created_at,
      };
}

type EventColumn = 'id' | 'created_at' | 'company_id' | 'environment' | 'type' | 'data';

/**
 * Events by their keys (id and created_at), the named columns of each. NOTE: both lists go to the
 * database, so that it reads only the months named; a row matching both is one of the keys, as ids
 * are unique. A key whose event is gone has no row.
 */
export function listEventsByKey<C extends EventColumn>(
  db: Executor,
  keys: ReadonlyArray<{ event_id: string; event_created_at: Date }>,
  columns: readonly C[],
) {
  return db
    .selectFrom('events')
    .select(columns)
    .where('id', 'in', [...new Set(keys.map((k) => k.event_id))])
    .where(
      'created_at',
      'in',
      [...new Set(keys.map((k) => k.event_created_at.getTime()))].map((t) => new Date(t)),
    )
    .execute();
}
