import { sql, type Kysely } from 'kysely';

/**
 * Journeys that no client posted (issue 18): trips cut from a device's positions, estimates for days a
 * device was silent, and odometer reconciliations.
 *
 * - `source` says where a journey came from; `device_id` (the client's name for the device) and
 *   `gap_distance_metres` (distance bridged in a straight line across gaps in the data) belong to
 *   device trips.
 * - Estimates and reconciliations have no route (no points): their places are those last known, or null.
 * - A provider reference names one journey of a policy, as before, except that a device trip or an
 *   estimate replaced by a re-cut is voided and its replacement reuses the name (`device:{id}:{start}`
 *   stays the trip that starts then). So the unique key leaves out void journeys of those sources; a
 *   client's void journey keeps its name, and its repeat is still answered with it.
 * - A reconciliation takes no time (it starts and ends at the reading that showed the difference), and a
 *   journey of no duration overlaps nothing: store_journey skips the check for it and its probes pass
 *   over such journeys (both read only columns the index carries).
 * - Devices keep what the worker's trip cutting needs: the earliest time of positions not yet cut, a
 *   count of batches that lets it tell whether more came while it cut, a lease so that one worker cuts a
 *   device at a time, when it was last cut (a device streaming while it drives is cut at most every
 *   TRIP_RECUT_SECONDS, not at every batch), and the start of a trip still in progress. And what silent devices need: since
 *   when a device is offline, and the last London day estimated for it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table journeys
      add column source text not null default 'api',
      add column device_id text,
      add column gap_distance_metres bigint not null default 0,
      add constraint journeys_source check (source in ('api', 'device', 'estimate', 'odometer_reconciliation')),
      add constraint journeys_gap_distance check (gap_distance_metres >= 0 and gap_distance_metres <= distance_metres),
      drop constraint journeys_point_count_check,
      add constraint journeys_point_count check (
        (source in ('api', 'device') and point_count >= 2)
        or (source in ('estimate', 'odometer_reconciliation') and point_count = 0)),
      drop constraint journeys_end_after_start,
      add constraint journeys_end_after_start check (
        end_at > start_at or (source = 'odometer_reconciliation' and end_at = start_at)),
      alter column start_lat drop not null,
      alter column start_lng drop not null,
      alter column end_lat drop not null,
      alter column end_lng drop not null`.execute(db);
  await sql`alter table journeys drop constraint journeys_provider_reference_key`.execute(db);
  await sql`
    create unique index journeys_provider_reference_key on journeys (policy_id, provider_reference)
      where source = 'api' or not is_void`.execute(db);
  await sql`
    create index journeys_device_start_idx on journeys (company_id, environment, device_id, start_at)
      where device_id is not null`.execute(db);

  await sql`
    alter table devices
      add column trips_pending_from timestamptz,
      add column position_batches bigint not null default 0,
      add column trips_lease_until timestamptz,
      add column trips_cut_at timestamptz,
      add column open_trip_from timestamptz,
      add column offline_since timestamptz,
      add column estimated_through date`.execute(db);
  await sql`
    create index devices_trips_pending on devices (trips_pending_from)
      where trips_pending_from is not null or open_trip_from is not null`.execute(db);

  await sql`
    drop function store_journey(uuid, uuid, text, uuid, text, uuid, text, text, smallint, integer,
      timestamptz, timestamptz, bigint, text, numeric, bigint, double precision, double precision,
      double precision, double precision, text, text, text, text, timestamptz, integer, text, jsonb)`.execute(
    db,
  );
  await sql`
    create function store_journey(
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
