/**
 * A client's journeys, one (POST /journeys) or a batch: the route measured and its ends named, rated on the
 * version in force at its start, and stored with its event in one statement. The database keeps a policy's
 * journeys from overlapping (`store_journey` checks under the policy's row lock) and a provider reference
 * from being stored twice (a unique key), so ingestion takes no lock of its own and checks nothing first.
 */
import { BoundedCache } from '../../platform/bounded-cache.ts';
import { batchedCalls, type BatchedCall } from '../../platform/db/batched-calls.ts';
import { AppError, notFound, type ErrorCode, type FieldError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Tenant } from '../companies/index.ts';
import {
  findPolicyForUsageByReference,
  listPolicyTermVersions,
  type PolicyTermVersion,
} from '../policies/index.ts';
import type { JourneyServiceDeps } from './journey-context.ts';
import {
  findJourneyByProviderReference,
  findOverlappingJourney,
  storeJourney,
  STORE_JOURNEY_ARITY,
  type JourneyRecord,
  type NewJourney,
  type PlaceRecord,
} from './journey-repository.ts';
import type { BatchJourney, JourneyInput } from './journey-schemas.ts';
import { journeyCreatedEvent, journeyView } from './journey-views.ts';
import { checkJourneyTimes, coverFor, endNames, measureRoute, usagePremiumPence } from './rules/index.ts';

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

/** Ingestion's dependencies and what it keeps of policies between requests. */
interface Ingestion extends Pick<JourneyServiceDeps, 'db' | 'clock' | 'geocoder'> {
  readonly storeJourney: BatchedCall;
  readonly policies: BoundedCache<string, PolicyIdentity>;
  readonly terms: BoundedCache<string, Omit<Terms, 'fresh'>>;
}

