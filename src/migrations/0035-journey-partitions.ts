import { sql, type Kysely } from 'kysely';

/**
 * Journeys partitioned by month of `start_at` (UTC), as positions are (DESIGN §6): a month's journeys
 * sit in their own table, which a statement's period prunes to, and which vacuum and index maintenance
 * take one at a time. Every row is kept: the rows are copied into the partitioned table and the old
 * one dropped, in this migration's one transaction (docs/operations.md gives the time it takes).
 *
 * - A partitioned table's keys must include the partition key: the primary key is
 *   (id, policy_id, start_at), the same rows as before.
 * - A provider reference names one journey of a policy (a void device trip or estimate aside, as
 *   migration 0025 set): no longer a unique index, which would have to include the start, but a check
 *   in store_journey under the policy row's lock, which every journey write of a policy takes.
 * - The voids' and rule credits' foreign keys to their journey cannot name a partitioned table's key
 *   without its start: both are written in the transaction that reads their journey under its policy's
 *   lock, and journeys are never deleted.
 * - Monthly partitions exist from the month of the earliest journey to two months ahead, and a DEFAULT
 *   partition takes any other time (a late upload of a month before them); the worker creates the
 *   months ahead from then on (journeys/journey-partitions.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table journey_voids drop constraint journey_voids_journey_id_fkey`.execute(db);
  await sql`alter table journey_rule_credits drop constraint journey_rule_credits_journey_id_fkey`.execute(
    db,
  );
  await sql`alter table journeys rename to journeys_unpartitioned`.execute(db);
  await sql`alter index journeys_pkey rename to journeys_unpartitioned_pkey`.execute(db);

  await sql`
    create table journeys (like journeys_unpartitioned including defaults including constraints)
    partition by range (start_at)`.execute(db);
  await sql`alter table journeys add constraint journeys_pkey primary key (id, policy_id, start_at)`.execute(
    db,
  );

  // Every month that holds journeys, to two months ahead of the database's clock, then the DEFAULT one.
  await sql`
    do $$
    declare
      this_month date := date_trunc('month', now() at time zone 'UTC')::date;
      last_month date := (this_month + interval '2 months')::date;
      first_month date;
      month date;
    begin
      select least(coalesce(date_trunc('month', min(start_at) at time zone 'UTC')::date, this_month), this_month)
        into first_month from journeys_unpartitioned;
      month := first_month;
      while month <= last_month loop
        execute format(
          'create table %I partition of journeys for values from (%L) to (%L)',
          'journeys_p' || to_char(month, 'YYYY_MM'),
          to_char(month, 'YYYY-MM-DD') || 'T00:00:00Z',
          to_char((month + interval '1 month')::date, 'YYYY-MM-DD') || 'T00:00:00Z');
        month := (month + interval '1 month')::date;
      end loop;
    end $$`.execute(db);
  await sql`create table journeys_default partition of journeys default`.execute(db);

  await sql`insert into journeys select * from journeys_unpartitioned`.execute(db);
  await sql`drop table journeys_unpartitioned`.execute(db);

  // The indexes as they were (migrations 0014, 0016, 0025, 0029), the provider reference's no longer unique.
  await sql`
    create index journeys_policy_start_idx on journeys (policy_id, start_at)
    include (end_at, distance_metres, usage_premium_pence, is_void)`.execute(db);
  await sql`
    create index journeys_provider_reference_idx on journeys (policy_id, provider_reference)
    where source = 'api' or not is_void`.execute(db);
  await sql`
    create index journeys_device_start_idx on journeys (company_id, environment, device_id, start_at)
    where device_id is not null`.execute(db);
  await sql`create index journeys_late_idx on journeys (policy_id) where late`.execute(db);
  await sql`create index journeys_route_retention on journeys (start_at) where point_count > 2`.execute(db);
  await sql`
    create trigger audit_journeys after insert or update or delete on journeys
    for each row when (coalesce(current_setting('milepost.audit', true), '') <> '')
    execute function milepost_audit_row()`.execute(db);
  await setStorage(db);

  // The one change to store_journey (0025): a provider reference taken is found by a lookup under the
  // policy's lock rather than by the unique index's conflict.
  await sql`
    create or replace function store_journey(
      p_id uuid, p_company_id uuid, p_environment text, p_policy_id uuid, p_policy_reference text,
      p_policy_version_id uuid, p_provider_reference text, p_route text, p_route_precision smallint,
      p_point_count integer, p_start_at timestamptz, p_end_at timestamptz, p_distance_metres bigint,
      p_distance_unit text, p_usage_rate numeric, p_usage_premium_pence bigint,
      p_start_lat double precision, p_start_lng double precision,
      p_end_lat double precision, p_end_lng double precision,
      p_start_name text, p_start_postcode text, p_end_name text, p_end_postcode text,
      p_created_at timestamptz, p_version_count integer, p_event_type text, p_event_data jsonb,
      p_source text, p_device_id text, p_gap_distance_metres bigint
    ) returns smallint language plpgsql as $$
    declare
      v_billed_through timestamptz;
    begin
      select billed_through_at into v_billed_through from policies
      where id = p_policy_id and version_count = p_version_count for no key update;
      if not found then
        return 2;
      end if;
      -- Versions are never updated or deleted, so no lock is needed to rely on one.
      perform 1 from policy_versions where id = p_policy_version_id and policy_id = p_policy_id;
      if not found then
        raise exception 'policy version % is not a version of policy %', p_policy_version_id, p_policy_id
          using errcode = 'foreign_key_violation';
      end if;
      if p_provider_reference is not null and exists (
        select 1 from journeys
        where policy_id = p_policy_id and provider_reference = p_provider_reference
          and (source = 'api' or not is_void)) then
        return 1;
      end if;
      if p_end_at > p_start_at and (
        exists (
          select 1 from journeys
          where policy_id = p_policy_id and start_at >= p_start_at and start_at < p_end_at and not is_void
            and end_at > start_at)
        or coalesce((
          select end_at > p_start_at from journeys
          where policy_id = p_policy_id and start_at < p_start_at and not is_void and end_at > start_at
          order by start_at desc limit 1), false)) then
        return 1;
      end if;
      insert into journeys (
        id, company_id, environment, policy_id, policy_reference, policy_version_id, provider_reference,
        route, route_precision, point_count, start_at, end_at, distance_metres, distance_unit,
        usage_rate, usage_premium_pence, start_lat, start_lng, end_lat, end_lng,
        start_name, start_postcode, end_name, end_postcode, created_at, late,
        source, device_id, gap_distance_metres
      ) values (
        p_id, p_company_id, p_environment, p_policy_id, p_policy_reference, p_policy_version_id,
        p_provider_reference, p_route, p_route_precision, p_point_count, p_start_at, p_end_at,
        p_distance_metres, p_distance_unit, p_usage_rate, p_usage_premium_pence,
        p_start_lat, p_start_lng, p_end_lat, p_end_lng,
        p_start_name, p_start_postcode, p_end_name, p_end_postcode, p_created_at,
        coalesce(p_start_at <= v_billed_through, false),
        p_source, p_device_id, p_gap_distance_metres
      );
      insert into events (company_id, environment, type, data, created_at)
      values (p_company_id, p_environment, p_event_type, p_event_data, p_created_at);
      return 0;
    end
    $$`.execute(db);
}

/**
 * The storage settings of migration 0014 on every partition (a partitioned table holds no rows, so its
 * own settings would not reach them): pages filled, and an index-only scan's visibility map kept fresh
 * by a vacuum every 50,000 inserts. New partitions get them when the worker creates them.
 */
async function setStorage(db: Kysely<unknown>): Promise<void> {
  const partitions = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'journeys'::regclass`.execute(db);
  for (const { name } of partitions.rows)
    await sql`alter table ${sql.id(name)} set (fillfactor = 100,
      autovacuum_vacuum_insert_threshold = 50000, autovacuum_vacuum_insert_scale_factor = 0)`.execute(db);
}
