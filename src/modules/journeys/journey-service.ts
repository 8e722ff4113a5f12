import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound, type ErrorCode, type FieldError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { fromPence } from '../../platform/money.ts';
import type { ReverseGeocoder } from '../../integrations/geocoding/index.ts';
import type { Tenant } from '../companies/index.ts';
import {
  findPolicyForUsageByReference,
  listPoliciesForUsageOfPolicyholder,
  listPolicyTermVersions,
  type PolicyTermVersion,
} from '../policies/index.ts';
import {
  type JourneySource,
  findJourney,
  findJourneyByProviderReference,
  findOverlappingJourney,
  insertJourneyVoid,
  storeJourney,
  type Prepared,
  type PlaceRecord,
  listJourneys,
  markJourneyVoid,
  type JourneyRecord,
} from './journey-repository.ts';
import { endNames } from './end-names.ts';
import { checkJourneyTimes, coverFor, measureRoute } from './journey-rules.ts';
import type { BatchJourney, Journey, JourneyInput, ListJourneysQuery } from './journey-schemas.ts';
import { distanceUnitsLabel, totalKilometres, totalMiles, usagePremiumPence } from './rules/index.ts';
import { newId } from '../../platform/ids.ts';
import { BoundedCache } from '../../platform/bounded-cache.ts';

type Db = Executor;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const seconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/** Policies whose identity and terms are kept in memory (well under 1 KB each). */
const POLICY_CACHE_SIZE = 10_000;
/** Rounds of rating and storing one journey while the policy changes underneath (each change costs one). */
const MAX_ATTEMPTS = 4;

/** What ingestion keeps of a policy: it never changes. */
interface PolicyIdentity {
  readonly id: string;
  readonly policyReference: string;
}

/** A policy's versions that set terms (not `st`), as read when it had `versionCount` versions. */
interface Terms {
  readonly versionCount: number;
  readonly versions: readonly PolicyTermVersion[];
  /** Read during the current request (not from the cache). */
  readonly fresh: boolean;
}

/** The journey as the interface shows it. */
export function journeyView(journey: JourneyRecord): Journey {
  return {
    journey_reference: journey.id,
    provider_reference: journey.providerReference,
    policy_reference: journey.policyReference,
    policy_version_reference: journey.policyVersionId,
    route: journey.route,
    precision: journey.precision,
    distance_in_metres: journey.distanceMetres,
    distance_units: distanceUnitsLabel(journey.distanceUnit),
    total_miles: totalMiles(journey.distanceMetres),
    total_kms: totalKilometres(journey.distanceMetres),
    duration_in_seconds: seconds(journey.endAt) - seconds(journey.startAt),
    usage_rate: Number(journey.usageRate),
    usage_premium: fromPence(journey.usagePremiumPence),
    start_lat: journey.start.lat,
    start_long: journey.start.lng,
    end_lat: journey.end.lat,
    end_long: journey.end.lng,
    start_at: seconds(journey.startAt),
    end_at: seconds(journey.endAt),
    start_name: journey.start.name,
    end_name: journey.end.name,
    start_postcode: journey.start.postcode,
    end_postcode: journey.end.postcode,
    is_void: journey.isVoid,
    void_reason: journey.voidReason,
    voided_at: journey.voidedAt?.toISOString() ?? null,
    statement_version_reference: journey.statementVersionId,
    created_at: journey.createdAt.toISOString(),
    source: journey.source,
    device_id: journey.deviceId,
    is_estimated: journey.source === 'estimate',
    gap_distance_in_metres: journey.gapDistanceMetres,
  };
}

