import { sql, type Generated } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { PositionRow } from './rules/positions.ts';

export type DeviceKind = 'obd' | 'connected_car' | 'phone';

export interface TelematicsTables {
  devices: {
    id: Generated<string>;
    company_id: string;
    environment: string;
    device_id: string;
    kind: DeviceKind;
    vin: string | null;
    last_seen_at: Date | null;
    created_at: Date;
    updated_at: Date;
  };
  device_bindings: {
    id: Generated<string>;
    device_id: string;
    policy_id: string;
    policy_reference: string;
    bound_at: Date;
    unbound_at: Date | null;
  };
  positions: {
    device_id: string;
    time: Date;
    policy_id: string;
    lat: number;
    lon: number;
    speed_kmh: number | null;
    heading: number | null;
    accuracy_m: number | null;
    ignition: boolean | null;
    odometer_metres: number | null;
    received_at: Date;
  };
}

export interface BindingRecord {
  readonly policyId: string;
  readonly policyReference: string;
  readonly boundAt: Date;
  readonly unboundAt: Date | null;
}

export interface DeviceRecord {
  /** The row id (positions refer to it). */
  readonly id: string;
  readonly deviceId: string;
  readonly kind: DeviceKind;
  readonly vin: string | null;
  readonly lastSeenAt: Date | null;
  readonly createdAt: Date;
  /** Oldest first. */
  readonly bindings: readonly BindingRecord[];
}

const tenantDevices = (db: Executor, tenant: Tenant) =>
  db
    .selectFrom('devices')
    .where('devices.company_id', '=', tenant.companyId)
    .where('devices.environment', '=', tenant.environment);

const deviceColumns = ['id', 'device_id', 'kind', 'vin', 'last_seen_at', 'created_at'] as const;

async function withBindings(
  db: Executor,
  rows: ReadonlyArray<{
    id: string;
    device_id: string;
    kind: DeviceKind;
    vin: string | null;
    last_seen_at: Date | null;
    created_at: Date;
  }>,
): Promise<DeviceRecord[]> {
  if (rows.length === 0) return [];
  const bindings = await db
    .selectFrom('device_bindings')
    .select(['device_id', 'policy_id', 'policy_reference', 'bound_at', 'unbound_at'])
    .where(
      'device_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('bound_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    deviceId: row.device_id,
    kind: row.kind,
    vin: row.vin,
    lastSeenAt: row.last_seen_at,
    createdAt: row.created_at,
    bindings: bindings
      .filter((b) => b.device_id === row.id)
      .map((b) => ({
        policyId: b.policy_id,
        policyReference: b.policy_reference,
        boundAt: b.bound_at,
        unboundAt: b.unbound_at,
      })),
  }));
}

/** The tenant's device with its bindings; undefined when it has none of that id. `lock` holds its row. */
export async function findDevice(
  db: Executor,
  tenant: Tenant,
  deviceId: string,
  lock = false,
): Promise<DeviceRecord | undefined> {
  let query = tenantDevices(db, tenant).select(deviceColumns).where('device_id', '=', deviceId);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : (await withBindings(db, [row]))[0];
}

/** The tenant's devices by `device_id`, after `after`; only those ever bound to `policyId` when given. */
export async function listDevices(
  db: Executor,
  tenant: Tenant,
  options: { policyId?: string; limit: number; after?: string },
): Promise<DeviceRecord[]> {
  let query = tenantDevices(db, tenant).select(deviceColumns).orderBy('device_id').limit(options.limit);
  if (options.after !== undefined) query = query.where('device_id', '>', options.after);
  const { policyId } = options;
  if (policyId !== undefined)
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('device_bindings')
          .select(sql.lit(1).as('one'))
          .whereRef('device_bindings.device_id', '=', 'devices.id')
          .where('device_bindings.policy_id', '=', policyId),
      ),
    );
  return withBindings(db, await query.execute());
}

