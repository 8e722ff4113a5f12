import { sql, type Kysely } from 'kysely';

/**
 * `store_journey` replaces `insert_journey_with_event` (0005, 0009) and takes over the guard its caller
 * wrapped around it: the policy must still have the version count the journey was rated at. The guard
 * and the key-share lock that late uploads need (0009) are now one row lookup, and the whole call is
 * one statement that the API prepares once per connection (journey-repository.ts).
 * Returns 0 when stored, 1 when the journey overlaps a non-void one of the policy or reuses its
 * provider reference (nothing stored), 2 when the policy's versions moved on (nothing stored).
 *
 * It is the only way journeys are inserted, and it holds what the foreign keys to policies and
 * policy_versions held: the policy row is locked (key share, as a key check locks it) and the rated
 * version is checked to be the policy's. The keys go: their checks were a third of the database's work
 * per journey (bench/journeys.ts, PostgreSQL: 2,916 → 3,543 req/s, 0.66 → 0.81 of the bare insert).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function store_journey(
      p_id uuid, p_company_id uuid, p_environment text, p_policy_id uuid, p_policy_reference text,
      p_policy_version_id uuid, p_provider_reference text, p_route text, p_route_precision smallint,
      p_point_count integer, p_start_at timestamptz, p_end_at timestamptz, p_distance_metres bigint,
      p_distance_unit text, p_usage_rate numeric, p_usage_premium_pence bigint,
      p_start_lat double precision, p_start_lng double precision,
      p_end_lat double precision, p_end_lng double precision,
      p_start_name text, p_start_postcode text, p_end_name text, p_end_postcode text,
      p_created_at timestamptz, p_version_count integer, p_event_type text, p_event_data jsonb
    ) returns smallint language plpgsql as $$
    declare
      v_billed_through timestamptz;
    begin
      perform 1 from policies where id = p_policy_id and version_count = p_version_count for key share;
      if not found then
        return 2;
      end if;
      -- Versions are never updated or deleted, so no lock is needed to rely on one.
      perform 1 from policy_versions where id = p_policy_version_id and policy_id = p_policy_id;
      if not found then
        raise exception 'policy version % is not a version of policy %', p_policy_version_id, p_policy_id
          using errcode = 'foreign_key_violation';
      end if;
      select max(period_end_at) into v_billed_through from statements where policy_id = p_policy_id;
      insert into journeys (
        id, company_id, environment, policy_id, policy_reference, policy_version_id, provider_reference,
        route, route_precision, point_count, start_at, end_at, distance_metres, distance_unit,
        usage_rate, usage_premium_pence, start_lat, start_lng, end_lat, end_lng,
        start_name, start_postcode, end_name, end_postcode, created_at, late
      ) values (
        p_id, p_company_id, p_environment, p_policy_id, p_policy_reference, p_policy_version_id,
        p_provider_reference, p_route, p_route_precision, p_point_count, p_start_at, p_end_at,
        p_distance_metres, p_distance_unit, p_usage_rate, p_usage_premium_pence,
        p_start_lat, p_start_lng, p_end_lat, p_end_lng,
        p_start_name, p_start_postcode, p_end_name, p_end_postcode, p_created_at,
        coalesce(p_start_at <= v_billed_through, false)
      )
      on conflict do nothing;
      if not found then
        return 1;
      end if;
      insert into events (company_id, environment, type, data, created_at)
      values (p_company_id, p_environment, p_event_type, p_event_data, p_created_at);
      return 0;
    end
    $$`.execute(db);
  await sql`drop function insert_journey_with_event`.execute(db);
  await sql`alter table journeys drop constraint journeys_policy_id_fkey`.execute(db);
  await sql`alter table journeys drop constraint journeys_policy_version_id_fkey`.execute(db);
}
