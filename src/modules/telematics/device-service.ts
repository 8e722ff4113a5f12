/** Devices and their bindings to policies: one device a policy and one policy a device at a time, history kept. */
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { findPolicy, lockPolicy } from '../policies/index.ts';
import { deviceStatus } from './rules/silent-devices.ts';
import { updateDeviceSilence } from './silent-device-repository.ts';
import {
  deviceIdsOf,
  endOpenBindings,
  findDevice,
  insertBinding,
  listDevices,
  upsertDevice,
  type DeviceRecord,
} from './telematics-repository.ts';
import type { BindDevice, DeviceView, ListDevicesQuery } from './telematics-schemas.ts';

/** The device as the interface shows it. */
function deviceView(device: DeviceRecord): DeviceView {
  const open = device.bindings.find((b) => b.unboundAt === null);
  return {
    device_id: device.deviceId,
    kind: device.kind,
    vin: device.vin,
    policy_reference: open?.policyReference ?? null,
    status: deviceStatus(open?.boundAt, device.offlineSince),
    last_seen_at: device.lastSeenAt?.toISOString() ?? null,
    bindings: device.bindings.map((b) => ({
      policy_reference: b.policyReference,
      bound_at: b.boundAt.toISOString(),
      unbound_at: b.unboundAt?.toISOString() ?? null,
    })),
    created_at: device.createdAt.toISOString(),
  };
}

/** The tenant's device (404 when it has none of that id); `lock` holds its row. */
export async function getDevice(
  db: Executor,
  tenant: Tenant,
  deviceId: string,
  lock = false,
): Promise<DeviceRecord> {
  const device = await findDevice(db, tenant, deviceId, lock);
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

/** See DeviceService.bind. */
async function bind(
  deps: DeviceServiceDeps,
  tenant: Tenant,
  input: BindDevice,
): Promise<{ created: boolean; device: DeviceView }> {
  const now = deps.clock.now();
  return inTransaction(deps.db, async (trx) => {
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
    if (open?.policyId === policy.id) return { created: false, device: deviceView(before) };
    const ended = await endOpenBindings(trx, { deviceRowId, policyId: policy.id }, now);
    await recordUnbound(trx, tenant, ended, now);
    await insertBinding(trx, {
      deviceRowId,
      policyId: policy.id,
      policyReference: policy.policyReference,
      at: now,
    });
    // Silence counts afresh from a new binding.
    await updateDeviceSilence(trx, deviceRowId, { offlineSince: null });
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
    return { created: true, device: deviceView(await getDevice(trx, tenant, input.device_id)) };
  });
}

async function list(
  db: Executor,
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
    ...(query.status === 'offline' ? { offline: true } : {}),
    ...(query.after === undefined ? {} : { after: query.after }),
  });
  const last = devices.at(-1);
  return {
    devices: devices.map((d) => deviceView(d)),
    next_cursor: devices.length === limit && last !== undefined ? last.deviceId : null,
  };
}

interface DeviceServiceDeps {
  readonly db: Executor;
  readonly clock: Clock;
}

export function createDeviceService(deps: DeviceServiceDeps) {
  const { db, clock } = deps;
  return {
    /**
     * Binds a device to a policy from now, ending the device's previous binding and the policy's
     * previous device's (history kept). `created` is false when it was bound to that policy already
     * (nothing changes then but its kind and VIN).
     */
    bind: (tenant: Tenant, input: BindDevice): Promise<{ created: boolean; device: DeviceView }> =>
      bind(deps, tenant, input),

    /** Ends the device's binding now; a device already unbound is answered as it is. */
    async unbind(tenant: Tenant, deviceId: string): Promise<DeviceView> {
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const device = await getDevice(trx, tenant, deviceId, true);
        const ended = await endOpenBindings(trx, { deviceRowId: device.id }, now);
        await recordUnbound(trx, tenant, ended, now);
        return deviceView(ended.length === 0 ? device : await getDevice(trx, tenant, deviceId));
      });
    },

    async get(tenant: Tenant, deviceId: string): Promise<DeviceView> {
      return deviceView(await getDevice(db, tenant, deviceId));
    },

    list: (
      tenant: Tenant,
      query: ListDevicesQuery,
    ): Promise<{ devices: DeviceView[]; next_cursor: string | null }> => list(db, tenant, query),
  };
}
