import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { migrations } from '../../../src/migrations/index.ts';
import type { DatabaseHandle } from '../../../src/platform/db/database.ts';
import { migrateToLatest } from '../../../src/platform/db/migrate.ts';
import { auditAsStaff, createEmptyDatabase } from '../../support/database.ts';

// Migration 0033 on a database that already holds events, queued events, deliveries and attempts:
// migrated up to just before it, seeded at that schema, then migrated to the latest.
const MIGRATION = '0033-event-partitions';
const before0033 = Object.fromEntries(
  Object.entries(migrations).slice(0, Object.keys(migrations).indexOf(MIGRATION)),
);

let handle: DatabaseHandle<unknown>;

before(async () => {
  handle = await createEmptyDatabase<unknown>();
});
after(() => handle.close());

const rows = async <T>(db: Kysely<unknown>, query: ReturnType<typeof sql<T>>): Promise<T[]> =>
  (await query.execute(db)).rows;

const COMPANY = '00000000-0000-4000-8000-000000000001';
const ENABLED = '00000000-0000-4000-8000-0000000000e1';
const DISABLED = '00000000-0000-4000-8000-0000000000e2';

/** Events over four months of 2025, one of them written with microseconds, and what refers to them. */
async function seed(db: Kysely<unknown>): Promise<void> {
  await sql`
    insert into companies (id, company_reference, name, client_id, production_secret_hash, sandbox_secret_hash,
      stripe_sandbox_key)
    values (${COMPANY}, 'co_events', 'Events Ltd', 'client_events', '\\x00', '\\x00', 'sk_test_x')`.execute(
    db,
  );
  for (const [id, enabled] of [
    [ENABLED, true],
    [DISABLED, false],
  ] as const)
    await sql`
      insert into webhook_endpoints (id, endpoint_reference, company_id, environment, url, enabled, secret,
        created_at, updated_at)
      values (${id}, ${`we_${id.slice(-2)}`}, ${COMPANY}, 'sandbox', 'http://127.0.0.1:9/hook', ${enabled},
        'whsec_x', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z')`.execute(db);
  // 4,000 events, 1,000 a month from January to April 2025 (the endpoint's trigger queues each one).
  await sql`
    insert into events (company_id, environment, type, data, created_at)
    select ${COMPANY}, case when g % 2 = 0 then 'sandbox' else 'production' end, 'journey.created',
      jsonb_build_object('n', g, 'policy_reference', 'POL-' || g),
      timestamptz '2025-01-01T00:00:00Z' + make_interval(months => (g - 1) / 1000)
        + make_interval(secs => (g % 1000) * 2419.2)
    from generate_series(1, 4000) as g`.execute(db);
  await sql`
    insert into events (company_id, environment, type, data, created_at)
    values (${COMPANY}, 'sandbox', 'policy.updated', '{"micro": true}', '2025-02-10T10:00:00.123456Z')`.execute(
    db,
  );
  // Half the queue fanned out: deliveries to the enabled endpoint, some done, some retrying, with attempts.
  await sql`
    with fanned as (
      delete from webhook_pending_events
      where event_id in (select event_id from webhook_pending_events order by position limit 1000)
      returning event_id
    )
    insert into webhook_deliveries (delivery_reference, endpoint_id, event_id, status, attempt_count,
      next_attempt_at, delivered_at, created_at, updated_at)
    select 'wd_' || row_number() over (order by event_id), ${ENABLED}, event_id,
      case when row_number() over (order by event_id) % 10 = 0 then 'pending' else 'succeeded' end, 1,
      case when row_number() over (order by event_id) % 10 = 0 then timestamptz '2025-06-01T00:00:00Z' end,
      case when row_number() over (order by event_id) % 10 = 0 then null else timestamptz '2025-05-01T00:00:00Z' end,
      '2025-05-01T00:00:00Z', '2025-05-01T00:00:00Z'
    from fanned`.execute(db);
  await sql`
    insert into webhook_delivery_attempts (delivery_id, attempt_number, started_at, duration_ms, outcome,
      response_status)
    select id, 1, '2025-05-01T00:00:00Z', 12, case when status = 'pending' then 'failed' else 'succeeded' end,
      case when status = 'pending' then 500 else 200 end
    from webhook_deliveries`.execute(db);
}

