/** Odometer readings of policies: an odometer never goes back, checked one policy at a time. */
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { isInstantMs } from '../../platform/instants.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { findPolicy, lockPolicy } from '../policies/index.ts';
import { getDevice } from './device-service.ts';
import {
  insertOdometerReading,
  listOdometerReadings,
  readingsNear,
  type OdometerReadingRecord,
} from './odometer-repository.ts';
import {
  bindingAt,
  MAX_AVERAGE_SPEED_KMH,
  monotonicAmong,
  parseReading,
  unreachableFrom,
} from './rules/odometer-readings.ts';
import type {
  ListOdometerQuery,
  OdometerReadingInput,
  OdometerReadingList,
  OdometerReadingView,
} from './telematics-schemas.ts';

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
  // Twelve digits of seconds reach year 33658: only years the stores hold are cursors.
  if (!/^\d{1,12}$/.test(after) || !isInstantMs(Number(after) * 1000))
    throw new AppError('VALIDATION_FAILED', 'The cursor is not one this service gave out', {
      errors: [{ path: '/querystring/after', message: 'is not a cursor from next_cursor' }],
    });
  return new Date(Number(after) * 1000);
}

/** The reading's policy: the one named, or the one its device was bound to at its time (422 for none). */
async function readingPolicyReference(
  trx: Executor,
  tenant: Tenant,
  by: { deviceId: string } | { policyReference: string },
  timeS: number,
): Promise<{ reference: string; deviceId: string | null }> {
  if (!('deviceId' in by)) return { reference: by.policyReference, deviceId: null };
  const binding = bindingAt((await getDevice(trx, tenant, by.deviceId)).bindings, timeS);
  if (binding === undefined)
    throw new AppError(
      'VALIDATION_FAILED',
      `The device was bound to no policy at ${new Date(timeS * 1000).toISOString()}`,
      { errors: [{ path: '/body/time', message: 'is outside every binding of the device' }] },
    );
  return { reference: binding.policyReference, deviceId: by.deviceId };
}

/** See OdometerService.recordOdometer. */
async function recordOdometer(
  deps: { readonly db: Executor; readonly clock: Clock },
  tenant: Tenant,
  input: OdometerReadingInput,
): Promise<{ created: boolean; reading: OdometerReadingView }> {
  const now = deps.clock.now();
  const parsed = parseReading(input, now);
  if (!parsed.ok)
    throw new AppError('VALIDATION_FAILED', `The reading is invalid: ${parsed.path} ${parsed.message}`, {
      errors: [{ path: parsed.path, message: parsed.message }],
    });
  const time = new Date(parsed.timeS * 1000);
  return inTransaction(deps.db, async (trx) => {
    const { reference, deviceId } = await readingPolicyReference(trx, tenant, parsed.by, parsed.timeS);
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
          errors: [{ path: '/body', message: 'is not between the policy’s readings before and after it' }],
        },
      );
    const timed = (r: OdometerReadingRecord | undefined) =>
      r === undefined ? undefined : { readingMetres: r.readingMetres, timeS: r.time.getTime() / 1000 };
    const far = unreachableFrom(
      { readingMetres: parsed.readingMetres, timeS: parsed.timeS },
      { before: timed(near.before), after: timed(near.after) },
    );
    const neighbour = far === undefined ? undefined : near[far];
    if (neighbour !== undefined)
      throw new AppError(
        'ODOMETER_IMPLAUSIBLE',
        `${String(parsed.readingMetres)} m at ${time.toISOString()} is further from ${String(neighbour.readingMetres)} m read at ${neighbour.time.toISOString()} than a car drives at ${String(MAX_AVERAGE_SPEED_KMH)} km/h`,
        {
          errors: [
            {
              path: input.reading_metres === undefined ? '/body/reading_miles' : '/body/reading_metres',
              message: 'is further from the policy’s reading next to it in time than a car can drive',
            },
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
}

/** See OdometerService.odometerReadings. */
async function odometerReadings(
  db: Executor,
  tenant: Tenant,
  query: ListOdometerQuery,
): Promise<OdometerReadingList> {
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
}

export function createOdometerService(deps: { readonly db: Executor; readonly clock: Clock }) {
  return {
    /**
     * Stores an odometer reading of a policy (named, or found from the device bound at its time) under the
     * policy's row lock, so that readings of one policy are checked against each other one at a time: an
     * odometer never goes back. The same policy and second again answers with the stored reading.
     */
    recordOdometer: (
      tenant: Tenant,
      input: OdometerReadingInput,
    ): Promise<{ created: boolean; reading: OdometerReadingView }> => recordOdometer(deps, tenant, input),

    /** A policy's odometer readings, oldest first, a page at a time. */
    odometerReadings: (tenant: Tenant, query: ListOdometerQuery): Promise<OdometerReadingList> =>
      odometerReadings(deps.db, tenant, query),
  };
}
