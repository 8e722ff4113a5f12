/**
 * The worker's trip cutting: devices with new positions (or a trip in progress that may have ended) are
 * leased, their positions around what changed are read and cut, and their trip journeys made to match,
 * through the journeys module as any journey is stored. Positions that arrive late re-cut the trips they
 * touch (the old journeys voided, credited when billed; the new ones stored, in one transaction per policy),
 * and a day's estimate is voided when positions of that day arrive.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock.ts';
import { londonDate } from '../../platform/london-calendar.ts';
import type { Executor } from '../../schema.ts';
import { asTenant, type DataEnvironment } from '../companies/index.ts';
import type { JourneyService } from '../journeys/index.ts';
import { GAP_SECONDS, type TripPosition } from './rules/trips.ts';
import { planTripJourneys, type PolicyTripPlan } from './rules/trip-journeys.ts';
import {
  estimatesNamed,
  finishTripCut,
  findDevice,
  leasePendingDevices,
  listPositions,
  releaseTripLeases,
  renewTripLeases,
  tripJourneysFrom,
  type PendingDevice,
} from './telematics-repository.ts';

/** Devices leased by one pass of one worker. */
const DEVICES_PER_PASS = 20;
/** A device still reporting is cut again at most this often (a trip in progress is reread each time). */
export const TRIP_RECUT_SECONDS = 30;
/**
 * How long a pass's lease on its devices lasts past its last heartbeat. The pass renews it every quarter
 * of this while it works, however long a cut takes, so it can be short: the devices of a worker that was
 * killed (or froze) are taken up by another within this, plus up to one poll interval.
 */
export const TRIP_LEASE_MS = 20_000;
/** The most positions one cut reads (a week at one a second): a device's backlog beyond it waits. */
export const MAX_CUT_POSITIONS = 600_000;
const FAR_FUTURE = new Date(4_102_444_800_000);

export const RECUT_REASON = 'Re-cut: positions arrived after the trip was cut';
export const ESTIMATE_REPLACED_REASON = 'Positions arrived for the day the device was estimated silent';

export const estimateProviderReference = (deviceId: string, date: string): string =>
  `estimate:${deviceId}:${date}`;

export interface TripCutPass {
  readonly devices: number;
  readonly stored: number;
  readonly voided: number;
  readonly refused: number;
  readonly failed: number;
}