/** Creates the device or updates its kind and VIN; returns its row id, locked for the binding change. */
export async function upsertDevice(
  db: Executor,
  tenant: Tenant,
  values: { deviceId: string; kind: DeviceKind; vin: string | null; at: Date },
): Promise<string> {
  const row = await db
    .insertInto('devices')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      device_id: values.deviceId,
      kind: values.kind,
      vin: values.vin,
      created_at: values.at,
      updated_at: values.at,
    })
    .onConflict((oc) =>
      oc
        .constraint('devices_device_id_key')
        .doUpdateSet({ kind: values.kind, vin: values.vin, updated_at: values.at }),
    )
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Ends the open bindings of a device and of a policy (either may be omitted) at `at`. */
export async function endOpenBindings(
  db: Executor,
  which: { deviceRowId?: string; policyId?: string },
  at: Date,
): Promise<Array<{ deviceRowId: string; policyReference: string }>> {
  const { deviceRowId, policyId } = which;
  if (deviceRowId === undefined && policyId === undefined) return [];
  const rows = await db
    .updateTable('device_bindings')
    .set({ unbound_at: at })
    .where('unbound_at', 'is', null)
    .where((eb) =>
      eb.or([
        ...(deviceRowId === undefined ? [] : [eb('device_id', '=', deviceRowId)]),
        ...(policyId === undefined ? [] : [eb('policy_id', '=', policyId)]),
      ]),
    )
    .returning(['device_id', 'policy_reference'])
    .execute();
  return rows.map((r) => ({ deviceRowId: r.device_id, policyReference: r.policy_reference }));
}

export async function insertBinding(
  db: Executor,
  values: { deviceRowId: string; policyId: string; policyReference: string; at: Date },
): Promise<void> {
  await db
    .insertInto('device_bindings')
    .values({
      device_id: values.deviceRowId,
      policy_id: values.policyId,
      policy_reference: values.policyReference,
      bound_at: values.at,
      unbound_at: null,
    })
    .execute();
}

/** The `device_id` of a device row (for events about a device whose binding another one ended). */
export async function deviceIdsOf(db: Executor, rowIds: readonly string[]): Promise<Map<string, string>> {
  if (rowIds.length === 0) return new Map();
  const rows = await db.selectFrom('devices').select(['id', 'device_id']).where('id', 'in', rowIds).execute();
  return new Map(rows.map((r) => [r.id, r.device_id]));
}

/**
 * Stores a batch of a device's positions in one statement (arrays through unnest, so a batch binds the
 * same dozen parameters however many rows) and moves the device's `last_seen_at` forward. A position
 * whose device and second are stored already is skipped. Returns how many were new.
 */
export async function insertPositions(
  db: Executor,
  deviceRowId: string,
  rows: readonly PositionRow[],
  latestTimeS: number,
  receivedAt: Date,
): Promise<number> {
  if (rows.length === 0) return 0;
  const column = <K extends keyof PositionRow>(key: K) => rows.map((row) => row[key]);
  const latest = new Date(latestTimeS * 1000);
  // Data-modifying CTEs run to completion whether or not the outer query reads them: one round trip.
  const result = await sql<{ accepted: number }>`
    with inserted as (
      insert into positions (device_id, time, policy_id, lat, lon, speed_kmh, heading, accuracy_m, ignition,
        odometer_metres, received_at)
      select ${deviceRowId}::uuid, to_timestamp(t), p, la, lo, s, h, a, i, o, ${receivedAt}::timestamptz
      from unnest(${column('timeS')}::bigint[], ${column('policyId')}::uuid[], ${column('lat')}::float8[],
        ${column('lon')}::float8[], ${column('speedKmh')}::float4[], ${column('heading')}::float4[],
        ${column('accuracyM')}::float4[], ${column('ignition')}::boolean[], ${column('odometerMetres')}::bigint[])
        as u (t, p, la, lo, s, h, a, i, o)
      on conflict do nothing
      returning 1
    ), seen as (
      update devices set last_seen_at = ${latest}::timestamptz
      where id = ${deviceRowId}::uuid and (last_seen_at is null or last_seen_at < ${latest}::timestamptz)
      returning 1
    )
    select (select count(*) from inserted)::int as accepted`.execute(db);
  return result.rows[0]?.accepted ?? 0;
}

/** A position as stored: as it was assigned, its time as an instant, and when it was received. */
export interface StoredPosition extends Omit<PositionRow, 'timeS'> {
  readonly time: Date;
  readonly receivedAt: Date;
}

/** A device's positions with `from` ≤ time ≤ `to`, time order, at most `limit`. */
export async function listPositions(
  db: Executor,
  deviceRowId: string,
  range: { from: Date; to: Date; limit: number },
): Promise<StoredPosition[]> {
  const rows = await db
    .selectFrom('positions')
    .select([
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
    receivedAt: r.received_at,
  }));
}
