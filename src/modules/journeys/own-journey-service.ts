/**
 * The journeys the service makes itself (a device's trips, a silent day's estimate, an odometer
 * reconciliation): rated on the version in force at their start and stored as a client's journey is, in
 * the caller's transaction or one of their own with the voids they replace. One that cannot be stored is
 * left out and reported, not thrown.
 */
import { inTransaction } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { ReverseGeocoder } from '../../integrations/geocoding/index.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { listPolicyTermVersions, type PolicyTermVersion } from '../policies/index.ts';
import type { JourneyServiceDeps } from './journey-context.ts';
import {
  findJourneyByProviderReference,
  storeJourney,
  type JourneyRecord,
  type NewJourney,
  type JourneySource,
  type PlaceRecord,
} from './journey-repository.ts';
import { journeyCreatedEvent } from './journey-views.ts';
import { voidIn } from './journey-void-service.ts';
import { coverFor, endNames, measureRoute, usagePremiumPence } from './rules/index.ts';

/** A journey the service makes itself: a device's trip, a silent day's estimate, a reconciliation. */
export interface ServiceJourney {
  readonly providerReference: string;
  readonly source: Exclude<JourneySource, 'api'>;
  readonly deviceId: string | null;
  readonly startAt: Date;
  readonly endAt: Date;
  /** A trip's route, measured and named as a client's is; without one, `distanceMetres` and `place`. */
  readonly route?: { readonly encoded: string; readonly precision: 5 | 6 };
  readonly distanceMetres?: number;
  /** Where a journey without a route happened, when known (the device's last position, say). */
  readonly place?: { readonly lat: number; readonly lng: number } | null;
  readonly gapDistanceMetres?: number;
}

/** Why a service-made journey was not stored (nothing else is wrong: it is left out). */
export type RefusedJourney = {
  readonly providerReference: string;
  readonly code: 'JOURNEY_OVERLAP' | 'JOURNEY_OUTSIDE_COVER' | 'POLICY_NOT_ACTIVE' | 'INVALID_ROUTE';
};

type PolicyNamed = { readonly id: string; readonly reference: string };

interface Measured {
  readonly distanceMetres: number;
  readonly pointCount: number;
  readonly start: PlaceRecord;
  readonly end: PlaceRecord;
}

/** A trip's route measured and its ends named; or the place of a journey without one; undefined: no route. */
async function measureServiceJourney(
  geocoder: ReverseGeocoder,
  item: ServiceJourney,
): Promise<Measured | undefined> {
  if (item.route === undefined) {
    const place = item.place ?? null;
    const at: PlaceRecord = {
      lat: place?.lat ?? null,
      lng: place?.lng ?? null,
      name: null,
      postcode: null,
    };
    if (place !== null) {
      const found = await geocoder.lookup(place.lat, place.lng);
      Object.assign(at, { name: found.name, postcode: found.postcode });
    }
    return { distanceMetres: item.distanceMetres ?? 0, pointCount: 0, start: at, end: at };
  }
  const route = measureRoute(item.route.encoded, item.route.precision);
  if (!route.ok) return undefined;
  const [startPlace, endPlace] = await Promise.all([
    geocoder.lookup(route.start.lat, route.start.lng),
    geocoder.lookup(route.end.lat, route.end.lng),
  ]);
  const names = endNames(startPlace, endPlace);
  return {
    distanceMetres: route.distanceMetres,
    pointCount: route.pointCount,
    start: { ...route.start, name: names.start, postcode: startPlace.postcode },
    end: { ...route.end, name: names.end, postcode: endPlace.postcode },
  };
}