function invalid(errors: FieldError[]): AppError {
  return new AppError(
    'VALIDATION_FAILED',
    `The journey is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
    { errors },
  );
}

async function policyOf(ctx: Ingestion, tenant: Tenant, reference: string): Promise<PolicyIdentity> {
  const key = `${tenant.companyId}/${tenant.environment}/${reference}`;
  const hit = ctx.policies.get(key);
  if (hit !== undefined) return hit;
  const policy = await findPolicyForUsageByReference(ctx.db, tenant, reference);
  if (policy === undefined) throw notFound('policy');
  const identity = { id: policy.id, policyReference: policy.policyReference };
  ctx.policies.set(key, identity);
  return identity;
}

/** The policy's terms: from the cache, or read now (always when `reload`). */
async function termsOf(ctx: Ingestion, policyId: string, reload = false): Promise<Terms> {
  const hit = reload ? undefined : ctx.terms.get(policyId);
  if (hit !== undefined) return { ...hit, fresh: false };
  const all = await listPolicyTermVersions(ctx.db, policyId);
  const entry = {
    // Sequences run 1, 2, … with the count, so the last one read is the count they were read at.
    versionCount: all.at(-1)?.sequence ?? 0,
    // Statements (st) keep the terms before them and never change a rate or the cover: not kept.
    versions: all.filter((v) => v.versionType !== 'st'),
  };
  ctx.terms.set(policyId, entry);
  return { ...entry, fresh: true };
}

/** A client's journey checked (422 naming the fields), measured and its ends named: all but its rating. */
async function measureClientJourney(ctx: Ingestion, input: JourneyInput, now: Date) {
  const precision = input.precision ?? 5;
  const times = checkJourneyTimes(input.start_time, input.end_time, now);
  const route = measureRoute(input.route, precision);
  const errors: FieldError[] = [];
  if (!route.ok) errors.push({ path: '/body/route', message: route.message });
  if (!times.ok) errors.push({ path: '/body/end_time', message: times.message });
  if (!route.ok || errors.length > 0) throw invalid(errors);

  const [startPlace, endPlace] = await Promise.all([
    ctx.geocoder.lookup(route.start.lat, route.start.lng),
    ctx.geocoder.lookup(route.end.lat, route.end.lng),
  ]);
  const names = endNames(startPlace, endPlace);
  const start: PlaceRecord = { ...route.start, name: names.start, postcode: startPlace.postcode };
  const end: PlaceRecord = { ...route.end, name: names.end, postcode: endPlace.postcode };
  return {
    providerReference: input.provider_reference ?? null,
    route: input.route,
    precision,
    pointCount: route.pointCount,
    startAt: new Date(input.start_time * 1000),
    endAt: new Date(input.end_time * 1000),
    distanceMetres: route.distanceMetres,
    start,
    end,
  };
}

/**
 * Rates and stores a client's journey, trying again (up to MAX_ATTEMPTS) while the policy's versions
 * change underneath; a repeat of its `provider_reference` is answered with the stored journey.
 */
async function storeClientJourney(
  ctx: Ingestion,
  tenant: Tenant,
  input: JourneyInput,
): Promise<{ created: boolean; journey: JourneyRecord }> {
  const now = ctx.clock.now();
  const measured = await measureClientJourney(ctx, input, now);
  const { providerReference, startAt, endAt } = measured;
  const policy = await policyOf(ctx, tenant, input.policy_reference);
  const stored = async (): Promise<JourneyRecord | undefined> =>
    providerReference === null
      ? undefined
      : findJourneyByProviderReference(ctx.db, tenant, policy.id, providerReference);

  let current = await termsOf(ctx, policy.id);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const cover = coverFor(current.versions, startAt);
    if (!cover.ok) {
      // Rejections are rare: make sure they rest on the policy as it is now, not on a cached view.
      if (!current.fresh) {
        current = await termsOf(ctx, policy.id, true);
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
    const journey: NewJourney & { readonly id: string } = {
      id: newId(),
      policyId: policy.id,
      policyReference: policy.policyReference,
      policyVersionId: version.id,
      ...measured,
      distanceUnit: version.usageUnit,
      usageRate: version.usageRate,
      usagePremiumPence: usagePremiumPence(version.usageRate, measured.distanceMetres, version.usageUnit),
      createdAt: now,
      source: 'api',
      deviceId: null,
      gapDistanceMetres: 0,
    };
    const outcome = await storeJourney(
      { storeJourney: ctx.storeJourney },
      tenant,
      journey,
      { versionCount: current.versionCount },
      journeyCreatedEvent(journey),
    );
    if (typeof outcome === 'object') return { created: true, journey: outcome };
    if (outcome === 'VERSIONS_CHANGED') {
      current = await termsOf(ctx, policy.id, true);
      continue;
    }
    // Taken: by the same provider_reference (answered with that journey), or by an overlap.
    const existing = await stored();
    if (existing !== undefined) return { created: false, journey: existing };
    const other = await findOverlappingJourney(ctx.db, tenant, policy.id, { startAt, endAt });
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

/** Each item on its own, in order; a failure is reported on its item (a 5xx with its cause, to be logged). */
async function createBatch(
  create: (tenant: Tenant, input: JourneyInput) => Promise<{ created: boolean; journey: JourneyRecord }>,
  tenant: Tenant,
  items: readonly BatchItem[],
): Promise<BatchOutcome[]> {
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
}

/** A client's journeys, one or a batch, with `afterStored` run after each. */
export function createJourneyIngestion(deps: JourneyServiceDeps) {
  // NOTE: what ingestion needs of a policy is cached, so that a journey costs one statement: the
  // policy's identity (which never changes) and its versions' terms, kept with the version count they were
  // read at. Versions are immutable and appended only together with the count, and the insert is guarded
  // by that count, so a stale entry can never rate a journey: it only costs a re-read and a retry.
  const ctx: Ingestion = {
    db: deps.db,
    // Journeys arriving while others are being stored go together: one statement and one commit.
    storeJourney: batchedCalls(deps.prepared, { fn: 'store_journey', arity: STORE_JOURNEY_ARITY }),
    clock: deps.clock,
    geocoder: deps.geocoder,
    policies: new BoundedCache<string, PolicyIdentity>(POLICY_CACHE_SIZE),
    terms: new BoundedCache<string, Omit<Terms, 'fresh'>>(POLICY_CACHE_SIZE),
  };
  const { afterStored } = deps;

  async function create(
    tenant: Tenant,
    input: JourneyInput,
  ): Promise<{ created: boolean; journey: JourneyRecord }> {
    const result = await storeClientJourney(ctx, tenant, input);
    if (afterStored !== undefined) await afterStored(tenant, result.journey);
    return result;
  }

  return {
    create,
    createBatch: (tenant: Tenant, items: readonly BatchItem[]) => createBatch(create, tenant, items),
  };
}
