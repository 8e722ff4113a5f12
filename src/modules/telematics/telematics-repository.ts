import { sql, type Generated } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { PositionAttributes } from './rules/position-attributes.ts';
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
    trips_pending_from: Date | null;
    position_batches: Generated<number>;
    trips_lease_until: Date | null;
    /** The pass holding the trip-cutting lease (migration 0039). */
    trips_lease_id: string | null;
    trips_cut_at: Date | null;
    open_trip_from: Date | null;
    offline_since: Date | null;
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
    /** The position's other fields (migration 0039); null when it sent none. */
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
  db
    .selectFrom('devices')
    .where('devices.company_id', '=', tenant.companyId)
    .where('devices.environment', '=', tenant.environment);

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

/**
 * Stores a batch of a device's positions in one statement (arrays through unnest, so a batch binds the
 * same dozen parameters however many rows) and moves the device's `last_seen_at` forward. A position
 * whose device and second are stored already is skipped. Returns how many were new, and whether the
 * device, as its row stood when this statement updated it, was marked offline (only when some were new).
 */
export async function insertPositions(
  db: Executor,
  deviceRowId: string,
  rows: readonly PositionRow[],
  latestTimeS: number,
  receivedAt: Date,
): Promise<{ accepted: number; offline: boolean }> {
  if (rows.length === 0) return { accepted: 0, offline: false };
  const column = <K extends keyof PositionRow>(key: K) => rows.map((row) => row[key]);
  // jsonb through text: a JS array of objects is not a PostgreSQL array to pg (STACK-NOTES).
  const attributes = rows.map((row) => (row.attributes === null ? null : JSON.stringify(row.attributes)));
  const latest = new Date(latestTimeS * 1000);
  // Data-modifying CTEs run to completion whether or not the outer query reads them: one round trip.
  // The device row is touched only when something new was stored: it records what the trip cutting has
  // still to read (from the earliest new time) and that a batch came (which a cut running meanwhile sees).
  const result = await sql<{ accepted: number; offline: boolean }>`
    with inserted as (
      insert into positions (device_id, time, policy_id, lat, lon, speed_kmh, heading, accuracy_m, ignition,
        odometer_metres, received_at, attributes)
      select ${deviceRowId}::uuid, to_timestamp(t), p, la, lo, s, h, a, i, o, ${receivedAt}::timestamptz,
        x::jsonb
      from unnest(${column('timeS')}::bigint[], ${column('policyId')}::uuid[], ${column('lat')}::float8[],
        ${column('lon')}::float8[], ${column('speedKmh')}::float4[], ${column('heading')}::float4[],
        ${column('accuracyM')}::float4[], ${column('ignition')}::boolean[], ${column('odometerMetres')}::bigint[],
        ${attributes}::text[])
        as u (t, p, la, lo, s, h, a, i, o, x)
      on conflict do nothing
      returning time
    ), seen as (
      update devices set
        last_seen_at = greatest(last_seen_at, ${latest}::timestamptz),
        trips_pending_from = least(trips_pending_from, (select min(time) from inserted)),
        position_batches = position_batches + 1
      where id = ${deviceRowId}::uuid and exists (select 1 from inserted)
      returning offline_since
    )
    select (select count(*) from inserted)::int as accepted,
      exists (select 1 from seen where offline_since is not null) as offline`.execute(db);
  const row = result.rows[0];
  return { accepted: row?.accepted ?? 0, offline: row?.offline ?? false };
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

/** A device with positions not yet cut into trips, or a trip in progress that may have ended. */
export interface PendingDevice {
  readonly id: string;
  readonly companyId: string;
  readonly environment: string;
  readonly deviceId: string;
  /** The earliest time among positions stored since the last cut. */
  readonly pendingFrom: Date | null;
  /** Batches stored so far: the cut is done only if none came while it ran. */
  readonly positionBatches: number;
  readonly openTripFrom: Date | null;
}

/**
 * Leases up to `limit` devices whose trips need cutting to the pass `leaseId` until `leaseUntil`, so that
 * one worker cuts a device at a time (the pass renews its lease while it works; one a killed worker held
 * runs out at its `leaseUntil`): those with new positions, unless they were cut
 * less than `recutS` ago and are still reporting (a device streaming while it drives would otherwise be
 * cut again at every batch, rereading its trip so far each time); and those with a trip in progress whose
 * device has been still for `idleS`.
 */
export async function leasePendingDevices(
  db: Executor,
  now: Date,
  options: { idleS: number; recutS: number; leaseId: string; leaseUntil: Date; limit: number },
): Promise<PendingDevice[]> {
  const idleBefore = new Date(now.getTime() - options.idleS * 1000);
  const cutBefore = new Date(now.getTime() - options.recutS * 1000);
  const result = await sql<{
    id: string;
    company_id: string;
    environment: string;
    device_id: string;
    trips_pending_from: Date | null;
    position_batches: number;
    open_trip_from: Date | null;
  }>`
    update devices set trips_lease_until = ${options.leaseUntil}, trips_lease_id = ${options.leaseId}
    where id in (
      select id from devices
      where ((trips_pending_from is not null
            and (trips_cut_at is null or trips_cut_at <= ${cutBefore} or last_seen_at <= ${idleBefore}))
          or (open_trip_from is not null and (last_seen_at is null or last_seen_at <= ${idleBefore})))
        and (trips_lease_until is null or trips_lease_until < ${now})
      order by trips_pending_from nulls last
      limit ${options.limit}
      for update skip locked)
    returning id, company_id, environment, device_id, trips_pending_from, position_batches, open_trip_from`.execute(
    db,
  );
  return result.rows.map((r) => ({
    id: r.id,
    companyId: r.company_id,
    environment: r.environment,
    deviceId: r.device_id,
    pendingFrom: r.trips_pending_from,
    positionBatches: r.position_batches,
    openTripFrom: r.open_trip_from,
  }));
}

/**
 * The heartbeat of the pass `leaseId`: moves the end of its leases on `deviceRowIds` to `leaseUntil`.
 * Returns the devices it still holds (a lease that lapsed and was taken by another pass is not renewed).
 */
export async function renewTripLeases(
  db: Executor,
  leaseId: string,
  deviceRowIds: readonly string[],
  leaseUntil: Date,
): Promise<Set<string>> {
  if (deviceRowIds.length === 0) return new Set();
  const rows = await db
    .updateTable('devices')
    .set({ trips_lease_until: leaseUntil })
    .where('id', 'in', [...deviceRowIds])
    .where('trips_lease_id', '=', leaseId)
    .returning('id')
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * Ends the pass's lease on a device after a cut: its pending positions are done unless more batches
 * came meanwhile (then they wait for the next pass, from the same time or earlier). Nothing changes when
 * the lease is no longer the pass's (it lapsed and another pass took the device: that one decides).
 */
export async function finishTripCut(
  db: Executor,
  device: PendingDevice,
  leaseId: string,
  openTripFrom: Date | null,
  at: Date,
): Promise<void> {
  await sql`
    update devices set
      trips_cut_at = ${at},
      trips_pending_from = case when position_batches = ${device.positionBatches} then null
        else trips_pending_from end,
      open_trip_from = ${openTripFrom},
      trips_lease_until = null,
      trips_lease_id = null
    where id = ${device.id} and trips_lease_id = ${leaseId}`.execute(db);
}

/** Gives the pass's leases back (a failed cut, a pass stopped early), so the next pass tries them again. */
export async function releaseTripLeases(
  db: Executor,
  leaseId: string,
  deviceRowIds: readonly string[],
): Promise<void> {
  if (deviceRowIds.length === 0) return;
  await db
    .updateTable('devices')
    .set({ trips_lease_until: null, trips_lease_id: null })
    .where('id', 'in', [...deviceRowIds])
    .where('trips_lease_id', '=', leaseId)
    .execute();
}

/** The device's trip journeys (not void) from `from` on: those starting then or later, or ending after. */
export async function tripJourneysFrom(
  db: Executor,
  device: { companyId: string; environment: string; deviceId: string },
  from: Date,
): Promise<Array<{ id: string; policyId: string; startAt: Date; endAt: Date; route: string }>> {
  const rows = await db
    .selectFrom('journeys')
    .select(['id', 'policy_id', 'start_at', 'end_at', 'route'])
    .where('company_id', '=', device.companyId)
    .where('environment', '=', device.environment)
    .where('device_id', '=', device.deviceId)
    .where('source', '=', 'device')
    .where('is_void', '=', false)
    .where('end_at', '>=', from)
    .orderBy('start_at')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    policyId: r.policy_id,
    startAt: r.start_at,
    endAt: r.end_at,
    route: r.route,
  }));
}

