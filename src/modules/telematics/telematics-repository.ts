import { sql, type Generated } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { CrashTables } from './crash-repository.ts';
import type { PositionAttributes } from './rules/position-attributes.ts';

export type DeviceKind = 'obd' | 'connected_car' | 'phone';
/** Where an odometer reading came from. */
export type OdometerSource = 'connected_car' | 'photo' | 'mot';

export interface TelematicsTables extends CrashTables {
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
    trips_pending_from: Date | null;
    position_batches: Generated<number>;
    trips_lease_until: Date | null;
    /** The pass holding the trip-cutting lease (migration 0038). */
    trips_lease_id: string | null;
    trips_cut_at: Date | null;
    open_trip_from: Date | null;
    offline_since: Date | null;
    /** The silence after which it was found offline (migration 0067); null while online. */
    offline_after_seconds: number | null;
    /** The last London day (`YYYY-MM-DD`) given an estimate while the device was silent. */
    estimated_through: string | null;
  };
  device_bindings: {
    id: Generated<string>;
    device_id: string;
    policy_id: string;
    policy_reference: string;
    bound_at: Date;
    unbound_at: Date | null;
  };
  /** Odometer readings of policies (migration 0026), one a policy and second. */
  odometer_readings: {
    id: Generated<string>;
    company_id: string;
    environment: string;
    policy_id: string;
    device_id: string | null;
    reading_metres: number;
    time: Date;
    source: OdometerSource;
    created_at: Date;
  };
  /** A company's choice to delete trips' raw positions once they are cut and scored (migration 0056). */
  telematics_settings: {
    company_id: string;
    minimise_positions: boolean;
    updated_at: Date;
  };
  /** The span of a trip whose raw positions were deleted: late positions inside it are dropped. */
  minimised_trips: {
    device_id: string;
    start_at: Date;
    end_at: Date;
    positions_deleted: number;
    minimised_at: Date;
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
    /** The position's other fields (migration 0038); null when it sent none. */
    attributes: PositionAttributes | null;
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
  /** Set by the worker while the device is silent (rules/silent-devices.ts). */
  readonly offlineSince: Date | null;
  readonly createdAt: Date;
  /** Oldest first. */
  readonly bindings: readonly BindingRecord[];
}

const tenantDevices = (db: Executor, tenant: Tenant) =>
  db.selectFrom('devices').where(forTenant(tenant, 'devices'));

/**
 * A device's columns with its bindings (oldest first) in the same row, as JSON: one round trip a
 * device, which position ingestion pays on every batch.
 */
const deviceWithBindings = (db: Executor, tenant: Tenant) =>
  tenantDevices(db, tenant).select((eb) => [
    'devices.id',
    'devices.device_id',
    'devices.kind',
    'devices.vin',
    'devices.last_seen_at',
    'devices.offline_since',
    'devices.created_at',
    jsonArrayFrom(
      eb
        .selectFrom('device_bindings')
        .select(['policy_id', 'policy_reference', 'bound_at', 'unbound_at'])
        .whereRef('device_bindings.device_id', '=', 'devices.id')
        .orderBy('bound_at')
        .orderBy('id'),
    ).as('bindings'),
  ]);

type DeviceRow = {
  id: string;
  device_id: string;
  kind: DeviceKind;
  vin: string | null;
  last_seen_at: Date | null;
  offline_since: Date | null;
  created_at: Date;
  // In JSON, instants are text.
  bindings: Array<{
    policy_id: string;
    policy_reference: string;
    bound_at: string | Date;
    unbound_at: string | Date | null;
  }>;
};

const toDevice = (row: DeviceRow): DeviceRecord => ({
  id: row.id,
  deviceId: row.device_id,
  kind: row.kind,
  vin: row.vin,
  lastSeenAt: row.last_seen_at,
  offlineSince: row.offline_since,
  createdAt: row.created_at,
  bindings: row.bindings.map((b) => ({
    policyId: b.policy_id,
    policyReference: b.policy_reference,
    boundAt: new Date(b.bound_at),
    unboundAt: b.unbound_at === null ? null : new Date(b.unbound_at),
  })),
});

/** The tenant's device with its bindings; undefined when it has none of that id. `lock` holds its row. */
export async function findDevice(
  db: Executor,
  tenant: Tenant,
  deviceId: string,
  lock = false,
): Promise<DeviceRecord | undefined> {
  let query = deviceWithBindings(db, tenant).where('devices.device_id', '=', deviceId);
  if (lock) query = query.forUpdate('devices');
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : toDevice(row);
}

/** A device with its bindings and their key (`device_bindings_key`, migration 0069), read together. */
export interface KeyedDevice {
  readonly device: DeviceRecord;
  /** Changes whenever a binding is added or ended: `store_positions` checks it. */
  readonly bindingsKey: string;
}

/** The tenant's device with its bindings and their key, for storing positions; undefined when it has none. */
export async function findDeviceForPositions(
  db: Executor,
  tenant: Tenant,
  deviceId: string,
): Promise<KeyedDevice | undefined> {
  const row = await deviceWithBindings(db, tenant)
    .select(sql<string>`device_bindings_key(devices.id)`.as('bindings_key'))
    .where('devices.device_id', '=', deviceId)
    .executeTakeFirst();
  return row === undefined ? undefined : { device: toDevice(row), bindingsKey: row.bindings_key };
}

/** The tenant's devices by `device_id`, after `after`; only those ever bound to `policyId` when given. */
export async function listDevices(
  db: Executor,
  tenant: Tenant,
  options: { policyId?: string; offline?: boolean; limit: number; after?: string },
): Promise<DeviceRecord[]> {
  let query = deviceWithBindings(db, tenant).orderBy('devices.device_id').limit(options.limit);
  // Offline: bound, and silent past its product's after_hours (the silent-devices job sets offline_since).
  if (options.offline === true)
    query = query
      .where('devices.offline_since', 'is not', null)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('device_bindings')
            .select(sql.lit(1).as('one'))
            .whereRef('device_bindings.device_id', '=', 'devices.id')
            .where('device_bindings.unbound_at', 'is', null),
        ),
      );
  if (options.after !== undefined) query = query.where('devices.device_id', '>', options.after);
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
  return (await query.execute()).map(toDevice);
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
