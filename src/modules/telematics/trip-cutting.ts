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
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import {
  listDeviceEstimatesNamed,
  listDeviceTripsFrom,
  type JourneyRecord,
  type JourneyService,
} from '../journeys/index.ts';
import { listTripSourcePositions } from './position-repository.ts';
import {
  dropLatePositions,
  listMinimisedSpans,
  minimiseTrips,
  minimisesPositions,
} from './position-minimisation.ts';
import { GAP_SECONDS, type TripPosition } from './rules/trips.ts';
import {
  planTripJourneys,
  type PlannedTrip,
  type PolicyTripPlan,
  type TripPlan,
} from './rules/trip-journeys.ts';
import { recordTripScores, type TripToScore } from '../scores/index.ts';
import { findDevice } from './telematics-repository.ts';
import { recordTripCrashes } from './trip-crashes.ts';
import {
  finishTripCut,
  leasePendingDevices,
  releaseTripLeases,
  renewTripLeases,
  type PendingDevice,
} from './trip-cutting-repository.ts';

/** Devices leased by one pass of one worker. */
const DEVICES_PER_PASS = 20;
/** A device still reporting is cut again at most this often (a trip in progress is reread each time). */
export const TRIP_RECUT_SECONDS = 30;
/**
 * With a trip in progress, at most every this share of its length so far, up to the idle time (see
 * leasePendingDevices): a two-hour drive streamed at 1 Hz is then cut 33 times (the last after it
 * ends), not 241.
 */
export const OPEN_TRIP_RECUT_SHARE = 0.25;
/**
 * How long a pass's lease on its devices lasts past its last heartbeat. The pass renews it every quarter
 * of this while it works, however long a cut takes, so it can be short: the devices of a worker that was
 * killed (or froze) are taken up by another within this, plus up to one poll interval.
 */
export const TRIP_LEASE_MS = 20_000;
/** The most positions one cut reads (a week at one a second): a device's backlog beyond it waits. */
export const MAX_CUT_POSITIONS = 600_000;

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

interface TripCuttingDeps {
  db: Executor;
  clock: Clock;
  journeys: Pick<JourneyService, 'replace'>;
  tripEndIdleMinutes: number;
  /** TRIP_LEASE_MS unless a test shortens it to watch the heartbeat. */
  leaseMs?: number;
  logger?: Pick<Logger, 'warn' | 'error'>;
}

/** `T` with its fields writable: a trip position is built from its stored row field by field. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

type CutTotals = Pick<TripCutPass, 'stored' | 'voided' | 'refused'>;

/**
 * The device's positions from `from` on, by the policy each was assigned to, as the trip rules take
 * them; and the London days of those stored since the last cut (whose estimates they replace).
 */
async function positionsByPolicy(db: Executor, device: PendingDevice, from: Date) {
  const positions = await listTripSourcePositions(db, device.id, from, MAX_CUT_POSITIONS);
  const byPolicy = new Map<string, TripPosition[]>();
  const daysWithData = new Set<string>();
  const pendingMs = device.pendingFrom?.getTime() ?? Infinity;
  // London's day changes only on a UTC hour, so one lookup serves every position of an hour.
  let dayHour = NaN;
  for (const p of positions) {
    let list = byPolicy.get(p.policyId);
    if (list === undefined) {
      list = [];
      byPolicy.set(p.policyId, list);
    }
    // Set field by field rather than spread from conditional literals: up to a week of positions is read
    // at every cut, and four short-lived objects a position were a large part of this function's time.
    const position: Mutable<TripPosition> = { timeS: p.timeS, lat: p.lat, lon: p.lon };
    if (p.speedKmh !== null) position.speedKmh = p.speedKmh;
    if (p.heading !== null) position.heading = p.heading;
    if (p.accuracyM !== null) position.accuracyM = p.accuracyM;
    if (p.ignition !== null) position.ignition = p.ignition;
    list.push(position);
    const hour = Math.floor(p.timeS / 3600);
    if (hour !== dayHour && p.timeS * 1000 >= pendingMs) {
      dayHour = hour;
      daysWithData.add(londonDate(new Date(p.timeS * 1000)));
    }
  }
  return { byPolicy, daysWithData };
}