function invalid(errors: FieldError[]): AppError {
  return new AppError(
    'VALIDATION_FAILED',
    `The journey is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
    { errors },
  );
}

/** Opaque page cursor: the (start, id) of the last journey shown. */
function encodeCursor(journey: JourneyRecord): string {
  return Buffer.from(JSON.stringify([journey.startAt.getTime(), journey.id])).toString('base64url');
}

function decodeCursor(cursor: string): { startAt: Date; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2) {
      const [ms, id] = value as unknown[];
      if (typeof ms === 'number' && Number.isSafeInteger(ms) && typeof id === 'string' && UUID.test(id))
        return { startAt: new Date(ms), id };
    }
  } catch {
    // falls through to the 422 below
  }
  throw new AppError('VALIDATION_FAILED', 'The cursor is not one this service gave out', {
    errors: [{ path: '/querystring/after', message: 'is not a cursor from next_cursor' }],
  });
}

/** A batch item: the input once it passed the schema, or why it did not. */
export type BatchItem =
  { readonly ok: true; readonly input: JourneyInput } | { readonly ok: false; readonly error: AppError };

export interface BatchOutcome {
  readonly index: number;
  readonly status: number;
  readonly journey?: BatchJourney;
  readonly error?: { code: ErrorCode; detail: string; errors?: FieldError[] };
  /** The unexpected error behind a 5xx item, for the caller to log; never shown. */
  readonly cause?: unknown;
}

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

/**
 * Journeys: ingestion (route → distance, places, premium), reads for clients and policyholders, voids.
 * The database keeps a policy's journeys from overlapping (`store_journey` checks under the policy's row
 * lock) and a provider reference from being stored twice (a unique key), in the one statement that
 * stores the journey, so ingestion takes no lock of its own and checks nothing first.
 */
export function createJourneyService(deps: {
  db: Db;
  prepared: Prepared;
  clock: Clock;
  geocoder: ReverseGeocoder;
  /**
   * Runs after a journey is stored (or found stored under its `provider_reference`), outside its
   * transaction: usage alerts. It must not throw; what it does is condition-based, so a crash between
   * the two is made good by the policy's next journey.
   */
  afterStored?: (tenant: Tenant, journey: JourneyRecord) => Promise<void>;
}) {
  const { db, prepared, clock, geocoder, afterStored } = deps;

  // NOTE: what ingestion needs of a policy is cached, so that a journey costs one statement: the
  // policy's identity (which never changes) and its versions' terms, kept with the version count they were
  // read at. Versions are immutable and appended only together with the count, and the insert is guarded
  // by that count, so a stale entry can never rate a journey: it only costs a re-read and a retry.
  const policies = new BoundedCache<string, PolicyIdentity>(POLICY_CACHE_SIZE);
  const terms = new BoundedCache<string, Omit<Terms, 'fresh'>>(POLICY_CACHE_SIZE);

  async function policyOf(tenant: Tenant, reference: string): Promise<PolicyIdentity> {
    const key = `${tenant.companyId}/${tenant.environment}/${reference}`;
    const hit = policies.get(key);
    if (hit !== undefined) return hit;
    const policy = await findPolicyForUsageByReference(db, tenant, reference);
    if (policy === undefined) throw notFound('policy');
    const identity = { id: policy.id, policyReference: policy.policyReference };
    policies.set(key, identity);
    return identity;
  }

  /** The policy's terms: from the cache, or read now (always when `reload`). */
  async function termsOf(policyId: string, reload = false): Promise<Terms> {
    const hit = reload ? undefined : terms.get(policyId);
    if (hit !== undefined) return { ...hit, fresh: false };
    const all = await listPolicyTermVersions(db, policyId);
    const entry = {
      // Sequences run 1, 2, … with the count, so the last one read is the count they were read at.
      versionCount: all.at(-1)?.sequence ?? 0,
      // Statements (st) keep the terms before them and never change a rate or the cover: not kept.
      versions: all.filter((v) => v.versionType !== 'st'),
    };
    terms.set(policyId, entry);
    return { ...entry, fresh: true };
  }

  async function create(
    tenant: Tenant,
    input: JourneyInput,
  ): Promise<{ created: boolean; journey: JourneyRecord }> {
    const result = await store(tenant, input);
    if (afterStored !== undefined) await afterStored(tenant, result.journey);
    return result;
  }

  async function store(
    tenant: Tenant,
    input: JourneyInput,
  ): Promise<{ created: boolean; journey: JourneyRecord }> {
    const now = clock.now();
    const precision = input.precision ?? 5;
    const times = checkJourneyTimes(input.start_time, input.end_time, now);
    const route = measureRoute(input.route, precision);
    const errors: FieldError[] = [];
    if (!route.ok) errors.push({ path: '/body/route', message: route.message });
    if (!times.ok) errors.push({ path: '/body/end_time', message: times.message });
    if (!route.ok || errors.length > 0) throw invalid(errors);

    const [startPlace, endPlace] = await Promise.all([
      geocoder.lookup(route.start.lat, route.start.lng),
      geocoder.lookup(route.end.lat, route.end.lng),
    ]);
    const names = endNames(startPlace, endPlace);
    const startAt = new Date(input.start_time * 1000);
    const endAt = new Date(input.end_time * 1000);
    const providerReference = input.provider_reference ?? null;
    const policy = await policyOf(tenant, input.policy_reference);
    const stored = async (): Promise<JourneyRecord | undefined> =>
      providerReference === null
        ? undefined
        : findJourneyByProviderReference(db, tenant, policy.id, providerReference);

    let current = await termsOf(policy.id);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const cover = coverFor(current.versions, startAt);
      if (!cover.ok) {
        // Rejections are rare: make sure they rest on the policy as it is now, not on a cached view.
        if (!current.fresh) {
          current = await termsOf(policy.id, true);
          continue;
        }
        // A repeat of a journey stored before the policy ended is still answered with that journey.
        const existing = await stored();
        if (existing !== undefined) return { created: false, journey: existing };
        throw new AppError(
          cover.reason === 'POLICY_NOT_ACTIVE' ? 'POLICY_NOT_ACTIVE' : 'JOURNEY_OUTSIDE_COVER',
          cover.message,
        );
      }
      const { version } = cover;
      const id = newId();
      const usagePremium = usagePremiumPence(version.usageRate, route.distanceMetres, version.usageUnit);
      const outcome = await storeJourney(
        { prepared },
        tenant,
        {
          id,
          policyId: policy.id,
          policyReference: policy.policyReference,
          policyVersionId: version.id,
          providerReference,
          route: input.route,
          precision,
          pointCount: route.pointCount,
          startAt,
          endAt,
          distanceMetres: route.distanceMetres,
          distanceUnit: version.usageUnit,
          usageRate: version.usageRate,
          usagePremiumPence: usagePremium,
          start: { ...route.start, name: names.start, postcode: startPlace.postcode },
          end: { ...route.end, name: names.end, postcode: endPlace.postcode },
          createdAt: now,
          source: 'api',
          deviceId: null,
          gapDistanceMetres: 0,
        },
        { versionCount: current.versionCount },
        {
          type: 'journey.created',
          data: {
            journey_reference: id,
            provider_reference: providerReference,
            policy_reference: policy.policyReference,
            policy_version_reference: version.id,
            start_at: startAt.toISOString(),
            end_at: endAt.toISOString(),
            distance_in_metres: route.distanceMetres,
            usage_premium: fromPence(usagePremium),
            source: 'api',
            device_id: null,
          },
        },
      );
      if (typeof outcome === 'object') return { created: true, journey: outcome };
      if (outcome === 'VERSIONS_CHANGED') {
        current = await termsOf(policy.id, true);
        continue;
      }
      // Taken: by the same provider_reference (answered with that journey), or by an overlap.
      const existing = await stored();
      if (existing !== undefined) return { created: false, journey: existing };
      const other = await findOverlappingJourney(db, tenant, policy.id, { startAt, endAt });
      if (other !== undefined) {
        throw new AppError(
          'JOURNEY_OVERLAP',
          `The journey overlaps journey ${other.id} (${other.startAt.toISOString()} to ${other.endAt.toISOString()}) of the policy`,
        );
      }
      // What stood in the way went away meanwhile (voided, say): try again.
    }
    throw new AppError(
      'CONFLICT',
      'The journey could not be stored while the policy kept changing; send it again',
    );
  }

  /** The policy ids a reader may see: the named policy (tenant's, or the policyholder's own) or all of theirs. */
  async function readablePolicyIds(
    tenant: Tenant,
    reader: { kind: 'client' } | { kind: 'policyholder'; userId: string },
    policyReference: string | undefined,
  ): Promise<string[]> {
    if (reader.kind === 'client') {
      if (policyReference === undefined) {
        throw new AppError('VALIDATION_FAILED', 'policy_reference is required', {
          errors: [{ path: '/querystring/policy_reference', message: 'is required' }],
        });
      }
      const policy = await findPolicyForUsageByReference(db, tenant, policyReference);
      if (policy === undefined) throw notFound('policy');
      return [policy.id];
    }
    const mine = await listPoliciesForUsageOfPolicyholder(db, tenant, reader.userId);
    if (policyReference === undefined) return mine.map((p) => p.id);
    const chosen = mine.find((p) => p.policyReference === policyReference);
    if (chosen === undefined) throw notFound('policy');
    return [chosen.id];
  }

  async function list(
    tenant: Tenant,
    reader: { kind: 'client' } | { kind: 'policyholder'; userId: string },
    query: ListJourneysQuery,
  ): Promise<{ journeys: Journey[]; next_cursor: string | null }> {
    const after = query.after === undefined ? undefined : decodeCursor(query.after);
    const policyIds = await readablePolicyIds(tenant, reader, query.policy_reference);
    const limit = query.limit ?? 100;
    const rows = await listJourneys(db, tenant, {
      policyIds,
      fromAt: query.from === undefined ? undefined : new Date(query.from * 1000),
      toAt: query.to === undefined ? undefined : new Date(query.to * 1000),
      after,
      limit: limit + 1,
    });
    const shown = rows.slice(0, limit);
    const last = shown.at(-1);
    return {
      journeys: shown.map(journeyView),
      next_cursor: rows.length > limit && last !== undefined ? encodeCursor(last) : null,
    };
  }

  async function get(
    tenant: Tenant,
    reference: string,
    policyIds?: readonly string[],
  ): Promise<JourneyRecord> {
    const journey = UUID.test(reference) ? await findJourney(db, tenant, reference, policyIds) : undefined;
    if (journey === undefined) throw notFound('journey');
    return journey;
  }

  /** Marks a journey void with its audit record and event; undefined when it was void already or is not the tenant's. */
  async function voidIn(
    trx: Executor,
    tenant: Tenant,
    reference: string,
    values: { reason: string; requestId: string | null; at: Date },
  ): Promise<JourneyRecord | undefined> {
    const journey = await markJourneyVoid(trx, tenant, reference, { reason: values.reason, at: values.at });
    if (journey === undefined) return undefined;
    await insertJourneyVoid(trx, tenant, journey, values);
    await recordEvent(
      trx,
      { companyId: tenant.companyId, environment: tenant.environment },
      'journey.voided',
      {
        journey_reference: journey.id,
        provider_reference: journey.providerReference,
        policy_reference: journey.policyReference,
        reason: values.reason,
        usage_premium: fromPence(journey.usagePremiumPence),
        billed: journey.statementVersionId !== null,
        statement_version_reference: journey.statementVersionId,
      },
      values.at,
    );
    return journey;
  }

  async function storeServiceJourney(
    trx: Executor,
    tenant: Tenant,
    policy: { readonly id: string; readonly reference: string },
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
    let measured: { distanceMetres: number; pointCount: number; start: PlaceRecord; end: PlaceRecord };
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
      measured = { distanceMetres: item.distanceMetres ?? 0, pointCount: 0, start: at, end: at };
    } else {
      const route = measureRoute(item.route.encoded, item.route.precision);
      if (!route.ok) return refuse('INVALID_ROUTE');
      const [startPlace, endPlace] = await Promise.all([
        geocoder.lookup(route.start.lat, route.start.lng),
        geocoder.lookup(route.end.lat, route.end.lng),
      ]);
      const names = endNames(startPlace, endPlace);
      measured = {
        distanceMetres: route.distanceMetres,
        pointCount: route.pointCount,
        start: { ...route.start, name: names.start, postcode: startPlace.postcode },
        end: { ...route.end, name: names.end, postcode: endPlace.postcode },
      };
    }
    const { version } = cover;
    const id = newId();
    const usagePremium = usagePremiumPence(version.usageRate, measured.distanceMetres, version.usageUnit);
    const outcome = await storeJourney(
      { trx },
      tenant,
      {
        id,
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
        usagePremiumPence: usagePremium,
        start: measured.start,
        end: measured.end,
        createdAt: terms.now,
        source: item.source,
        deviceId: item.deviceId,
        gapDistanceMetres: Math.min(item.gapDistanceMetres ?? 0, measured.distanceMetres),
      },
      { versionCount: terms.versionCount },
      {
        type: 'journey.created',
        data: {
          journey_reference: id,
          provider_reference: item.providerReference,
          policy_reference: policy.reference,
          policy_version_reference: version.id,
          start_at: item.startAt.toISOString(),
          end_at: item.endAt.toISOString(),
          distance_in_metres: measured.distanceMetres,
          usage_premium: fromPence(usagePremium),
          source: item.source,
          device_id: item.deviceId,
        },
      },
    );
    if (typeof outcome === 'object') return outcome;
    if (outcome === 'VERSIONS_CHANGED')
      throw new AppError('CONFLICT', 'The policy changed while its journeys were being stored; try again');
    const existing = await findJourneyByProviderReference(trx, tenant, policy.id, item.providerReference);
    return existing !== undefined && !existing.isVoid ? existing : refuse('JOURNEY_OVERLAP');
  }

  /** Stores service-made journeys of one policy in the caller's transaction (see `storeIn` below). */
  async function storeIn(
    trx: Executor,
    tenant: Tenant,
    policy: { readonly id: string; readonly reference: string },
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
      const made = await storeServiceJourney(trx, tenant, policy, item, { versions, versionCount, now });
      if ('code' in made) refused.push(made);
      else stored.push(made);
    }
    return { stored, refused };
  }

  return {
    /**
     * POST /journeys: measures the route on the WGS84 ellipsoid, names its ends, rates it on the version in
     * force at its start and stores it (created). The same `provider_reference` again for the policy gives
     * the stored journey (not created). Rejections: 422 (route, times, outside cover), 404 (policy), 409
     * (cancelled or lapsed, overlap).
     */
    async create(tenant: Tenant, input: JourneyInput): Promise<{ created: boolean; journey: Journey }> {
      const result = await create(tenant, input);
      return { created: result.created, journey: journeyView(result.journey) };
    },

    /**
     * POST /journeys/batch: each item on its own, in order, each in its own transaction, so one item's
     * failure never undoes another's success. Unexpected failures are reported on the item (5xx) with the
     * cause for the caller to log.
     */
    async createBatch(tenant: Tenant, items: readonly BatchItem[]): Promise<BatchOutcome[]> {
      const outcomes: BatchOutcome[] = [];
      for (const [index, item] of items.entries()) {
        try {
          if (!item.ok) throw item.error;
          const { created, journey } = await create(tenant, item.input);
          const { route: _route, ...rest } = journeyView(journey);
          outcomes.push({ index, status: created ? 201 : 200, journey: rest });
        } catch (error) {
          const known =
            error instanceof AppError
              ? error
              : new AppError('INTERNAL', 'An unexpected error occurred; it has been logged.', {
                  cause: error,
                });
          outcomes.push({
            index,
            status: known.status,
            error: {
              code: known.code,
              detail: known.message,
              ...(known.errors.length === 0 ? {} : { errors: [...known.errors] }),
            },
            ...(known.status >= 500 ? { cause: error } : {}),
          });
        }
      }
      return outcomes;
    },

    /** GET /journeys with client credentials: one policy's journeys, by start, a page at a time. */
    async list(tenant: Tenant, query: ListJourneysQuery) {
      return list(tenant, { kind: 'client' }, query);
    },

    /** GET /journeys for a policyholder: journeys of their own policies only (another's policy is 404). */
    async listForPolicyholder(tenant: Tenant, userId: string, query: ListJourneysQuery) {
      return list(tenant, { kind: 'policyholder', userId }, query);
    },

    /** GET /journeys/:journey_reference with client credentials. */
    async get(tenant: Tenant, reference: string): Promise<Journey> {
      return journeyView(await get(tenant, reference));
    },

    /** GET /journeys/:journey_reference for a policyholder: only a journey of one of their policies. */
    async getForPolicyholder(tenant: Tenant, userId: string, reference: string): Promise<Journey> {
      const mine = await listPoliciesForUsageOfPolicyholder(db, tenant, userId);
      return journeyView(
        await get(
          tenant,
          reference,
          mine.map((p) => p.id),
        ),
      );
    },

    /**
     * POST /journeys/:journey_reference/void: marks the journey void with an audit record and a
     * `journey.voided` event saying whether it had been billed (then the next statement credits it).
     * Voiding a void journey changes nothing and answers with it as it is.
     */
    async void(
      tenant: Tenant,
      reference: string,
      input: { reason: string },
      context: { requestId?: string } = {},
    ): Promise<Journey> {
      if (!UUID.test(reference)) throw notFound('journey');
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const journey = await voidIn(trx, tenant, reference, {
          reason: input.reason,
          requestId: context.requestId ?? null,
          at: now,
        });
        if (journey !== undefined) return journeyView(journey);
        const existing = await findJourney(trx, tenant, reference);
        if (existing === undefined) throw notFound('journey');
        return journeyView(existing);
      });
    },

    /**
     * The service's own journeys for one policy, in one transaction: voids `voids` (credited by the next
     * statement when billed, as any void), then stores `store`, each rated on the version in force at its
     * start, as a client's journey is. One that cannot be stored (outside cover, overlapping another, a
     * route that does not decode) is left out and reported; one stored already under its provider reference
     * is answered as stored. VERSIONS_CHANGED (a policy change raced this) fails the whole with CONFLICT, to
     * be tried again.
     */
    async replace(
      tenant: Tenant,
      policy: { readonly id: string; readonly reference: string },
      change: {
        readonly voids: ReadonlyArray<{ readonly id: string; readonly reason: string }>;
        readonly store: readonly ServiceJourney[];
      },
    ): Promise<{ stored: JourneyRecord[]; voided: JourneyRecord[]; refused: RefusedJourney[] }> {
      const now = clock.now();
      const outcome = await inTransaction(db, async (trx) => {
        const voided: JourneyRecord[] = [];
        for (const v of change.voids) {
          const journey = await voidIn(trx, tenant, v.id, { reason: v.reason, requestId: null, at: now });
          if (journey !== undefined) voided.push(journey);
        }
        return { ...(await storeIn(trx, tenant, policy, change.store, now)), voided };
      });
      if (afterStored !== undefined) for (const journey of outcome.stored) await afterStored(tenant, journey);
      return outcome;
    },

    /**
     * The service's own journeys for one policy in the caller's transaction, which may hold the policy's
     * row already (a statement being written stores its odometer reconciliation so, before claiming the
     * period's journeys). Rated and refused as in `replace`; `afterStored` is not run (the caller's
     * transaction has not committed; usage alerts catch up with the policy's next journey).
     */
    async storeIn(
      trx: Executor,
      tenant: Tenant,
      policy: { readonly id: string; readonly reference: string },
      items: readonly ServiceJourney[],
      now: Date = clock.now(),
    ): Promise<{ stored: JourneyRecord[]; refused: RefusedJourney[] }> {
      return storeIn(trx, tenant, policy, items, now);
    },
  };
}

export type JourneyService = ReturnType<typeof createJourneyService>;
