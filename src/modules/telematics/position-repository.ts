/** A device's positions: stored a batch at a time, read back by time. */
import { sql } from 'kysely';
import { arrayLiteral } from '../../platform/db/array-literal.ts';
import type { BatchedCall } from '../../platform/db/batched-calls.ts';
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

/** `store_positions`'s arguments (migration 0069). */
export const STORE_POSITIONS_ARITY = 14;

/**
 * Stores a batch of a device's positions through `store_positions` (migration 0069), one call (array
 * literals through unnest, so a batch binds the same parameters however many rows), which also moves the
 * device's `last_seen_at` forward. The call goes with the others arriving meanwhile (`batchedCalls`: one
 * statement, one commit), locking the device's row in the order of device row ids. A position whose
 * device and second are stored already is skipped. Returns how many were new, and whether the device, as
 * its row stood when the call updated it, was marked offline (only when some were new) with what the
 * caller needs to tell whether the batch ends its silence. With `bindingsKey` (null: no check), the rows
 * were assigned on bindings remembered with that key: when the device's bindings no longer have it,
 * nothing is stored and this answers 'STALE'.
 */
export async function insertPositions(
  storePositions: BatchedCall,
  deviceRowId: string,
  bindingsKey: string | null,
  rows: readonly PositionRow[],
  latestTimeS: number,
  receivedAt: Date,
): Promise<StoredBatch | 'STALE'> {
  if (rows.length === 0) return NOTHING_STORED;
  const column = (value: (row: PositionRow) => string | number | boolean | null) => arrayLiteral(rows, value);
  const stored = (await storePositions(
    [
      deviceRowId,
      bindingsKey,
      receivedAt,
      new Date(latestTimeS * 1000),
      column((r) => r.timeS),
      column((r) => r.policyId),
      column((r) => r.lat),
      column((r) => r.lon),
      column((r) => r.speedKmh),
      column((r) => r.heading),
      column((r) => r.accuracyM),
      column((r) => r.ignition),
      column((r) => r.odometerMetres),
      column((r) => (r.attributes === null ? null : JSON.stringify(r.attributes))),
    ],
    deviceRowId,
  )) as {
    accepted: number;
    offline_after_seconds?: number | null;
    last_seen_ms?: number;
    stale?: true;
  } | null;
  if (stored === null) return NOTHING_STORED;
  if (stored.stale === true) return 'STALE';
  return {
    accepted: stored.accepted,
    offline:
      stored.last_seen_ms === undefined
        ? null
        : { afterSeconds: stored.offline_after_seconds ?? null, lastSeenAt: new Date(stored.last_seen_ms) },
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