export function createTripCutting(deps: {
  db: Executor;
  clock: Clock;
  journeys: Pick<JourneyService, 'replace'>;
  tripEndIdleMinutes: number;
  /** TRIP_LEASE_MS unless a test shortens it to watch the heartbeat. */
  leaseMs?: number;
  logger?: Pick<Logger, 'warn' | 'error'>;
}) {
  const { db, clock, journeys } = deps;
  const idleS = deps.tripEndIdleMinutes * 60;
  const leaseMs = deps.leaseMs ?? TRIP_LEASE_MS;

  async function cutDevice(device: PendingDevice, leaseId: string, now: Date) {
    const tenant = asTenant(device.companyId, device.environment as DataEnvironment);
    // Read from far enough back that a trip the new positions continue (or join) is cut whole.
    const lookbackMs = (idleS + GAP_SECONDS) * 1000;
    let fromMs = Math.min(
      device.pendingFrom === null ? Infinity : device.pendingFrom.getTime() - lookbackMs,
      device.openTripFrom?.getTime() ?? Infinity,
    );
    if (fromMs === Infinity) fromMs = now.getTime() - lookbackMs;
    const touching = await tripJourneysFrom(db, device, new Date(fromMs));
    const first = touching[0];
    if (first !== undefined) fromMs = Math.min(fromMs, first.startAt.getTime());
    const from = new Date(fromMs);
    const stored = touching.filter((j) => j.startAt.getTime() >= fromMs);

    const positions = await listPositions(db, device.id, { from, to: FAR_FUTURE, limit: MAX_CUT_POSITIONS });
    const byPolicy = new Map<string, TripPosition[]>();
    const daysWithData = new Set<string>();
    const pendingMs = device.pendingFrom?.getTime() ?? Infinity;
    for (const p of positions) {
      let list = byPolicy.get(p.policyId);
      if (list === undefined) {
        list = [];
        byPolicy.set(p.policyId, list);
      }
      list.push({
        timeS: p.time.getTime() / 1000,
        lat: p.lat,
        lon: p.lon,
        ...(p.speedKmh === null ? {} : { speedKmh: p.speedKmh }),
        ...(p.accuracyM === null ? {} : { accuracyM: p.accuracyM }),
        ...(p.ignition === null ? {} : { ignition: p.ignition }),
      });
      if (p.time.getTime() >= pendingMs) daysWithData.add(londonDate(p.time));
    }
    const plan = planTripJourneys({
      deviceId: device.deviceId,
      positionsByPolicy: byPolicy,
      stored,
      nowS: Math.floor(now.getTime() / 1000),
      tripEndIdleMinutes: deps.tripEndIdleMinutes,
    });

    const estimates = await estimatesNamed(
      db,
      device,
      [...daysWithData].map((date) => estimateProviderReference(device.deviceId, date)),
    );
    const policies = new Set([...plan.byPolicy.keys(), ...estimates.map((e) => e.policyId)]);
    const references = await policyReferences(device, [...policies]);
    const totals = { stored: 0, voided: 0, refused: 0 };
    for (const policyId of policies) {
      const forPolicy: PolicyTripPlan = plan.byPolicy.get(policyId) ?? { voids: [], store: [] };
      const reference = references.get(policyId);
      if (reference === undefined) continue;
      const outcome = await journeys.replace(
        tenant,
        { id: policyId, reference },
        {
          voids: [
            ...estimates
              .filter((e) => e.policyId === policyId)
              .map((e) => ({ id: e.id, reason: ESTIMATE_REPLACED_REASON })),
            ...forPolicy.voids.map((id) => ({ id, reason: RECUT_REASON })),
          ],
          store: forPolicy.store.map((trip) => ({
            providerReference: trip.providerReference,
            source: 'device' as const,
            deviceId: device.deviceId,
            startAt: trip.startAt,
            endAt: trip.endAt,
            route: trip.route,
            gapDistanceMetres: trip.gapDistanceMetres,
          })),
        },
      );
      totals.stored += outcome.stored.length;
      totals.voided += outcome.voided.length;
      totals.refused += outcome.refused.length;
      for (const r of outcome.refused)
        deps.logger?.warn(
          { device_id: device.deviceId, provider_reference: r.providerReference, code: r.code },
          'a trip cut from a device was not stored as a journey',
        );
    }
    await finishTripCut(
      db,
      device,
      leaseId,
      plan.openTripFromS === null ? null : new Date(plan.openTripFromS * 1000),
      now,
    );
    return totals;
  }

  /** The references of the device's policies (from its bindings). */
  async function policyReferences(device: PendingDevice, policyIds: readonly string[]) {
    const references = new Map<string, string>();
    if (policyIds.length === 0) return references;
    const record = await findDevice(
      db,
      asTenant(device.companyId, device.environment as DataEnvironment),
      device.deviceId,
    );
    for (const b of record?.bindings ?? []) references.set(b.policyId, b.policyReference);
    return references;
  }

  return {
    /**
     * One pass: leases devices with something to cut and cuts each, renewing the leases of those not yet
     * cut every quarter of the lease; a device whose cut failed is tried again by the next pass, and one
     * whose lease was lost meanwhile (the heartbeat could not renew it in time and another pass took it)
     * is left to that pass. When `signal` aborts (shutdown), the devices not yet begun are given back.
     * Returns what it did.
     */
    async cutPendingTrips(now: Date = clock.now(), signal?: AbortSignal): Promise<TripCutPass> {
      const leaseId = randomUUID();
      // The pass's time moves on with the real time it has run (`now` may be a test's fixed instant).
      const startedMs = performance.now();
      const leaseUntil = () => new Date(now.getTime() + (performance.now() - startedMs) + leaseMs);
      const devices = await leasePendingDevices(db, now, {
        idleS,
        recutS: TRIP_RECUT_SECONDS,
        leaseId,
        leaseUntil: leaseUntil(),
        limit: DEVICES_PER_PASS,
      });
      const pass = { devices: devices.length, stored: 0, voided: 0, refused: 0, failed: 0 };
      if (devices.length === 0) return pass;
      const held = new Set(devices.map((d) => d.id));
      const lost = new Set<string>();
      let renewing: Promise<void> | undefined;
      const heartbeat = setInterval(() => {
        if (renewing !== undefined) return;
        renewing = renewTripLeases(db, leaseId, [...held], leaseUntil())
          .then((still) => {
            for (const id of held) if (!still.has(id)) lost.add(id);
          })
          .catch((error: unknown) => {
            // Tried again at the next beat; the lease outlasts three missed ones.
            deps.logger?.warn({ err: error }, 'renewing trip-cutting leases failed');
          })
          .finally(() => {
            renewing = undefined;
          });
      }, leaseMs / 4);
      heartbeat.unref();
      try {
        for (const device of devices) {
          if (signal?.aborted === true) break;
          if (lost.has(device.id)) {
            held.delete(device.id);
            deps.logger?.warn({ device_id: device.deviceId }, 'a trip-cutting lease was lost before its cut');
            continue;
          }
          try {
            const done = await cutDevice(device, leaseId, now);
            pass.stored += done.stored;
            pass.voided += done.voided;
            pass.refused += done.refused;
          } catch (error) {
            pass.failed++;
            deps.logger?.error({ err: error, device_id: device.deviceId }, 'cutting a device’s trips failed');
            await releaseTripLeases(db, leaseId, [device.id]).catch(() => undefined);
          } finally {
            held.delete(device.id);
          }
        }
      } finally {
        clearInterval(heartbeat);
        await renewing;
        // Left by a stop: another worker (or this one's next start) takes them up at once.
        await releaseTripLeases(db, leaseId, [...held]).catch(() => undefined);
      }
      return pass;
    },
  };
}

export type TripCutting = ReturnType<typeof createTripCutting>;
