import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Executor } from '../../schema.ts';
import type { Logger } from 'pino';
import { startPolling, type Poller } from '../../platform/jobs/polling.ts';
import type { JourneyService } from '../journeys/index.ts';
import { createTripCutting } from './trip-cutting.ts';
import { createSilentDevices } from './silent-devices.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import type { NotificationService } from '../notifications/index.ts';
import type { Tenant } from '../companies/index.ts';
import { findPolicy, lockPolicy } from '../policies/index.ts';
import { maintainPositionPartitions, type PartitionMaintenance } from './position-partitions.ts';
import { assignPositions } from './rules/positions.ts';
import { attributeFieldError } from './rules/position-attributes.ts';
import { deviceStatus } from './rules/silent-devices.ts';
import { bindingAt, monotonicAmong, parseReading } from './rules/odometer-readings.ts';
import {
  deviceIdsOf,
  endOpenBindings,
  findDevice,
  insertBinding,
  insertPositions,
  updateDeviceSilence,
  listDevices,
  listPositions,
  upsertDevice,
  insertOdometerReading,
  listOdometerReadings,
  readingsNear,
  type DeviceRecord,
  type OdometerReadingRecord,
} from './telematics-repository.ts';
import type {
  BindDevice,
  DeviceView,
  ListDevicesQuery,
  ListPositionsQuery,
  PositionBatch,
  PositionBatchResult,
  PositionList,
  ListOdometerQuery,
  OdometerReadingInput,
  OdometerReadingList,
  OdometerReadingView,
} from './telematics-schemas.ts';
import { POSITIONS_PAGE_DEFAULT } from './telematics-schemas.ts';

const UNIX_END = new Date(4_102_444_800_000);

