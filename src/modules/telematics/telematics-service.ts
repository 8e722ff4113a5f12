import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { findPolicy, lockPolicy } from '../policies/index.ts';
import { maintainPositionPartitions, type PartitionMaintenance } from './position-partitions.ts';
import { assignPositions, deviceStatus } from './rules/positions.ts';
import {
  deviceIdsOf,
  endOpenBindings,
  findDevice,
  insertBinding,
  insertPositions,
  listDevices,
  listPositions,
  upsertDevice,
  type DeviceRecord,
} from './telematics-repository.ts';
import type {
  BindDevice,
  DeviceView,
  ListDevicesQuery,
  ListPositionsQuery,
  PositionBatch,
  PositionBatchResult,
  PositionList,
} from './telematics-schemas.ts';
import { POSITIONS_PAGE_DEFAULT } from './telematics-schemas.ts';

const UNIX_END = new Date(4_102_444_800_000);

function view(device: DeviceRecord, now: Date): DeviceView {
  const open = device.bindings.find((b) => b.unboundAt === null);
  return {
    device_id: device.deviceId,
    kind: device.kind,
    vin: device.vin,
    policy_reference: open?.policyReference ?? null,
    status: deviceStatus(open?.boundAt, device.lastSeenAt, now),
    last_seen_at: device.lastSeenAt?.toISOString() ?? null,
    bindings: device.bindings.map((b) => ({
      policy_reference: b.policyReference,
      bound_at: b.boundAt.toISOString(),
      unbound_at: b.unboundAt?.toISOString() ?? null,
    })),
    created_at: device.createdAt.toISOString(),
  };
}

