import { sql, type Kysely } from 'kysely';

/**
 * A policy's non-void journeys still never overlap, but `store_journey` now holds that rule instead of
 * the `journeys_no_overlap` exclusion constraint (0005), and the database no longer needs btree_gist.
 *
 * Why: the constraint needed the btree_gist extension (a uuid equality inside a GiST index), and PGlite
 * runs an extension as a second WebAssembly module linked into its first. Once that module is loaded,
 * every Node process tested ran slower at JavaScript that has nothing to do with the database: a bare
 * Fastify hello-world in a process holding PGlite with btree_gist answered 0.76–0.89 of the requests of
 * the same server without PGlite, and 0.94–1.01 with PGlite alone (bench/healthz.ts's method: two
 * servers, alternating 2-s phases). `npm start`'s default, embedded PGlite, paid that on every request.
 *
 * The rule, as `store_journey` now keeps it:
 * - It locks the policy row `for no key update` instead of `for key share`. Two uploads for one policy
 *   now take turns, so each sees the other's journey; anything that held the key-share lock out before
 *   (a statement being written, a policy change, both `for update`) still does, and a void's key-share
 *   lock still does not wait for an upload.
 * - Under that lock two probes of `journeys_policy_start_idx` (policy, start, with end and is_void
 *   included) find any overlap: a journey starting inside the new span, or the latest one starting
 *   before it, if it ends after the new start. Non-void journeys never overlap one another, so no
 *   earlier one can reach further.
 * - Touching end to start is no overlap, as before; the answer is 1 (taken), as before.
 *
 * Journeys are inserted only through `store_journey` (0011), so the rule covers every insert. Databases
 * migrated before this keep the btree_gist extension, which nothing uses any more: it may have been
 * created by the operator, and removing it needs its owner.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table journeys drop constraint if exists journeys_no_overlap`.execute(db);
  await sql`
    create or replace function store_journey(
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
      if exists (
          select 1 from journeys
          where policy_id = p_policy_id and start_at >= p_start_at and start_at < p_end_at and not is_void)
        or coalesce((
          select end_at > p_start_at from journeys
          where policy_id = p_policy_id and start_at < p_start_at and not is_void
          order by start_at desc limit 1), false) then
        return 1;
      end if;
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
}
