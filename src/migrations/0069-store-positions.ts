import { sql, type Kysely } from 'kysely';

/**
 * `device_bindings_key`: a device's bindings as one text (each binding's policy, start and end), which
 * changes whenever a binding is added or ended. A process that remembers a device's bindings keeps the
 * key read with them, and `store_positions` stores positions assigned on them only while it still holds.
 *
 * `store_positions`: a batch of a device's positions stored by the statement that stored them before
 * (array literals through unnest, `on conflict do nothing`), and, when some were new, the device's
 * `last_seen_at`, `trips_pending_from` and `position_batches` moved on. Given a bindings key that the
 * device's bindings no longer have, it stores nothing and returns `{"stale": true}` (the caller reads
 * the device again). Otherwise it returns json: `accepted`, and when the device row it updated is
 * offline, its `offline_after_seconds` and its `last_seen_at` after the update as epoch milliseconds
 * (`last_seen_ms`). Both owned by the telematics module (position-repository.ts, telematics-repository.ts).
 *
 * NOTE: a function so that batches arriving together on a worker's connections are stored by one
 * statement of calls (`batchedCalls`): one round trip, one parse and one commit for all of them, each
 * call still its own unit of work, and PostgreSQL plans its statements once per connection. The key
 * spares the read of the device and its bindings that each batch paid before it (a second round trip).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function device_bindings_key(p_device_id uuid) returns text language sql stable as $$
      select coalesce(string_agg(policy_id::text || ' ' || extract(epoch from bound_at)::text || ' '
          || coalesce(extract(epoch from unbound_at)::text, '-'), ',' order by bound_at, id), '')
      from device_bindings
      where device_id = p_device_id
    $$`.execute(db);
  await sql`
    create function store_positions(
      p_device_id uuid, p_bindings_key text, p_received_at timestamptz, p_latest timestamptz,
      p_times bigint[], p_policy_ids uuid[], p_lats float8[], p_lons float8[], p_speeds float4[],
      p_headings float4[], p_accuracies float4[], p_ignitions boolean[], p_odometers bigint[],
      p_attributes text[]
    ) returns json language plpgsql as $$
    declare
      v_accepted integer;
      v_earliest timestamptz;
      v_offline_since timestamptz;
      v_after integer;
      v_last_seen timestamptz;
    begin
      if p_bindings_key is not null and p_bindings_key <> device_bindings_key(p_device_id) then
        return json_build_object('stale', true);
      end if;
      with inserted as (
        insert into positions (device_id, time, policy_id, lat, lon, speed_kmh, heading, accuracy_m,
          ignition, odometer_metres, received_at, attributes)
        select p_device_id, to_timestamp(t), p, la, lo, s, h, a, i, o, p_received_at, x::jsonb
        from unnest(p_times, p_policy_ids, p_lats, p_lons, p_speeds, p_headings, p_accuracies, p_ignitions,
          p_odometers, p_attributes) as u (t, p, la, lo, s, h, a, i, o, x)
        on conflict do nothing
        returning time
      )
      select count(*)::int, min(time) into v_accepted, v_earliest from inserted;
      if v_accepted = 0 then
        return json_build_object('accepted', 0);
      end if;
      -- What the trip cutting has still to read (from the earliest new time), and that a batch came
      -- (which a cut running meanwhile sees).
      update devices set
        last_seen_at = greatest(last_seen_at, p_latest),
        trips_pending_from = least(trips_pending_from, v_earliest),
        position_batches = position_batches + 1
      where id = p_device_id
      returning offline_since, offline_after_seconds, last_seen_at
      into v_offline_since, v_after, v_last_seen;
      if v_offline_since is null then
        return json_build_object('accepted', v_accepted);
      end if;
      return json_build_object('accepted', v_accepted, 'offline_after_seconds', v_after,
        'last_seen_ms', extract(epoch from v_last_seen) * 1000);
    end $$`.execute(db);
}