/** The references of the device's policies (from its bindings). */
async function policyReferences(
  db: Executor,
  tenant: Tenant,
  device: PendingDevice,
  policyIds: readonly string[],
): Promise<Map<string, string>> {
  const references = new Map<string, string>();
  if (policyIds.length === 0) return references;
  const record = await findDevice(db, tenant, device.deviceId);
  for (const b of record?.bindings ?? []) references.set(b.policyId, b.policyReference);
  return references;
}

/**
 * Scores the trips just stored as journeys, in their transaction (scores: driving events and scores); the
 * disputes of the `replaced` (re-cut) trips' events follow those events into them.
 */
function scoreStoredTrips(
  trx: Executor,
  tenant: Tenant,
  policyId: string,
  trips: { planned: readonly PlannedTrip[]; stored: readonly JourneyRecord[]; replaced: readonly string[] },
  at: Date,
): Promise<void> {
  const { planned, stored } = trips;
  const byReference = new Map(planned.map((trip) => [trip.providerReference, trip]));
  const scored: TripToScore[] = [];
  for (const journey of stored) {
    const trip = journey.providerReference === null ? undefined : byReference.get(journey.providerReference);
    if (trip !== undefined)
      scored.push({
        journeyId: journey.id,
        startAt: journey.startAt,
        distanceMetres: journey.distanceMetres,
        fixes: trip.fixes,
      });
  }
  return recordTripScores(trx, tenant, policyId, scored, at, trips.replaced);
}

/**
 * Makes each policy's trip journeys match the plan, one transaction a policy through the journeys
 * module: its re-cut trips and the estimates of days that now have data voided, its new trips stored.
 */