/** Devices bound to policies over time, and the positions they send. */
export function createTelematicsService(deps: { db: Executor; clock: Clock; positionRetentionDays: number }) {
  const { db, clock } = deps;

  async function getDevice(trx: Executor, tenant: Tenant, deviceId: string, lock = false) {
    const device = await findDevice(trx, tenant, deviceId, lock);
    if (device === undefined) throw notFound('device');
    return device;
  }

  async function recordUnbound(
    trx: Executor,
    tenant: Tenant,
    ended: ReadonlyArray<{ deviceRowId: string; policyReference: string }>,
    at: Date,
  ): Promise<void> {
    const ids = await deviceIdsOf(
      trx,
      ended.map((e) => e.deviceRowId),
    );
    for (const e of ended)
      await recordEvent(
        trx,
        tenant,
        'device.unbound',
        {
          device_id: ids.get(e.deviceRowId) ?? '',
          policy_reference: e.policyReference,
          unbound_at: at.toISOString(),
        },
        at,
      );
  }

  return {
    /**
     * Binds a device to a policy from now, ending the device's previous binding and the policy's
     * previous device's (history kept). `created` is false when it was bound to that policy already
     * (nothing changes then but its kind and VIN).
     */
    async bind(tenant: Tenant, input: BindDevice): Promise<{ created: boolean; device: DeviceView }> {
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        // Lock order: the policy, then the device (one binding change at a time for each).
        const policy = await lockPolicy(trx, tenant, input.policy_reference);
        if (policy === undefined) throw notFound('policy');
        if (policy.status !== 'active')
          throw new AppError(
            'POLICY_NOT_ACTIVE',
            `The policy is ${policy.status}: a device can be bound only to an active policy`,
          );
        const deviceRowId = await upsertDevice(trx, tenant, {
          deviceId: input.device_id,
          kind: input.kind,
          vin: input.vin ?? null,
          at: now,
        });
        const before = await getDevice(trx, tenant, input.device_id, true);
        const open = before.bindings.find((b) => b.unboundAt === null);
        if (open?.policyId === policy.id) return { created: false, device: view(before, now) };
        const ended = await endOpenBindings(trx, { deviceRowId, policyId: policy.id }, now);
        await recordUnbound(trx, tenant, ended, now);
        await insertBinding(trx, {
          deviceRowId,
          policyId: policy.id,
          policyReference: policy.policyReference,
          at: now,
        });
        await recordEvent(
          trx,
          tenant,
          'device.bound',
          {
            device_id: input.device_id,
            kind: input.kind,
            policy_reference: policy.policyReference,
            bound_at: now.toISOString(),
          },
          now,
        );
        return { created: true, device: view(await getDevice(trx, tenant, input.device_id), now) };
      });
    },

    /** Ends the device's binding now; a device already unbound is answered as it is. */
    async unbind(tenant: Tenant, deviceId: string): Promise<DeviceView> {
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const device = await getDevice(trx, tenant, deviceId, true);
        const ended = await endOpenBindings(trx, { deviceRowId: device.id }, now);
        await recordUnbound(trx, tenant, ended, now);
        return view(ended.length === 0 ? device : await getDevice(trx, tenant, deviceId), now);
      });
    },

    async get(tenant: Tenant, deviceId: string): Promise<DeviceView> {
      return view(await getDevice(db, tenant, deviceId), clock.now());
    },

    async list(
      tenant: Tenant,
      query: ListDevicesQuery,
    ): Promise<{ devices: DeviceView[]; next_cursor: string | null }> {
      let policyId: string | undefined;
      if (query.policy_reference !== undefined) {
        const policy = await findPolicy(db, tenant, query.policy_reference);
        if (policy === undefined) throw notFound('policy');
        policyId = policy.id;
      }
      const limit = query.limit ?? 100;
      const devices = await listDevices(db, tenant, {
        limit,
        ...(policyId === undefined ? {} : { policyId }),
        ...(query.after === undefined ? {} : { after: query.after }),
      });
      const now = clock.now();
      const last = devices.at(-1);
      return {
        devices: devices.map((d) => view(d, now)),
        next_cursor: devices.length === limit && last !== undefined ? last.deviceId : null,
      };
    },

    /**
     * Stores a batch of a device's positions: each checked on its own and given the policy of the binding
     * at its time; one INSERT for the batch; a device and second stored already is a duplicate.
     */
    async ingest(tenant: Tenant, batch: PositionBatch): Promise<PositionBatchResult> {
      const now = clock.now();
      const device = await getDevice(db, tenant, batch.device_id);
      const assigned = assignPositions(batch.positions, device.bindings, now);
      const accepted =
        assigned.latestTimeS === undefined
          ? 0
          : await insertPositions(db, device.id, assigned.rows, assigned.latestTimeS, now);
      return {
        accepted,
        duplicates: assigned.rows.length - accepted + assigned.duplicatesInRequest,
        rejected: assigned.rejected.map((r) => ({ index: r.index, reason: r.reason, message: r.message })),
      };
    },

    /** A device's raw positions in [from, to], oldest first. */
    async positions(tenant: Tenant, deviceId: string, query: ListPositionsQuery): Promise<PositionList> {
      const device = await getDevice(db, tenant, deviceId);
      const limit = query.limit ?? POSITIONS_PAGE_DEFAULT;
      const rows = await listPositions(db, device.id, {
        from: new Date((query.from ?? 0) * 1000),
        to: query.to === undefined ? UNIX_END : new Date(query.to * 1000),
        limit,
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
          policy_reference: references.get(r.policyId) ?? '',
          received_at: r.receivedAt.toISOString(),
        })),
        next_from:
          rows.length === limit && last !== undefined ? Math.floor(last.time.getTime() / 1000) + 1 : null,
      };
    },

    /** The worker's partition upkeep (also a housekeeping task): see maintainPositionPartitions. */
    async maintainPartitions(now: Date = clock.now()): Promise<PartitionMaintenance> {
      return maintainPositionPartitions(db, now, deps.positionRetentionDays);
    },
  };
}

export type TelematicsService = ReturnType<typeof createTelematicsService>;