/** The device's estimates (not void) for some London days, by the names they were given. */
export async function estimatesNamed(
  db: Executor,
  device: { companyId: string; environment: string; deviceId: string },
  providerReferences: readonly string[],
): Promise<Array<{ id: string; policyId: string }>> {
  if (providerReferences.length === 0) return [];
  const rows = await db
    .selectFrom('journeys')
    .select(['id', 'policy_id'])
    .where('company_id', '=', device.companyId)
    .where('environment', '=', device.environment)
    .where('device_id', '=', device.deviceId)
    .where('source', '=', 'estimate')
    .where('is_void', '=', false)
    .where('provider_reference', 'in', providerReferences)
    .execute();
  return rows.map((r) => ({ id: r.id, policyId: r.policy_id }));
}

/** A bound device of an active policy that is silent, or was found offline. */
export interface SilentCandidate {
  readonly id: string;
  readonly companyId: string;
  readonly environment: string;
  readonly deviceId: string;
  readonly lastSeenAt: Date | null;
  readonly offlineSince: Date | null;
  readonly estimatedThrough: string | null;
  readonly boundAt: Date;
  readonly policyId: string;
  readonly policyReference: string;
  readonly productReference: string | null;
  readonly userId: string;
}

/**
 * Bound devices of active policies that have sent nothing since `silentBefore` (nor been bound since),
 * and those marked offline (which may have come back), after the device row id `after`. NOTE: a scan of
 * the open bindings, run once a minute by one worker at a time (a pg-boss queue of policy `stately`).
 */
