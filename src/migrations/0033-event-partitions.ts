import { sql, type Kysely } from 'kysely';
import { auditTable } from './0027-back-office.ts';

/**
 * `events` partitioned by month of `created_at` (UTC), like positions (0024): retention drops whole
 * months of delivered events instead of deleting rows (webhooks/event-partitions.ts).
 *
 * - The key becomes (id, created_at): a partitioned table's unique keys must include the partition
 *   key. NOTE: ids stay unique without a constraint of their own: they are random or time-ordered
 *   UUIDs, never chosen by a client.
 * - `webhook_pending_events` and `webhook_deliveries` carry the event's `created_at` beside its id,
 *   so that their reads name the event's month and read only that partition. A delivery also
 *   carries its event's type: the delivery log (every listing of an endpoint's deliveries) then
 *   reads no events at all.
 * - NOTE: their foreign keys to events go. A key to a partitioned table is checked by a query on it
 *   per referencing row (inserting 100,000 deliveries on PostgreSQL 15, two runs: 8–10 times as
 *   long as without a key, 2–2.5 times as long as with a key to a plain table), and dropping a month
 *   checks the key by joining the whole referencing table with the month under a lock that stops
 *   every event write (1 s for a million deliveries). The references hold by construction: events are never deleted row by row, and the
 *   worker drops a month, or deletes a DEFAULT row, only when no queued event or pending delivery
 *   refers to it, under a lock that fan-out and replay (which read the event in the transaction
 *   that creates its deliveries) wait for. A delivery that meets no event all the same (a retry
 *   racing the drop) ends as failed when it is claimed.
 * - `created_at` is kept to the millisecond, as a JavaScript Date holds it: a reader that passes an
 *   event's key back (a delivery of it, a replay) names the very value stored, whatever wrote it.
 *   Every writer so far passed a Date; an older value finer than that is cut to its millisecond.
 * - `sequence` takes its numbers from a sequence of its own as the column's default, continued from
 *   the old identity's last number: months the worker creates (CREATE TABLE … LIKE, then ATTACH)
 *   take a default as they take any column, alike on PostgreSQL 15 and PGlite's 18.
 * - The DEFAULT partition takes any time no month covers yet (the worker creates months ahead).
 * - The audit trigger fires on each partition, where TG_TABLE_NAME is the partition's name: the audit
 *   function records the partitioned table's name instead (`milepost_audited_table`).
 *
 * Set-based on a big table: the rows are copied in one INSERT … SELECT into partitions made for every
 * month that has events, the key's indexes built afterwards, then the old table is dropped. Functions
 * that insert into `events` name it in their text, so they reach the new table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Anything on the old table that this migration does not rebuild would be lost without a word.
  const unknown = await sql<{ what: string }>`
    select 'trigger ' || tgname as what from pg_trigger
    where tgrelid = 'events'::regclass and not tgisinternal
      and tgname not in ('events_webhook_queue', 'audit_events')
    union all
    select 'index ' || indexrelid::regclass::text from pg_index
    where indrelid = 'events'::regclass and indexrelid <> 'events_pkey'::regclass
    union all
    select 'foreign key ' || conname from pg_constraint
    where confrelid = 'events'::regclass
      and conname not in ('webhook_deliveries_event_id_fkey', 'webhook_pending_events_event_id_fkey')`.execute(
    db,
  );
  if (unknown.rows.length > 0)
    throw new Error(`0033: events has ${unknown.rows.map((r) => r.what).join(', ')}, not carried over`);

  // ── The old table steps aside ─────────────────────────────────────────────────────────────────
  await sql`alter table webhook_deliveries drop constraint webhook_deliveries_event_id_fkey`.execute(db);
  await sql`alter table webhook_pending_events drop constraint webhook_pending_events_event_id_fkey`.execute(
    db,
  );
  await sql`alter table events rename to events_unpartitioned`.execute(db);
  await sql`alter table events_unpartitioned rename constraint events_pkey to events_unpartitioned_pkey`.execute(
    db,
  );
  // The last number the identity gave out (0: none), before the identity and its sequence go.
  const last = await sql<{ issued: string | number }>`
    select case when is_called then last_value else last_value - 1 end as issued
    from events_sequence_seq`.execute(db);
  const issued = Number(last.rows[0]?.issued ?? 0);
  await sql`alter table events_unpartitioned alter column sequence drop identity`.execute(db);

  // ── The partitioned table ─────────────────────────────────────────────────────────────────────
  await sql`create sequence events_sequence_seq as bigint`.execute(db);
  await sql`
    create table events (
      id uuid not null default gen_random_uuid(),
      sequence bigint not null default nextval('events_sequence_seq'),
      company_id uuid not null,
      environment text not null,
      type text not null,
      data jsonb not null,
      created_at timestamptz(3) not null
    ) partition by range (created_at)`.execute(db);
  await sql`alter sequence events_sequence_seq owned by events.sequence`.execute(db);
  await sql`create table events_default partition of events default`.execute(db);
  // Every month that has events, and the previous month to two ahead by the database's clock (the
  // worker keeps creating them from then on).
  await sql`
    do $$
    declare
      month date;
    begin
      for month in
        select distinct date_trunc('month', created_at at time zone 'UTC')::date from events_unpartitioned
        union
        select (date_trunc('month', now() at time zone 'UTC') + make_interval(months => i))::date
        from generate_series(-1, 2) as i
      loop
        execute format(
          'create table %I partition of events for values from (%L) to (%L)',
          'events_p' || to_char(month, 'YYYY_MM'),
          to_char(month, 'YYYY-MM-DD') || 'T00:00:00Z',
          to_char((month + interval '1 month')::date, 'YYYY-MM-DD') || 'T00:00:00Z');
      end loop;
    end $$`.execute(db);
  // No trigger on the new table yet: copied events are not queued for webhooks a second time.
  await sql`
    insert into events (id, sequence, company_id, environment, type, data, created_at)
    select id, sequence, company_id, environment, type, data, date_trunc('milliseconds', created_at)
    from events_unpartitioned`.execute(db);
  // The key's indexes built once over the loaded rows (a sort each), not row by row during the copy.
  await sql`alter table events add constraint events_pkey primary key (id, created_at)`.execute(db);
  if (issued > 0) await sql`select setval('events_sequence_seq', ${issued})`.execute(db);

  // ── What refers to events carries the event's month (and a delivery its event's type) ──────────
  await sql`alter table webhook_pending_events add column event_created_at timestamptz(3)`.execute(db);
  await sql`
    update webhook_pending_events p set event_created_at = date_trunc('milliseconds', e.created_at)
    from events_unpartitioned e where e.id = p.event_id`.execute(db);
  await sql`alter table webhook_pending_events alter column event_created_at set not null`.execute(db);
  await sql`
    alter table webhook_deliveries add column event_created_at timestamptz(3), add column event_type text`.execute(
    db,
  );
  await sql`
    update webhook_deliveries d set event_created_at = date_trunc('milliseconds', e.created_at),
      event_type = e.type
    from events_unpartitioned e where e.id = d.event_id`.execute(db);
  await sql`
    alter table webhook_deliveries alter column event_created_at set not null,
      alter column event_type set not null`.execute(db);
  await sql`drop table events_unpartitioned`.execute(db);

  // ── Triggers ──────────────────────────────────────────────────────────────────────────────────
  await sql`
    create or replace function webhook_queue_event() returns trigger language plpgsql as $$
    begin
      -- Only tenants with an enabled endpoint pay for a row; test events go to one endpoint directly.
      if new.type <> 'webhook.test' and exists (
        select 1 from webhook_endpoints e
        where e.company_id = new.company_id and e.environment = new.environment and e.enabled
      ) then
        insert into webhook_pending_events (event_id, event_created_at) values (new.id, new.created_at);
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger events_webhook_queue after insert on events
    for each row execute function webhook_queue_event()`.execute(db);
  await sql`
    create function milepost_audited_table(relation oid) returns name language sql stable as $$
      select c.relname from pg_class c where c.oid = coalesce(pg_partition_root(relation), relation)
    $$`.execute(db);
  // The audit function as it stands, with each mention of the firing table's name replaced.
  await sql`
    do $$
    begin
      execute replace(pg_get_functiondef('milepost_audit_row'::regproc),
        'TG_TABLE_NAME', 'milepost_audited_table(TG_RELID)');
    end $$`.execute(db);
  await auditTable(db, 'events');
  // NOTE: no ANALYZE here (5 s a million events): autovacuum analyzes each new partition after its
  // inserts, and the reads of events name their months, which the partitions' statistics serve.
}
