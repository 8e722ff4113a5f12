/** A device's positions: stored a batch at a time, each given the policy it was bound to then, and read back. */
import type { Clock } from '../../platform/clock.ts';
import { batchedCalls, type BatchedCall } from '../../platform/db/batched-calls.ts';
import { inTransaction, type Prepared } from '../../platform/db/database.ts';
import { BoundedCache } from '../../platform/bounded-cache.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { getDevice } from './device-service.ts';
import { insertPositions, listPositions, STORE_POSITIONS_ARITY } from './position-repository.ts';
import { findDeviceForPositions, type KeyedDevice } from './telematics-repository.ts';
import { attributeFieldError } from './rules/position-attributes.ts';
import { assignPositions } from './rules/positions.ts';
import { mayEndSilence } from './rules/silent-devices.ts';
import type { SilentDevices } from './silent-devices.ts';
import {
  POSITIONS_PAGE_DEFAULT,
  type ListPositionsQuery,
  type PositionBatch,
  type PositionBatchResult,
  type PositionList,
} from './telematics-schemas.ts';

const UNIX_END = new Date(4_102_444_800_000);

interface PositionServiceDeps {
  readonly db: Executor;
  /** The hot statement's way to the database, past Kysely (DatabaseHandle.prepared). */
  readonly prepared: Prepared;
  readonly clock: Clock;
  readonly silent: Pick<SilentDevices, 'comeOnlineIfReporting'>;
}

/** Devices whose bindings a process remembers for storing positions (a few hundred bytes each). */
const DEVICE_CACHE_SIZE = 10_000;

interface Ingestion extends Omit<PositionServiceDeps, 'prepared'> {
  readonly storePositions: BatchedCall;
  /**
   * Devices with their bindings as last read, by tenant and device id. NOTE: positions assigned on
   * remembered bindings are stored only while the device's bindings still have the key read with them
   * (`store_positions` checks it), so a binding made or ended by any process is never missed.
   */
  readonly devices: BoundedCache<string, KeyedDevice>;
}

/** The tenant's device, with its bindings and their key (404 when it has none of that id). */
async function readDevice(db: Executor, tenant: Tenant, deviceId: string): Promise<KeyedDevice> {
  const found = await findDeviceForPositions(db, tenant, deviceId);
  if (found === undefined) throw notFound('device');
  return found;
}

/** See PositionService.ingest. */
async function ingest(deps: Ingestion, tenant: Tenant, batch: PositionBatch): Promise<PositionBatchResult> {
  const { db, silent } = deps;
  const now = deps.clock.now();
  const problem = attributeFieldError(batch.positions, '/body');
  if (problem !== undefined)
    throw new AppError('VALIDATION_FAILED', `The request is invalid: ${problem.path} ${problem.message}`, {
      errors: [problem],
    });
  const cacheKey = `${tenant.companyId}/${tenant.environment}/${batch.device_id}`;
  let known = deps.devices.get(cacheKey);
  for (;;) {
    const fresh = known === undefined;
    known ??= await readDevice(db, tenant, batch.device_id);
    const { device } = known;
    const assigned = assignPositions(batch.positions, device.bindings, now);
    const latestTimeS = assigned.latestTimeS;
    // Nothing to store, so nothing checks the remembered bindings that refused these: read them again.
    if (latestTimeS === undefined && !fresh) {
      known = undefined;
      continue;
    }
    let accepted = 0;
    if (latestTimeS !== undefined) {
      // One call and no transaction of its own, whether the device is online or not: it reports whether
      // the device is (or was found meanwhile) offline, and the device comes online just after, in a
      // transaction of its own, only when this batch can end its silence. Data from days ago cannot, and
      // an offline device replaying it costs no more round trips than an online one. Bindings just read
      // are used as a read before a statement always was; remembered ones only while their key holds.
      const stored = await insertPositions(
        deps.storePositions,
        device.id,
        fresh ? null : known.bindingsKey,
        assigned.rows,
        latestTimeS,
        now,
      );
      if (stored === 'STALE') {
        deps.devices.delete(cacheKey);
        known = undefined;
        continue;
      }
      deps.devices.set(cacheKey, known);
      accepted = stored.accepted;
      const offline = stored.offline;
      if (
        offline !== null &&
        mayEndSilence({
          openBoundAt: device.bindings.find((b) => b.unboundAt === null)?.boundAt,
          lastSeenAt: offline.lastSeenAt,
          afterSeconds: offline.afterSeconds,
          now,
        })
      )
        await inTransaction(db, (trx) => silent.comeOnlineIfReporting(trx, device.id, now));
    }
    return {
      accepted,
      duplicates: assigned.rows.length - accepted + assigned.duplicatesInRequest,
      rejected: assigned.rejected.map((r) => ({ index: r.index, reason: r.reason, message: r.message })),
    };
  }
}

/** See PositionService.positions. */
async function positions(
  db: Executor,
  tenant: Tenant,
  deviceId: string,
  query: ListPositionsQuery,
): Promise<PositionList> {
  const device = await getDevice(db, tenant, deviceId);
  const limit = query.limit ?? POSITIONS_PAGE_DEFAULT;
  const rows = await listPositions(db, device.id, {
    from: new Date((query.from ?? 0) * 1000),
    to: query.to === undefined ? UNIX_END : new Date(query.to * 1000),
    limit,
    attributes: true,
  });
  const references = new Map(device.bindings.map((b) => [b.policyId, b.policyReference]));
  const last = rows.at(-1);
  return {
    device_id: device.deviceId,
    positions: rows.map((r) => ({
      time: Math.floor(r.time.getTime() / 1000),
      lat: r.lat,
      lon: r.lon,
      speed_kmh: r.speedKmh,
      heading: r.heading,
      accuracy_m: r.accuracyM,
      ignition: r.ignition,
      odometer_metres: r.odometerMetres,
      attributes: r.attributes ?? {},
      policy_reference: references.get(r.policyId) ?? '',
      received_at: r.receivedAt.toISOString(),
    })),
    next_from:
      rows.length === limit && last !== undefined ? Math.floor(last.time.getTime() / 1000) + 1 : null,
  };
}

export function createPositionService(deps: PositionServiceDeps) {
  const { prepared, ...rest } = deps;
  // Batches arriving while others are being stored go together: one statement and one commit.
  const ingestion: Ingestion = {
    ...rest,
    storePositions: batchedCalls(prepared, { fn: 'store_positions', arity: STORE_POSITIONS_ARITY }),
    devices: new BoundedCache<string, KeyedDevice>(DEVICE_CACHE_SIZE),
  };
  return {
    /**
     * Stores a batch of a device's positions: each checked on its own and given the policy of the binding
     * at its time, its other attributes kept; one call of `store_positions` for the batch, sent with the
     * batches arriving meanwhile and committed with them; a device and second stored already is a
     * duplicate. An offline device whose batch ends its silence is online again (`device.online`)
     * before this returns. Attributes out of bounds refuse the whole batch (422 naming the position).
     */
    ingest: (tenant: Tenant, batch: PositionBatch): Promise<PositionBatchResult> =>
      ingest(ingestion, tenant, batch),

    /** A device's raw positions in [from, to], oldest first. */
    positions: (tenant: Tenant, deviceId: string, query: ListPositionsQuery): Promise<PositionList> =>
      positions(deps.db, tenant, deviceId, query),
  };
}