async function replaceTripJourneys(
  deps: TripCuttingDeps,
  tenant: Tenant,
  device: PendingDevice,
  plan: TripPlan,
  estimates: ReadonlyArray<{ id: string; policyId: string }>,
  minimise: boolean,
): Promise<CutTotals> {
  const policies = new Set([...plan.byPolicy.keys(), ...estimates.map((e) => e.policyId)]);
  const references = await policyReferences(deps.db, tenant, device, [...policies]);
  const totals = { stored: 0, voided: 0, refused: 0 };
  for (const policyId of policies) {
    const forPolicy: PolicyTripPlan = plan.byPolicy.get(policyId) ?? { voids: [], store: [] };
    const reference = references.get(policyId);
    if (reference === undefined) continue;
    const outcome = await deps.journeys.replace(
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
        within: async (trx, stored) => {
          const at = deps.clock.now();
          await scoreStoredTrips(
            trx,
            tenant,
            policyId,
            { planned: forPolicy.store, stored, replaced: forPolicy.voids },
            at,
          );
          await recordTripCrashes(
            trx,
            tenant,
            { deviceRowId: device.id, policyId, policyReference: reference },
            forPolicy.store,
            at,
          );
          // NOTE: deleted in the transaction that scored them: a trip is never left without both its
          // positions and its score. After the crashes: the positions of a crash file are kept.
          if (minimise) await minimiseTrips(trx, device.id, stored, at);
        },
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
  return totals;
}

/** Cuts one leased device's trips from what changed and ends the pass's lease on it. */
async function cutDevice(
  deps: TripCuttingDeps,
  device: PendingDevice,
  leaseId: string,
  now: Date,
): Promise<CutTotals> {
  const { db } = deps;
  const tenant = asTenant(device.companyId, device.environment as DataEnvironment);
  // Read from far enough back that a trip the new positions continue (or join) is cut whole.
  const lookbackMs = (deps.tripEndIdleMinutes * 60 + GAP_SECONDS) * 1000;
  let fromMs = Math.min(
    device.pendingFrom === null ? Infinity : device.pendingFrom.getTime() - lookbackMs,
    device.openTripFrom?.getTime() ?? Infinity,
  );
  if (fromMs === Infinity) fromMs = now.getTime() - lookbackMs;
  const touching = await listDeviceTripsFrom(db, tenant, device.deviceId, new Date(fromMs));
  const first = touching[0];
  if (first !== undefined) fromMs = Math.min(fromMs, first.startAt.getTime());
  // Minimised trips stand as scored: late positions inside one are dropped, and it is never re-cut.
  const spans = await listMinimisedSpans(db, device.id, new Date(fromMs));
  if (spans.length > 0) await dropLatePositions(db, device.id, spans);
  const minimised = (j: { startAt: Date; endAt: Date }) =>
    spans.some((span) => j.startAt.getTime() >= span.startMs && j.endAt.getTime() <= span.endMs);
  const stored = touching.filter((j) => j.startAt.getTime() >= fromMs && !minimised(j));

  const { byPolicy, daysWithData } = await positionsByPolicy(db, device, new Date(fromMs));
  const plan = planTripJourneys({
    deviceId: device.deviceId,
    positionsByPolicy: byPolicy,
    stored,
    nowS: Math.floor(now.getTime() / 1000),
    tripEndIdleMinutes: deps.tripEndIdleMinutes,
  });
  const estimates = await listDeviceEstimatesNamed(
    db,
    tenant,
    device.deviceId,
    [...daysWithData].map((date) => estimateProviderReference(device.deviceId, date)),
  );
  const minimise = await minimisesPositions(db, device.companyId);
  const totals = await replaceTripJourneys(deps, tenant, device, plan, estimates, minimise);
  await finishTripCut(
    db,
    device,
    leaseId,
    plan.openTripFromS === null ? null : new Date(plan.openTripFromS * 1000),
    now,
  );
  return totals;
}

/**
 * Renews the pass's leases on the devices it still `held` every quarter of a lease, noting in `lost`
 * those another pass has taken meanwhile. `stop` ends it once a renewal under way has finished.
 */
function leaseHeartbeat(
  deps: TripCuttingDeps,
  lease: { id: string; until: () => Date; ms: number },
  held: ReadonlySet<string>,
  lost: Set<string>,
): { stop(): Promise<void> } {
  let renewing: Promise<void> | undefined;
  const heartbeat = setInterval(() => {
    if (renewing !== undefined) return;
    renewing = renewTripLeases(deps.db, lease.id, [...held], lease.until())
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
  }, lease.ms / 4);
  heartbeat.unref();
  return {
    async stop() {
      clearInterval(heartbeat);
      await renewing;
    },
  };
}

/** One pass (see `cutPendingTrips` below). */
async function cutPendingTrips(deps: TripCuttingDeps, now: Date, signal?: AbortSignal): Promise<TripCutPass> {
  const { db } = deps;
  const leaseMs = deps.leaseMs ?? TRIP_LEASE_MS;
  const leaseId = randomUUID();
  // The pass's time moves on with the real time it has run (`now` may be a test's fixed instant).
  const startedMs = performance.now();
  const leaseUntil = () => new Date(now.getTime() + (performance.now() - startedMs) + leaseMs);
  const devices = await leasePendingDevices(db, now, {
    idleS: deps.tripEndIdleMinutes * 60,
    recutS: TRIP_RECUT_SECONDS,
    recutShare: OPEN_TRIP_RECUT_SHARE,
    leaseId,
    leaseUntil: leaseUntil(),
    limit: DEVICES_PER_PASS,
  });
  const pass = { devices: devices.length, stored: 0, voided: 0, refused: 0, failed: 0 };
  if (devices.length === 0) return pass;
  const held = new Set(devices.map((d) => d.id));
  const lost = new Set<string>();
  const heartbeat = leaseHeartbeat(deps, { id: leaseId, until: leaseUntil, ms: leaseMs }, held, lost);
  try {
    for (const device of devices) {
      if (signal?.aborted === true) break;
      if (lost.has(device.id)) {
        held.delete(device.id);
        deps.logger?.warn({ device_id: device.deviceId }, 'a trip-cutting lease was lost before its cut');
        continue;
      }
      try {
        const done = await cutDevice(deps, device, leaseId, now);
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
    await heartbeat.stop();
    // Left by a stop: another worker (or this one's next start) takes them up at once.
    await releaseTripLeases(db, leaseId, [...held]).catch(() => undefined);
  }
  return pass;
}

export function createTripCutting(deps: TripCuttingDeps) {
  return {
    /**
     * One pass: leases devices with something to cut and cuts each, renewing the leases of those not yet
     * cut every quarter of the lease; a device whose cut failed is tried again by the next pass, and one
     * whose lease was lost meanwhile (the heartbeat could not renew it in time and another pass took it)
     * is left to that pass. When `signal` aborts (shutdown), the devices not yet begun are given back.
     * Returns what it did.
     */
    cutPendingTrips: (now: Date = deps.clock.now(), signal?: AbortSignal): Promise<TripCutPass> =>
      cutPendingTrips(deps, now, signal),
  };
}

export type TripCutting = ReturnType<typeof createTripCutting>;
