/** Reads of journeys: a client's of one policy, a policyholder's of their own policies only. */
import { AppError, notFound } from '../../platform/errors.ts';
import { isInstantMs } from '../../platform/instants.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { drivingEventView, listTripScores } from '../scores/index.ts';
import { findPolicyForUsageByReference, listPoliciesForUsageOfPolicyholder } from '../policies/index.ts';
import { UUID } from './journey-context.ts';
import { findJourney, listJourneys, type JourneyRecord } from './journey-repository.ts';
import type { Journey, ListJourneysQuery } from './journey-schemas.ts';
import { journeyView } from './journey-views.ts';

/** Journeys as reads show them: with each device trip's driving score and events. */
async function scoredViews(db: Executor, rows: readonly JourneyRecord[]): Promise<Journey[]> {
  const scores = await listTripScores(db, rows);
  return rows.map((row) => {
    const scored = scores.get(row.id);
    return {
      ...journeyView(row),
      score: scored?.score ?? null,
      events: scored?.events.map(drivingEventView) ?? [],
    };
  });
}

type Reader = { kind: 'client' } | { kind: 'policyholder'; userId: string };

/** Opaque page cursor: the (start, id) of the last journey shown. */
function encodeCursor(journey: JourneyRecord): string {
  return Buffer.from(JSON.stringify([journey.startAt.getTime(), journey.id])).toString('base64url');
}

function decodeCursor(cursor: string): { startAt: Date; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2) {
      const [ms, id] = value as unknown[];
      // NOTE: only instants the service can store and print: a crafted 8.64e15+1 is no Date, and year 0
      // or earlier is no PostgreSQL timestamp.
      if (isInstantMs(ms) && typeof id === 'string' && UUID.test(id)) return { startAt: new Date(ms), id };
    }
  } catch {
    // falls through to the 422 below
  }
  throw new AppError('VALIDATION_FAILED', 'The cursor is not one this service gave out', {
    errors: [{ path: '/querystring/after', message: 'is not a cursor from next_cursor' }],
  });
}

/** The policy ids a reader may see: the named policy (tenant's, or the policyholder's own) or all of theirs. */
async function readablePolicyIds(
  db: Executor,
  tenant: Tenant,
  reader: Reader,
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
  db: Executor,
  tenant: Tenant,
  reader: Reader,
  query: ListJourneysQuery,
): Promise<{ journeys: Journey[]; next_cursor: string | null }> {
  const after = query.after === undefined ? undefined : decodeCursor(query.after);
  const policyIds = await readablePolicyIds(db, tenant, reader, query.policy_reference);
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
    journeys: await scoredViews(db, shown),
    next_cursor: rows.length > limit && last !== undefined ? encodeCursor(last) : null,
  };
}

async function get(
  db: Executor,
  tenant: Tenant,
  reference: string,
  policyIds?: readonly string[],
): Promise<JourneyRecord> {
  const journey = UUID.test(reference) ? await findJourney(db, tenant, reference, policyIds) : undefined;
  if (journey === undefined) throw notFound('journey');
  return journey;
}

export function createJourneyReads(db: Executor) {
  return {
    /** GET /journeys with client credentials: one policy's journeys, by start, a page at a time. */
    async list(tenant: Tenant, query: ListJourneysQuery) {
      return list(db, tenant, { kind: 'client' }, query);
    },

    /** GET /journeys for a policyholder: journeys of their own policies only (another's policy is 404). */
    async listForPolicyholder(tenant: Tenant, userId: string, query: ListJourneysQuery) {
      return list(db, tenant, { kind: 'policyholder', userId }, query);
    },

    /** GET /journeys/:journey_reference with client credentials. */
    async get(tenant: Tenant, reference: string): Promise<Journey> {
      const [view] = await scoredViews(db, [await get(db, tenant, reference)]);
      return view as Journey;
    },

    /** GET /journeys/:journey_reference for a policyholder: only a journey of one of their policies. */
    async getForPolicyholder(tenant: Tenant, userId: string, reference: string): Promise<Journey> {
      const mine = await listPoliciesForUsageOfPolicyholder(db, tenant, userId);
      const journey = await get(
        db,
        tenant,
        reference,
        mine.map((p) => p.id),
      );
      const [view] = await scoredViews(db, [journey]);
      return view as Journey;
    },
  };
}