export async function silentCandidates(
  db: Executor,
  silentBefore: Date,
  page: { after: string; limit: number },
): Promise<SilentCandidate[]> {
  const { after, limit } = page;
  const rows = await sql<{
    id: string;
    company_id: string;
    environment: string;
    device_id: string;
    last_seen_at: Date | null;
    offline_since: Date | null;
    estimated_through: string | null;
    bound_at: Date;
    policy_id: string;
    policy_reference: string;
    product_reference: string | null;
    user_id: string;
  }>`
    select d.id, d.company_id, d.environment, d.device_id, d.last_seen_at, d.offline_since,
      d.estimated_through, b.bound_at, p.id as policy_id, p.policy_reference, p.product_reference, p.user_id
    from device_bindings b
    join devices d on d.id = b.device_id
    join policies p on p.id = b.policy_id
    where b.unbound_at is null and p.status = 'active' and d.id > ${after}
      and (d.offline_since is not null or greatest(d.last_seen_at, b.bound_at) < ${silentBefore})
    order by d.id
    limit ${limit}`.execute(db);
  return rows.rows.map((r) => ({
    id: r.id,
    companyId: r.company_id,
    environment: r.environment,
    deviceId: r.device_id,
    lastSeenAt: r.last_seen_at,
    offlineSince: r.offline_since,
    estimatedThrough: r.estimated_through,
    boundAt: r.bound_at,
    policyId: r.policy_id,
    policyReference: r.policy_reference,
    productReference: r.product_reference,
    userId: r.user_id,
  }));
}

/** Records a device's silence: since when it is offline (null: online), the last day estimated. */
export async function updateDeviceSilence(
  db: Executor,
  deviceRowId: string,
  values: { offlineSince?: Date | null; estimatedThrough?: string },
): Promise<void> {
  await db
    .updateTable('devices')
    .set({
      ...(values.offlineSince === undefined ? {} : { offline_since: values.offlineSince }),
      ...(values.estimatedThrough === undefined ? {} : { estimated_through: values.estimatedThrough }),
    })
    .where('id', '=', deviceRowId)
    .execute();
}

/**
 * Marks a device offline from `at`, unless it was meanwhile: marked so already, or seen since the pass
 * read it (`lastSeenAt`, as read). Returns whether it did.
 */
export async function markDeviceOffline(
  db: Executor,
  deviceRowId: string,
  values: { at: Date; lastSeenAt: Date | null },
): Promise<boolean> {
  const rows = await sql`
    update devices set offline_since = ${values.at}
    where id = ${deviceRowId} and offline_since is null
      and last_seen_at is not distinct from ${values.lastSeenAt}::timestamptz
    returning id`.execute(db);
  return rows.rows.length > 0;
}