const snapshot = async (db: Kysely<unknown>) => ({
  events: await rows(
    db,
    sql<object>`
      select id, sequence, company_id, environment, type, data::text as data,
        date_trunc('milliseconds', created_at) as created_at
      from events order by id`,
  ),
  pending: await rows(
    db,
    sql<object>`select p.event_id, p.position, date_trunc('milliseconds', e.created_at) as event_created_at
      from webhook_pending_events p join events e on e.id = p.event_id order by p.event_id`,
  ),
  deliveries: await rows(
    db,
    sql<object>`select d.id, d.delivery_reference, d.sequence, d.endpoint_id, d.event_id, d.status,
        d.attempt_count, d.next_attempt_at, d.delivered_at, d.created_at, d.updated_at,
        date_trunc('milliseconds', e.created_at) as event_created_at, e.type as event_type
      from webhook_deliveries d join events e on e.id = d.event_id order by d.id`,
  ),
  attempts: await rows(db, sql<object>`select * from webhook_delivery_attempts order by id`),
  lastSequence: (await rows(db, sql<{ n: number }>`select max(sequence)::int as n from events`))[0]?.n,
});

test('0033 keeps every event, queued event, delivery and attempt, and writes go on as before', async (t) => {
  const db = handle.db;
  await migrateToLatest(db, before0033);
  await seed(db);
  const old = await snapshot(db);
  assert.equal(old.events.length, 4001);
  assert.equal(old.pending.length, 1001, 'the sandbox events, less those fanned out');
  assert.equal(old.deliveries.length, 1000);

  const started = performance.now();
  const applied = await migrateToLatest(db, migrations);
  assert.ok(applied.includes(MIGRATION), applied.join());
  const migratedMs = performance.now() - started;

  // Every row as it was; what refers to events now carries the event's created_at.
  const now = await snapshot(db);
  assert.deepEqual(now.events, old.events);
  assert.deepEqual(now.attempts, old.attempts);
  const pending = await rows(
    db,
    sql<object>`select event_id, position, event_created_at from webhook_pending_events order by event_id`,
  );
  assert.deepEqual(pending, old.pending);
  const deliveries = await rows(
    db,
    sql<object>`select id, delivery_reference, sequence, endpoint_id, event_id, status, attempt_count,
      next_attempt_at, delivered_at, created_at, updated_at, event_created_at, event_type
      from webhook_deliveries order by id`,
  );
  assert.deepEqual(deliveries, old.deliveries);
  const micro = await rows(
    db,
    sql<{ at: Date }>`select created_at as at from events where data ->> 'micro' = 'true'`,
  );
  assert.equal(micro[0]?.at.toISOString(), '2025-02-10T10:00:00.123Z', 'cut to its millisecond');

  // A partition per month that has events, the DEFAULT one empty; the parent holds nothing itself.
  const partitions = await rows(
    db,
    sql<{ name: string; n: number }>`
      select c.relname as name, (select count(*)::int from events e where e.tableoid = c.oid) as n
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'events'::regclass order by 1`,
  );
  const count = (name: string) => partitions.find((p) => p.name === name)?.n;
  assert.deepEqual(
    ['events_p2025_01', 'events_p2025_02', 'events_p2025_03', 'events_p2025_04'].map(count),
    [1000, 1001, 1000, 1000],
  );
  assert.equal(count('events_default'), 0);

  // New events continue the sequence, take the default id, and the webhook trigger still queues them.
  const [written] = await rows(
    db,
    sql<{ id: string; sequence: number; created_at: Date }>`
      insert into events (company_id, environment, type, data, created_at)
      values (${COMPANY}, 'sandbox', 'policy.updated', '{}', '2025-04-20T12:00:00.5Z')
      returning id, sequence, created_at`,
  );
  assert.ok(written !== undefined);
  assert.equal(written.sequence, (old.lastSequence ?? 0) + 1);
  const queued = await rows(
    db,
    sql<{
      event_created_at: Date;
    }>`select event_created_at from webhook_pending_events where event_id = ${written.id}`,
  );
  assert.deepEqual(
    queued.map((q) => q.event_created_at.toISOString()),
    ['2025-04-20T12:00:00.500Z'],
  );

  // The audit trail names the table, not the partition the row went to.
  await db.transaction().execute(async (trx) => {
    await auditAsStaff(trx, { at: '2025-04-20T12:00:00Z', requestId: 'req-1', action: 'test.event' });
    await sql`
      insert into events (company_id, environment, type, data, created_at)
      values (${COMPANY}, 'sandbox', 'policy.updated', '{}', '2025-03-03T00:00:00Z')`.execute(trx);
  });
  const audited = await rows(
    db,
    sql<{ table_name: string }>`select table_name from audit_records where request_id = 'req-1'`,
  );
  assert.deepEqual(
    audited.map((a) => a.table_name),
    ['events'],
  );

  // Nothing else of the old table is left behind.
  const leftovers = await rows(
    db,
    sql<{ name: string }>`select relname as name from pg_class where relname like 'events_unpartitioned%'`,
  );
  assert.deepEqual(leftovers, []);
  t.diagnostic(`migrated 4,001 events in ${Math.round(migratedMs)} ms`);
});