function view(device: DeviceRecord): DeviceView {
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

function readingView(reading: OdometerReadingRecord, policyReference: string): OdometerReadingView {
  return {
    reading_reference: reading.id,
    policy_reference: policyReference,
    device_id: reading.deviceId,
    reading_metres: reading.readingMetres,
    time: reading.time.toISOString(),
    source: reading.source,
    created_at: reading.createdAt.toISOString(),
  };
}

/** An odometer page cursor: UNIX seconds of the last reading shown (a policy has one a second). */
function decodeReadingCursor(after: string | undefined): Date | undefined {
  if (after === undefined) return undefined;
  if (!/^\d{1,12}$/.test(after))
    throw new AppError('VALIDATION_FAILED', 'The cursor is not one this service gave out', {
      errors: [{ path: '/querystring/after', message: 'is not a cursor from next_cursor' }],
    });
  return new Date(Number(after) * 1000);
}

/** Between the worker's passes over devices (trip cutting, silent devices). */
const DEVICE_POLL_INTERVAL_MS = 5_000;

/** Devices bound to policies over time, the positions they send, and the trips cut from them. */
export function createTelematicsService(deps: {
  db: Executor;
  clock: Clock;
  positionRetentionDays: number;
  journeys: Pick<JourneyService, 'replace'>;
  jobs: Jobs;
  notifications: Pick<NotificationService, 'queueEmail'>;
  tripEndIdleMinutes: number;
  logger?: Pick<Logger, 'warn' | 'error'>;
}) {
  const { db, clock } = deps;
  const silent = createSilentDevices({
    db,
    clock,
    jobs: deps.jobs,
    journeys: deps.journeys,
    notifications: deps.notifications,
    ...(deps.logger === undefined ? {} : { logger: deps.logger }),
  });
  const trips = createTripCutting({
    db,
    clock,
    journeys: deps.journeys,
    tripEndIdleMinutes: deps.tripEndIdleMinutes,
    ...(deps.logger === undefined ? {} : { logger: deps.logger }),
  });
  let poller: Poller | undefined;

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
        if (open?.policyId === policy.id) return { created: false, device: view(before) };
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
        return { created: true, device: view(await getDevice(trx, tenant, input.device_id)) };
      });
    },

    /** Ends the device's binding now; a device already unbound is answered as it is. */
    async unbind(tenant: Tenant, deviceId: string): Promise<DeviceView> {
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const device = await getDevice(trx, tenant, deviceId, true);
        const ended = await endOpenBindings(trx, { deviceRowId: device.id }, now);
        await recordUnbound(trx, tenant, ended, now);
        return view(ended.length === 0 ? device : await getDevice(trx, tenant, deviceId));
      });
    },

    async get(tenant: Tenant, deviceId: string): Promise<DeviceView> {
      return view(await getDevice(db, tenant, deviceId));
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
        ...(query.status === 'offline' ? { offline: true } : {}),
        ...(query.after === undefined ? {} : { after: query.after }),
      });
      const last = devices.at(-1);
      return {
        devices: devices.map((d) => view(d)),
        next_cursor: devices.length === limit && last !== undefined ? last.deviceId : null,
      };
    },

    /**
     * Stores a batch of a device's positions: each checked on its own and given the policy of the binding
     * at its time, its other attributes kept; one INSERT for the batch; a device and second stored already
     * is a duplicate. An offline device that reports is online again (`device.online`) when the batch
     * commits. Attributes out of bounds refuse the whole batch (422 naming the position).
     */
    async ingest(tenant: Tenant, batch: PositionBatch): Promise<PositionBatchResult> {
      const now = clock.now();
      const problem = attributeFieldError(batch.positions, '/body');
      if (problem !== undefined)
        throw new AppError(
          'VALIDATION_FAILED',
          `The request is invalid: ${problem.path} ${problem.message}`,
          {
            errors: [problem],
          },
        );
      const device = await getDevice(db, tenant, batch.device_id);
      const assigned = assignPositions(batch.positions, device.bindings, now);
      const latestTimeS = assigned.latestTimeS;
      let accepted = 0;
      if (latestTimeS !== undefined && device.offlineSince === null) {
        // The common case, one statement and no transaction: it reports whether the device was found
        // offline meanwhile (the minute's check ran in between), and then it comes online just after.
        const stored = await insertPositions(db, device.id, assigned.rows, latestTimeS, now);
        accepted = stored.accepted;
        if (stored.offline)
          await inTransaction(db, (trx) => silent.comeOnlineIfReporting(trx, device.id, now));
      } else if (latestTimeS !== undefined) {
        accepted = await inTransaction(db, async (trx) => {
          const stored = await insertPositions(trx, device.id, assigned.rows, latestTimeS, now);
          if (stored.accepted > 0) await silent.comeOnlineIfReporting(trx, device.id, now);
          return stored.accepted;
        });
      }
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
    },

    /**
     * Stores an odometer reading of a policy (named, or found from the device bound at its time) under the
     * policy's row lock, so that readings of one policy are checked against each other one at a time: an
     * odometer never goes back. The same policy and second again answers with the stored reading.
     */
    async recordOdometer(
      tenant: Tenant,
      input: OdometerReadingInput,
    ): Promise<{ created: boolean; reading: OdometerReadingView }> {
      const now = clock.now();
      const parsed = parseReading(input, now);
      if (!parsed.ok)
        throw new AppError('VALIDATION_FAILED', `The reading is invalid: ${parsed.path} ${parsed.message}`, {
          errors: [{ path: parsed.path, message: parsed.message }],
        });
      const time = new Date(parsed.timeS * 1000);
      return inTransaction(db, async (trx) => {
        let reference: string;
        let deviceId: string | null = null;
        if ('deviceId' in parsed.by) {
          deviceId = parsed.by.deviceId;
          const binding = bindingAt((await getDevice(trx, tenant, deviceId)).bindings, parsed.timeS);
          if (binding === undefined)
            throw new AppError(
              'VALIDATION_FAILED',
              `The device was bound to no policy at ${time.toISOString()}`,
              { errors: [{ path: '/body/time', message: 'is outside every binding of the device' }] },
            );
          reference = binding.policyReference;
        } else {
          reference = parsed.by.policyReference;
        }
        const policy = await lockPolicy(trx, tenant, reference);
        if (policy === undefined) throw notFound('policy');
        const near = await readingsNear(trx, policy.id, time);
        if (near.at !== undefined) return { created: false, reading: readingView(near.at, reference) };
        if (
          !monotonicAmong(parsed.readingMetres, {
            before: near.before?.readingMetres,
            after: near.after?.readingMetres,
          })
        )
          throw new AppError(
            'ODOMETER_NOT_MONOTONIC',
            `An odometer never goes back: ${String(parsed.readingMetres)} m at ${time.toISOString()} is ${
              near.before !== undefined && parsed.readingMetres < near.before.readingMetres
                ? `below ${String(near.before.readingMetres)} m read at ${near.before.time.toISOString()}`
                : `above ${String(near.after?.readingMetres)} m read at ${String(near.after?.time.toISOString())}`
            }`,
            {
              errors: [
                { path: '/body', message: 'is not between the policy’s readings before and after it' },
              ],
            },
          );
        const stored = await insertOdometerReading(trx, tenant, {
          policyId: policy.id,
          deviceId,
          readingMetres: parsed.readingMetres,
          time,
          source: input.source,
          at: now,
        });
        // The policy's lock excludes another reading of the same second meanwhile.
        if (stored === undefined)
          throw new AppError('CONFLICT', 'The reading was stored meanwhile; send it again');
        return { created: true, reading: readingView(stored, reference) };
      });
    },

    /** A policy's odometer readings, oldest first, a page at a time. */
    async odometerReadings(tenant: Tenant, query: ListOdometerQuery): Promise<OdometerReadingList> {
      const after = decodeReadingCursor(query.after);
      const policy = await findPolicy(db, tenant, query.policy_reference);
      if (policy === undefined) throw notFound('policy');
      const limit = query.limit ?? 100;
      const rows = await listOdometerReadings(db, policy.id, { after, limit: limit + 1 });
      const shown = rows.slice(0, limit);
      const last = shown.at(-1);
      return {
        readings: shown.map((r) => readingView(r, query.policy_reference)),
        next_cursor:
          rows.length > limit && last !== undefined ? String(Math.floor(last.time.getTime() / 1000)) : null,
      };
    },

    /** One pass of the worker's trip cutting (tests call it with their clock's time). */
    cutPendingTrips: (now?: Date) => trips.cutPendingTrips(now),

    /** One pass of the worker's watch over silent devices (tests call it with their clock's time). */
    checkSilentDevices: silent.runOnce,

    /**
     * Starts the worker's loop over devices (trips cut while devices with new positions remain) and the
     * silent-device check once a minute.
     */
    async registerWorkers(): Promise<void> {
      await silent.registerWorkers();
      poller ??= startPolling({
        intervalMs: DEVICE_POLL_INTERVAL_MS,
        run: async (signal) => {
          while (!signal.aborted) {
            const pass = await trips.cutPendingTrips(clock.now(), signal);
            if (pass.devices === 0 || pass.failed === pass.devices) break;
          }
        },
        onError: (error) => deps.logger?.error({ err: error }, 'telematics worker pass failed'),
      });
    },

    async stopWorkers(timeoutMs: number): Promise<void> {
      const running = poller;
      poller = undefined;
      await running?.stop(timeoutMs);
    },

    /** The worker's partition upkeep (also a housekeeping task): see maintainPositionPartitions. */
    async maintainPartitions(now: Date = clock.now()): Promise<PartitionMaintenance> {
      return maintainPositionPartitions(db, now, deps.positionRetentionDays);
    },
  };
}

export type TelematicsService = ReturnType<typeof createTelematicsService>;