/** Marks an offline device online; false when it was not offline (another pass or a report did it). */
export async function markDeviceOnline(db: Executor, deviceRowId: string): Promise<boolean> {
  const row = await db
    .updateTable('devices')
    .set({ offline_since: null })
    .where('id', '=', deviceRowId)
    .where('offline_since', 'is not', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * A device that has just stored positions, with its open binding and that binding's policy, its row
 * locked until the caller's transaction ends; undefined when it has no open binding.
 */
export async function lockReportingDevice(
  db: Executor,
  deviceRowId: string,
): Promise<Omit<SilentCandidate, 'userId'> | undefined> {
  const result = await sql<{
    id: string;
    company_id: string;
    environment: string;
    device_id: string;
    last_seen_at: Date | null;
    offline_since: Date | null;
    estimated_through: string | null;
    bound_at: Date;
    policy_id: string;
    policy_reference: string;
    product_reference: string | null;
  }>`
    select d.id, d.company_id, d.environment, d.device_id, d.last_seen_at, d.offline_since,
      d.estimated_through, b.bound_at, p.id as policy_id, p.policy_reference, p.product_reference
    from devices d
    join device_bindings b on b.device_id = d.id and b.unbound_at is null
    join policies p on p.id = b.policy_id
    where d.id = ${deviceRowId}
    for update of d`.execute(db);
  const r = result.rows[0];
  return r === undefined
    ? undefined
    : {
        id: r.id,
        companyId: r.company_id,
        environment: r.environment,
        deviceId: r.device_id,
        lastSeenAt: r.last_seen_at,
        offlineSince: r.offline_since,
        estimatedThrough: r.estimated_through,
        boundAt: r.bound_at,
        policyId: r.policy_id,
        policyReference: r.policy_reference,
        productReference: r.product_reference,
      };
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

export interface OdometerReadingRecord {
  readonly id: string;
  readonly policyId: string;
  readonly deviceId: string | null;
  readonly readingMetres: number;
  readonly time: Date;
  readonly source: OdometerSource;
  readonly createdAt: Date;
}

export type OdometerSource = 'connected_car' | 'photo' | 'mot';

const readingColumns = [
  'id',
  'policy_id',
  'device_id',
  'reading_metres',
  'time',
  'source',
  'created_at',
] as const;

const toReading = (r: {
  id: string;
  policy_id: string;
  device_id: string | null;
  reading_metres: number;
  time: Date;
  source: OdometerSource;
  created_at: Date;
}): OdometerReadingRecord => ({
  id: r.id,
  policyId: r.policy_id,
  deviceId: r.device_id,
  readingMetres: r.reading_metres,
  time: r.time,
  source: r.source,
  createdAt: r.created_at,
});

/** Stores a policy's reading; undefined when the policy has one for that second already. */
export async function insertOdometerReading(
  db: Executor,
  tenant: Tenant,
  values: {
    policyId: string;
    deviceId: string | null;
    readingMetres: number;
    time: Date;
    source: OdometerSource;
    at: Date;
  },
): Promise<OdometerReadingRecord | undefined> {
  const row = await db
    .insertInto('odometer_readings')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      policy_id: values.policyId,
      device_id: values.deviceId,
      reading_metres: values.readingMetres,
      time: values.time,
      source: values.source,
      created_at: values.at,
    })
    .onConflict((oc) => oc.constraint('odometer_readings_policy_time_key').doNothing())
    .returning(readingColumns)
    .executeTakeFirst();
  return row === undefined ? undefined : toReading(row);
}

/** The policy's reading at a second, or the nearest before and after it (either may be absent). */
export async function readingsNear(
  db: Executor,
  policyId: string,
  time: Date,
): Promise<{
  at: OdometerReadingRecord | undefined;
  before: OdometerReadingRecord | undefined;
  after: OdometerReadingRecord | undefined;
}> {
  const of = () =>
    db.selectFrom('odometer_readings').select(readingColumns).where('policy_id', '=', policyId);
  const at = await of().where('time', '=', time).executeTakeFirst();
  const before = await of().where('time', '<', time).orderBy('time', 'desc').limit(1).executeTakeFirst();
  const after = await of().where('time', '>', time).orderBy('time').limit(1).executeTakeFirst();
  return {
    at: at === undefined ? undefined : toReading(at),
    before: before === undefined ? undefined : toReading(before),
    after: after === undefined ? undefined : toReading(after),
  };
}

/** A policy's readings by time, after `after` (exclusive), at most `limit`. */
export async function listOdometerReadings(
  db: Executor,
  policyId: string,
  page: { after?: Date | undefined; limit: number },
): Promise<OdometerReadingRecord[]> {
  let query = db
    .selectFrom('odometer_readings')
    .select(readingColumns)
    .where('policy_id', '=', policyId)
    .orderBy('time')
    .limit(page.limit);
  if (page.after !== undefined) query = query.where('time', '>', page.after);
  return (await query.execute()).map(toReading);
}
