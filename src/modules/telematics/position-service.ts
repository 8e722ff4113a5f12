/** A device's positions: stored a batch at a time, each given the policy it was bound to then, and read back. */
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { getDevice } from './device-service.ts';
import { insertPositions, listPositions } from './position-repository.ts';
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
  readonly clock: Clock;
  readonly silent: Pick<SilentDevices, 'comeOnlineIfReporting'>;
}

/** See PositionService.ingest. */
async function ingest(
  deps: PositionServiceDeps,
  tenant: Tenant,
  batch: PositionBatch,
): Promise<PositionBatchResult> {
  const { db, silent } = deps;
  const now = deps.clock.now();
  const problem = attributeFieldError(batch.positions, '/body');
  if (problem !== undefined)
    throw new AppError('VALIDATION_FAILED', `The request is invalid: ${problem.path} ${problem.message}`, {
      errors: [problem],
    });
  const device = await getDevice(db, tenant, batch.device_id);
  const assigned = assignPositions(batch.positions, device.bindings, now);
  const latestTimeS = assigned.latestTimeS;
  let accepted = 0;
  if (latestTimeS !== undefined) {
    // One statement and no transaction, whether the device is online or not: it reports whether the
    // device is (or was found meanwhile) offline, and the device comes online just after, in a
    // transaction of its own, only when this batch can end its silence. Data from days ago cannot, and
    // an offline device replaying it costs no more round trips than an online one.
    const stored = await insertPositions(db, device.id, assigned.rows, latestTimeS, now);
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
  return {
    /**
     * Stores a batch of a device's positions: each checked on its own and given the policy of the binding
     * at its time, its other attributes kept; one INSERT for the batch; a device and second stored already
     * is a duplicate. An offline device whose batch ends its silence is online again (`device.online`)
     * before this returns. Attributes out of bounds refuse the whole batch (422 naming the position).
     */
    ingest: (tenant: Tenant, batch: PositionBatch): Promise<PositionBatchResult> =>
      ingest(deps, tenant, batch),

    /** A device's raw positions in [from, to], oldest first. */
    positions: (tenant: Tenant, deviceId: string, query: ListPositionsQuery): Promise<PositionList> =>
      positions(deps.db, tenant, deviceId, query),
  };
}
