/** Crash events from devices: stored once a device in any 2 minutes, each owing its policy a first notice of loss. */
import type { Clock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { findCrashNear, insertCrash, type CrashRecord } from './crash-repository.ts';
import type { CrashEventInput, CrashEventResult } from './crash-schemas.ts';
import { getDevice } from './device-service.ts';
import { listPositions, type StoredPosition } from './position-repository.ts';
import { placeCrash } from './rules/crashes.ts';

const resultOf = (crash: CrashRecord, duplicate: boolean): CrashEventResult => ({
  crash_reference: crash.id,
  device_id: crash.deviceId,
  policy_reference: crash.policyReference,
  time: Math.floor(crash.occurredAt.getTime() / 1000),
  duplicate,
});

/** See CrashService.recordCrash. */
async function recordCrash(
  deps: { db: Executor; clock: Clock },
  tenant: Tenant,
  input: CrashEventInput,
  body: string,
): Promise<CrashEventResult> {
  const { db } = deps;
  const now = deps.clock.now();
  const device = await getDevice(db, tenant, input.device_id);
  const occurredAt = new Date(input.time * 1000);
  const placed = placeCrash(device.bindings, occurredAt, now);
  if (!placed.ok)
    throw new AppError('VALIDATION_FAILED', `The request is invalid: ${body}/time ${placed.message}`, {
      errors: [{ path: `${body}/time`, message: placed.message }],
    });
  const id = await insertCrash(db, {
    companyId: tenant.companyId,
    environment: tenant.environment,
    deviceRowId: device.id,
    policyId: placed.policyId,
    policyReference: placed.policyReference,
    source: 'device',
    occurredAt,
    lat: input.lat,
    lon: input.lon,
    speedKmh: input.speed_kmh,
    peakAccelerationG: input.peak_acceleration_g,
    deltaVKmh: input.delta_v_kmh ?? null,
    airbagDeployed: input.airbag_deployed ?? null,
    receivedAt: now,
  });
  const stored = await findCrashNear(db, device.id, occurredAt);
  // A crash just stored, or the one within 2 minutes that made this report a duplicate, is always there.
  if (stored === undefined) throw new Error(`crash of device ${input.device_id} not found after storing`);
  return resultOf(stored, id === undefined);
}

export function createCrashService(deps: { db: Executor; clock: Clock }) {
  return {
    /**
     * Stores a device's crash for the policy it was bound to at the crash's time (422 naming `time` when
     * none, or when in the future; 404 for an unknown device). A second report within 2 minutes of a
     * stored crash is that crash (`duplicate: true`). Each stored crash owes a draft claim, which the
     * worker opens after the commit (claims module).
     */
    recordCrash: (tenant: Tenant, input: CrashEventInput, body = '/body'): Promise<CrashEventResult> =>
      recordCrash(deps, tenant, input, body),
  };
}

export type CrashService = ReturnType<typeof createCrashService>;

/** The device's positions in [from, to], oldest first, at most `limit` (a crash file's trace). */
export async function crashTrace(
  db: Executor,
  crash: Pick<CrashRecord, 'deviceRowId'>,
  range: { from: Date; to: Date; limit: number },
): Promise<StoredPosition[]> {
  return listPositions(db, crash.deviceRowId, range);
}