async function storeServiceJourney(
  geocoder: ReverseGeocoder,
  trx: Executor,
  tenant: Tenant,
  policy: PolicyNamed,
  item: ServiceJourney,
  terms: { versions: readonly PolicyTermVersion[]; versionCount: number; now: Date },
): Promise<JourneyRecord | RefusedJourney> {
  const refuse = (code: RefusedJourney['code']): RefusedJourney => ({
    providerReference: item.providerReference,
    code,
  });
  const cover = coverFor(terms.versions, item.startAt);
  if (!cover.ok)
    return refuse(cover.reason === 'POLICY_NOT_ACTIVE' ? 'POLICY_NOT_ACTIVE' : 'JOURNEY_OUTSIDE_COVER');
  const measured = await measureServiceJourney(geocoder, item);
  if (measured === undefined) return refuse('INVALID_ROUTE');
  const { version } = cover;
  const journey: NewJourney & { readonly id: string } = {
    id: newId(),
    policyId: policy.id,
    policyReference: policy.reference,
    policyVersionId: version.id,
    providerReference: item.providerReference,
    route: item.route?.encoded ?? '',
    precision: item.route?.precision ?? 5,
    pointCount: measured.pointCount,
    startAt: item.startAt,
    endAt: item.endAt,
    distanceMetres: measured.distanceMetres,
    distanceUnit: version.usageUnit,
    usageRate: version.usageRate,
    usagePremiumPence: usagePremiumPence(version.usageRate, measured.distanceMetres, version.usageUnit),
    start: measured.start,
    end: measured.end,
    createdAt: terms.now,
    source: item.source,
    deviceId: item.deviceId,
    gapDistanceMetres: Math.min(item.gapDistanceMetres ?? 0, measured.distanceMetres),
  };
  const outcome = await storeJourney(
    { trx },
    tenant,
    journey,
    { versionCount: terms.versionCount },
    journeyCreatedEvent(journey),
  );
  if (typeof outcome === 'object') return outcome;
  if (outcome === 'VERSIONS_CHANGED')
    throw new AppError('CONFLICT', 'The policy changed while its journeys were being stored; try again');
  const existing = await findJourneyByProviderReference(trx, tenant, policy.id, item.providerReference);
  return existing !== undefined && !existing.isVoid ? existing : refuse('JOURNEY_OVERLAP');
}

/** Stores service-made journeys of one policy in the caller's transaction (see JourneyService.storeIn). */
export async function storeOwnJourneys(
  geocoder: ReverseGeocoder,
  trx: Executor,
  tenant: Tenant,
  policy: PolicyNamed,
  items: readonly ServiceJourney[],
  now: Date,
): Promise<{ stored: JourneyRecord[]; refused: RefusedJourney[] }> {
  const stored: JourneyRecord[] = [];
  const refused: RefusedJourney[] = [];
  if (items.length === 0) return { stored, refused };
  const all = await listPolicyTermVersions(trx, policy.id);
  const versionCount = all.at(-1)?.sequence ?? 0;
  const versions = all.filter((v) => v.versionType !== 'st');
  for (const item of items) {
    const made = await storeServiceJourney(geocoder, trx, tenant, policy, item, {
      versions,
      versionCount,
      now,
    });
    if ('code' in made) refused.push(made);
    else stored.push(made);
  }
  return { stored, refused };
}

/** Voids and stores one policy's own journeys in one transaction, then runs `afterStored` (see JourneyService.replace). */
export async function replaceOwnJourneys(
  deps: JourneyServiceDeps,
  tenant: Tenant,
  policy: PolicyNamed,
  change: {
    readonly voids: ReadonlyArray<{ readonly id: string; readonly reason: string }>;
    readonly store: readonly ServiceJourney[];
    /** Runs in the transaction after the journeys are stored (the trip cutter scores its trips so). */
    readonly within?: (trx: Executor, stored: readonly JourneyRecord[]) => Promise<void>;
  },
): Promise<{ stored: JourneyRecord[]; voided: JourneyRecord[]; refused: RefusedJourney[] }> {
  const now = deps.clock.now();
  const outcome = await inTransaction(deps.db, async (trx) => {
    const voided: JourneyRecord[] = [];
    for (const v of change.voids) {
      const journey = await voidIn(trx, tenant, v.id, { reason: v.reason, requestId: null, at: now });
      if (journey !== undefined) voided.push(journey);
    }
    const made = await storeOwnJourneys(deps.geocoder, trx, tenant, policy, change.store, now);
    await change.within?.(trx, made.stored);
    return { ...made, voided };
  });
  if (deps.afterStored !== undefined)
    for (const journey of outcome.stored) await deps.afterStored(tenant, journey);
  return outcome;
}
