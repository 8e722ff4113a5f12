import { sql, type Generated } from 'kysely';
import type { Executor } from '../schema.ts';
import { newId } from './ids.ts';
import { jsonRows } from './db/json-rows.ts';

export interface EventTables {
  events: {
    id: Generated<string>;
    sequence: Generated<number>;
    company_id: string;
    environment: string;
    type: string;
    data: string | object;
    created_at: Date;
  };
}

export interface EventScope {
  readonly companyId: string;
  readonly environment: string;
}

/**
 * Writes an event row in the caller's transaction (the outbox pattern): it exists exactly when the
 * change it describes committed. Webhook delivery reads these rows; the id is stable across retries.
 */
export async function recordEvent(
  trx: Executor,
  scope: EventScope,
  type: string,
  data: object,
  at: Date,
): Promise<string> {
  const row = await trx
    .insertInto('events')
    .values({
      company_id: scope.companyId,
      environment: scope.environment,
      type,
      data: JSON.stringify(data),
      created_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Many events in one statement, in the caller's transaction (a billing chunk writes one a policy). */
export async function recordEvents(
  trx: Executor,
  events: ReadonlyArray<{ scope: EventScope; type: string; data: object; at: Date }>,
): Promise<void> {
  if (events.length === 0) return;
  // One JSON parameter however many rows (db/json-rows.ts), which PostgreSQL binds far faster than a
  // VALUES list. Time-ordered ids (platform/ids.ts): a chunk's events go to the right edge of the key's
  // index.
  await sql`
    insert into events (id, company_id, environment, type, data, created_at)
    select id, company_id, environment, type, data, to_timestamp(created_ms / 1000)
    from json_to_recordset(${jsonRows(
      events.map((e) => ({
        id: newId(),
        company_id: e.scope.companyId,
        environment: e.scope.environment,
        type: e.type,
        data: e.data,
        created_ms: e.at.getTime(),
      })),
    )}::json) as e(id uuid, company_id uuid, environment text, type text, data jsonb, created_ms float8)`.execute(
    trx,
  );
}
