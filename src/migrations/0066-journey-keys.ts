import { sql, type Kysely } from 'kysely';

/**
 * `journey_keys`: what `store_journey`'s two checks need of a policy's journeys, in one table that is
 * not partitioned, a row per journey: its provider reference while it is taken (the exactly-once rule
 * a unique constraint again, as before migration 0035) and its span while it counts for the overlap
 * check (not void, longer than an instant). Owned by the journeys module (journey-repository.ts).
 *
 * NOTE: on the partitioned `journeys` neither check can be pruned to a month (a reference does not
 * name one; the latest journey before a start may lie in any earlier month), so each call read every
 * partition's index, and its cached generic plans locked every partition before pruning: past a
 * backend's 16 fast-path locks as the months accrue (docs/benchmarks.md, "Where the journeys load's
 * time goes"). Here both are index probes whatever the number of months, and `store_journey` touches
 * only the month's partition of `journeys`.
 *
 * - A reference is taken by a client's journey for good, void or not, and by a device trip or an
 *   estimate until it is voided (migration 0025): voiding one sets `provider_reference` null here
 *   (journey-repository.ts `markJourneyVoid`), so a re-cut trip may take its forerunner's name.
 * - `live` is `not is_void and end_at > start_at` of the journey, the rows the overlap check reads.
 * - No foreign keys, as journeys have none: rows are written in the transaction that writes their
 *   journey, under its policy's row lock.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table journey_keys (
      policy_id uuid not null,
      journey_id uuid not null,
      start_at timestamptz not null,
      end_at timestamptz not null,
      provider_reference text,
      live boolean not null,
      constraint journey_keys_pkey primary key (policy_id, journey_id),
      constraint journey_keys_provider_reference_key unique (policy_id, provider_reference)
    ) with (fillfactor = 100, autovacuum_vacuum_insert_threshold = 50000,
      autovacuum_vacuum_insert_scale_factor = 0)`.execute(db);
  // The overlap check's probes, index-only (the vacuum settings above keep the visibility map fresh).
  await sql`
    create index journey_keys_live_start_idx on journey_keys (policy_id, start_at) include (end_at)
    where live`.execute(db);
  await sql`
    insert into journey_keys (policy_id, journey_id, start_at, end_at, provider_reference, live)
    select policy_id, id, start_at, end_at,
      case when source = 'api' or not is_void then provider_reference end,
      not is_void and end_at > start_at
    from journeys`.execute(db);

  // The checks as migrations 0016, 0025 and 0035 made them, read from journey_keys; the reference's
  // is now the unique key's conflict, taken with the key's row.
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
      if p_end_at > p_start_at and (
        exists (
          select 1 from journey_keys
          where policy_id = p_policy_id and live and start_at >= p_start_at and start_at < p_end_at)
        or coalesce((
          select end_at > p_start_at from journey_keys
          where policy_id = p_policy_id and live and start_at < p_start_at
          order by start_at desc limit 1), false)) then
        return 1;
      end if;
      insert into journey_keys (policy_id, journey_id, start_at, end_at, provider_reference, live)
      values (p_policy_id, p_id, p_start_at, p_end_at, p_provider_reference, p_end_at > p_start_at)
      on conflict (policy_id, provider_reference) do nothing;
      if not found then
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
