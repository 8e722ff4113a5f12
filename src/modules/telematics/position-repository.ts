/** A device's positions: stored a batch at a time, read back by time. */
import { sql } from 'kysely';
import { arrayLiteral } from '../../platform/db/array-literal.ts';
import type { Executor } from '../../schema.ts';
import type { PositionAttributes } from './rules/position-attributes.ts';
import type { PositionRow } from './rules/positions.ts';

/** What storing a batch did: how many positions were new and, when its device is offline, its silence. */
export interface StoredBatch {
  readonly accepted: number;
  /**
   * Null unless new positions were stored for a device found offline: then the silence it was found
   * offline after (null where that was not recorded) and its last position's time.
   */
  readonly offline: { readonly afterSeconds: number | null; readonly lastSeenAt: Date } | null;
}

const NOTHING_STORED: StoredBatch = { accepted: 0, offline: null };

/**
 * Stores a batch of a device's positions in one statement (array literals through unnest, so a batch binds
 * the same dozen parameters however many rows) and moves the device's `last_seen_at` forward. A position
 * whose device and second are stored already is skipped. Returns how many were new, and whether the
 * device, as its row stood when this statement updated it, was marked offline (only when some were new)
 * with what the caller needs to tell whether the batch ends its silence.
 */
export async function insertPositions(
  db: Executor,
  deviceRowId: string,
  rows: readonly PositionRow[],
  latestTimeS: number,
  receivedAt: Date,
): Promise<StoredBatch> {
  if (rows.length === 0) return NOTHING_STORED;
  const column = (value: (row: PositionRow) => string | number | boolean | null) => arrayLiteral(rows, value);
  const latest = new Date(latestTimeS * 1000);
  // Data-modifying CTEs run to completion whether or not the outer query reads them: one round trip.
  // The device row is touched only when something new was stored: it records what the trip cutting has
  // still to read (from the earliest new time) and that a batch came (which a cut running meanwhile sees).
  const result = await sql<{
    accepted: number;
    offline_after_seconds: number | null;
    last_seen_at: Date | null;
  }>`
    with inserted as (
      insert into positions (device_id, time, policy_id, lat, lon, speed_kmh, heading, accuracy_m, ignition,
        odometer_metres, received_at, attributes)
      select ${deviceRowId}::uuid, to_timestamp(t), p, la, lo, s, h, a, i, o, ${receivedAt}::timestamptz,
        x::jsonb
      from unnest(${column((r) => r.timeS)}::bigint[], ${column((r) => r.policyId)}::uuid[],
        ${column((r) => r.lat)}::float8[], ${column((r) => r.lon)}::float8[], ${column((r) => r.speedKmh)}::float4[],
        ${column((r) => r.heading)}::float4[], ${column((r) => r.accuracyM)}::float4[],
        ${column((r) => r.ignition)}::boolean[], ${column((r) => r.odometerMetres)}::bigint[],
        ${column((r) => (r.attributes === null ? null : JSON.stringify(r.attributes)))}::text[])
        as u (t, p, la, lo, s, h, a, i, o, x)
      on conflict do nothing
      returning time
    ), seen as (
      update devices set
        last_seen_at = greatest(last_seen_at, ${latest}::timestamptz),
        trips_pending_from = least(trips_pending_from, (select min(time) from inserted)),
        position_batches = position_batches + 1
      where id = ${deviceRowId}::uuid and exists (select 1 from inserted)
      returning offline_since, offline_after_seconds, last_seen_at
    )
    select (select count(*) from inserted)::int as accepted, seen.offline_after_seconds, seen.last_seen_at
    from (select 1) as one left join seen on seen.offline_since is not null`.execute(db);
  const row = result.rows[0];
  if (row === undefined) return NOTHING_STORED;
  return {
    accepted: row.accepted,
    offline:
      row.last_seen_at === null
        ? null
        : { afterSeconds: row.offline_after_seconds, lastSeenAt: row.last_seen_at },
  };
}

/** A position as stored: as it was assigned, its time as an instant, and when it was received. */
export interface StoredPosition extends Omit<PositionRow, 'timeS'> {
  readonly time: Date;
  readonly receivedAt: Date;
}

/**
 * A device's positions with `from` ≤ time ≤ `to`, time order, at most `limit`; their attributes only
 * when asked for (`attributes` is null otherwise: the trip cutting reads up to a week of positions and
 * needs none of them).
 */
export async function listPositions(
  db: Executor,
  deviceRowId: string,
  range: { from: Date; to: Date; limit: number; attributes?: boolean },
): Promise<StoredPosition[]> {
  const rows = await db
    .selectFrom('positions')
    .select([
      range.attributes === true ? 'attributes' : sql<PositionAttributes | null>`null`.as('attributes'),
      'time',
      'policy_id',
      'lat',
      'lon',
      'speed_kmh',
      'heading',
      'accuracy_m',
      'ignition',
      'odometer_metres',
      'received_at',
    ])
    .where('device_id', '=', deviceRowId)
    .where('time', '>=', range.from)
    .where('time', '<=', range.to)
    .orderBy('time')
    .limit(range.limit)
    .execute();
  return rows.map((r) => ({
    time: r.time,
    policyId: r.policy_id,
    lat: r.lat,
    lon: r.lon,
    speedKmh: r.speed_kmh,
    heading: r.heading,
    accuracyM: r.accuracy_m,
    ignition: r.ignition,
    odometerMetres: r.odometer_metres,
    attributes: r.attributes,
    receivedAt: r.received_at,
  }));
}

/** A stored position as the trip cutting reads it: its time in whole seconds, none of what it ignores. */
export interface TripSourcePosition {
  readonly timeS: number;
  readonly policyId: string;
  readonly lat: number;
  readonly lon: number;
  readonly speedKmh: number | null;
  readonly heading: number | null;
  readonly accuracyM: number | null;
  readonly ignition: boolean | null;
}

/**
 * A device's positions from `from` on, time order, at most `limit`, as the trip cutting takes them. It
 * reads an open trip again at every cut, up to a week of positions: the time comes as seconds, which pg
 * reads as a number, not as text it parses into a `Date`, and the receipt time, odometer and attributes
 * are not read at all.
 */
export async function listTripSourcePositions(
  db: Executor,
  deviceRowId: string,
  from: Date,
  limit: number,
): Promise<TripSourcePosition[]> {
  const rows = await db
    .selectFrom('positions')
    .select([
      sql<number>`extract(epoch from time)::float8`.as('time_s'),
      'policy_id',
      'lat',
      'lon',
      'speed_kmh',
      'heading',
      'accuracy_m',
      'ignition',
    ])
    .where('device_id', '=', deviceRowId)
    .where('time', '>=', from)
    .orderBy('time')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    timeS: r.time_s,
    policyId: r.policy_id,
    lat: r.lat,
    lon: r.lon,
    speedKmh: r.speed_kmh,
    heading: r.heading,
    accuracyM: r.accuracy_m,
    ignition: r.ignition,
  }));
}

/** The device's latest position at or before `at` (where an estimate says the vehicle was). */
export async function lastPositionBefore(
  db: Executor,
  deviceRowId: string,
  at: Date,
): Promise<{ lat: number; lon: number } | undefined> {
  return db
    .selectFrom('positions')
    .select(['lat', 'lon'])
    .where('device_id', '=', deviceRowId)
    .where('time', '<=', at)
    .orderBy('time', 'desc')
    .limit(1)
    .executeTakeFirst();
}
