import { sql, type Generated } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { DrivingEvent, DrivingEventKind } from './rules/index.ts';

export interface ScoreTables {
  trip_scores: {
    policy_id: string;
    journey_id: string;
    company_id: string;
    environment: string;
    /** London calendar month of the trip's start, `YYYY-MM`. */
    month: string;
    start_at: Date;
    distance_metres: number;
    night_metres: number;
    /** numeric(4,1) as text; null when the trip was too short to score. */
    score: string | null;
    voided_at: Date | null;
    created_at: Date;
  };
  trip_score_events: {
    id: Generated<string>;
    policy_id: string;
    journey_id: string;
    kind: DrivingEventKind;
    occurred_at: Date;
    lat: number;
    lng: number;
    speed_kmh: number;
    acceleration_mps2: number | null;
    duration_seconds: number | null;
  };
  score_months: {
    policy_id: string;
    month: string;
    company_id: string;
    environment: string;
    score: string | null;
    distance_metres: number;
    provisional: boolean;
    closed_at: Date;
  };
  score_disputes: {
    id: Generated<string>;
    policy_id: string;
    company_id: string;
    environment: string;
    event_id: string;
    journey_id: string;
    /** The London month of the disputed event's trip, `YYYY-MM`. */
    month: string;
    reason: DisputeReason;
    details: string | null;
    state: DisputeState;
    decision_reason: string | null;
    /** `staff:<email>` of who decided it. */
    decided_by: string | null;
    decided_staff_id: string | null;
    created_at: Date;
    decided_at: Date | null;
  };
}

export type DisputeReason = 'passenger' | 'gps_error' | 'other';
export type DisputeState = 'pending' | 'accepted' | 'rejected';

/** A trip's score as stored, with its events. */
export interface TripScoreRecord {
  readonly journeyId: string;
  readonly month: string;
  readonly distanceMetres: number;
  readonly nightMetres: number;
  readonly score: number | null;
  readonly events: readonly StoredEvent[];
}

export interface StoredEvent {
  readonly id: string;
  readonly kind: DrivingEventKind;
  readonly occurredAt: Date;
  readonly lat: number;
  readonly lng: number;
  readonly speedKmh: number;
  readonly accelerationMps2: number | null;
  readonly durationSeconds: number | null;
  /** The event's dispute, if it has one. */
  readonly dispute: { readonly id: string; readonly state: DisputeState } | null;
}

export interface NewTripScore {
  readonly journeyId: string;
  readonly month: string;
  readonly startAt: Date;
  readonly distanceMetres: number;
  readonly nightMetres: number;
  readonly score: number | null;
  readonly events: readonly DrivingEvent[];
}

/**
 * Stores trips' scores and events in the caller's transaction; a trip scored already (its journey answered as
 * stored under its provider reference) keeps what it has.
 */
export async function insertTripScores(
  trx: Executor,
  tenant: Tenant,
  policyId: string,
  trips: readonly NewTripScore[],
  at: Date,
): Promise<void> {
  if (trips.length === 0) return;
  const inserted = await trx
    .insertInto('trip_scores')
    .values(
      trips.map((t) => ({
        policy_id: policyId,
        journey_id: t.journeyId,
        company_id: tenant.companyId,
        environment: tenant.environment,
        month: t.month,
        start_at: t.startAt,
        distance_metres: t.distanceMetres,
        night_metres: Math.round(t.nightMetres),
        score: t.score === null ? null : t.score.toFixed(1),
        voided_at: null,
        created_at: at,
      })),
    )
    .onConflict((oc) => oc.constraint('trip_scores_pkey').doNothing())
    .returning('journey_id')
    .execute();
  const fresh = new Set(inserted.map((r) => r.journey_id));
  const events = trips
    .filter((t) => fresh.has(t.journeyId))
    .flatMap((t) =>
      t.events.map((e) => ({
        policy_id: policyId,
        journey_id: t.journeyId,
        kind: e.kind,
        occurred_at: new Date(e.atS * 1000),
        lat: e.lat,
        lng: e.lon,
        speed_kmh: e.speedKmh,
        acceleration_mps2: e.accelerationMps2,
        duration_seconds: e.durationSeconds === null ? null : Math.round(e.durationSeconds),
      })),
    );
  if (events.length > 0) await trx.insertInto('trip_score_events').values(events).execute();
}

/** Marks a voided journey's score as no longer counting (nothing when it has none or is void already). */
export async function markTripScoreVoid(
  trx: Executor,
  policyId: string,
  journeyId: string,
  at: Date,
): Promise<void> {
  await trx
    .updateTable('trip_scores')
    .set({ voided_at: at })
    .where('policy_id', '=', policyId)
    .where('journey_id', '=', journeyId)
    .where('voided_at', 'is', null)
    .execute();
}

/** The stored scores of these journeys (of one or more policies), with their events, by journey id. */
export async function listTripScores(
  db: Executor,
  journeys: ReadonlyArray<{ readonly id: string; readonly policyId: string }>,
): Promise<Map<string, TripScoreRecord>> {
  const found = new Map<string, TripScoreRecord>();
  if (journeys.length === 0) return found;
  const policyIds = [...new Set(journeys.map((j) => j.policyId))];
  const journeyIds = journeys.map((j) => j.id);
  const [rows, events] = await Promise.all([
    db
      .selectFrom('trip_scores')
      .select(['journey_id', 'month', 'distance_metres', 'night_metres', 'score'])
      .where('policy_id', 'in', policyIds)
      .where('journey_id', 'in', journeyIds)
      .execute(),
    db
      .selectFrom('trip_score_events as e')
      .leftJoin('score_disputes as d', (join) =>
        join.onRef('d.policy_id', '=', 'e.policy_id').onRef('d.event_id', '=', 'e.id'),
      )
      .selectAll('e')
      .select(['d.id as dispute_id', 'd.state as dispute_state'])
      .where('e.policy_id', 'in', policyIds)
      .where('e.journey_id', 'in', journeyIds)
      .orderBy('e.occurred_at')
      .orderBy('e.id')
      .execute(),
  ]);
  const byJourney = new Map<string, StoredEvent[]>();
  for (const e of events) {
    let list = byJourney.get(e.journey_id);
    if (list === undefined) byJourney.set(e.journey_id, (list = []));
    list.push({
      id: e.id,
      kind: e.kind,
      occurredAt: e.occurred_at,
      lat: e.lat,
      lng: e.lng,
      speedKmh: e.speed_kmh,
      accelerationMps2: e.acceleration_mps2,
      durationSeconds: e.duration_seconds,
      dispute:
        e.dispute_id === null || e.dispute_state === null
          ? null
          : { id: e.dispute_id, state: e.dispute_state },
    });
  }
  for (const r of rows)
    found.set(r.journey_id, {
      journeyId: r.journey_id,
      month: r.month,
      distanceMetres: r.distance_metres,
      nightMetres: r.night_metres,
      score: r.score === null ? null : Number(r.score),
      events: byJourney.get(r.journey_id) ?? [],
    });
  return found;
}

/** The scored, counting trips of a policy's months in [fromMonth, toMonth], by month. */
export async function listMonthTrips(
  db: Executor,
  policyId: string,
  fromMonth: string,
  toMonth: string,
): Promise<Array<{ month: string; score: number; distanceMetres: number }>> {
  const rows = await db
    .selectFrom('trip_scores')
    .select(['month', 'score', 'distance_metres'])
    .where('policy_id', '=', policyId)
    .where('month', '>=', fromMonth)
    .where('month', '<=', toMonth)
    .where('voided_at', 'is', null)
    .where('score', 'is not', null)
    .orderBy('month')
    .orderBy('start_at')
    .execute();
  return rows.map((r) => ({ month: r.month, score: Number(r.score), distanceMetres: r.distance_metres }));
}

/**
 * A policy's month scores are written one transaction at a time until `trx` ends: a month closing and
 * disputes accepted on its trips at once each read the trips' scores after the others committed, so
 * none writes a month score that misses another's rescore.
 */
export async function lockMonthScores(trx: Executor, policyId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`scores.months:${policyId}`}, 0))`.execute(trx);
}

/** Closed months of a policy in [fromMonth, toMonth]. */
export async function listClosedMonths(
  db: Executor,
  policyId: string,
  fromMonth: string,
  toMonth: string,
): Promise<Map<string, Date>> {
  const rows = await db
    .selectFrom('score_months')
    .select(['month', 'closed_at'])
    .where('policy_id', '=', policyId)
    .where('month', '>=', fromMonth)
    .where('month', '<=', toMonth)
    .execute();
  return new Map(rows.map((r) => [r.month, r.closed_at]));
}

/** Up to `limit` (policy, month) pairs with trips, before `beforeMonth`, not closed yet. */
export async function listMonthsToClose(
  db: Executor,
  beforeMonth: string,
  limit: number,
): Promise<Array<{ policyId: string; month: string; companyId: string; environment: string }>> {
  const rows = await db
    .selectFrom('trip_scores as t')
    .select(['t.policy_id', 't.month', 't.company_id', 't.environment'])
    .where('t.month', '<', beforeMonth)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('score_months as m')
            .select(sql`1`.as('one'))
            .whereRef('m.policy_id', '=', 't.policy_id')
            .whereRef('m.month', '=', 't.month'),
        ),
      ),
    )
    .groupBy(['t.policy_id', 't.month', 't.company_id', 't.environment'])
    .orderBy('t.month')
    .orderBy('t.policy_id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    policyId: r.policy_id,
    month: r.month,
    companyId: r.company_id,
    environment: r.environment,
  }));
}

/** Closes a policy's month once: true when this call closed it (the primary key decides a race). */
export async function insertScoreMonth(
  trx: Executor,
  values: {
    policyId: string;
    month: string;
    companyId: string;
    environment: string;
    score: number | null;
    distanceMetres: number;
    provisional: boolean;
    at: Date;
  },
): Promise<boolean> {
  const row = await trx
    .insertInto('score_months')
    .values({
      policy_id: values.policyId,
      month: values.month,
      company_id: values.companyId,
      environment: values.environment,
      score: values.score === null ? null : values.score.toFixed(1),
      distance_metres: values.distanceMetres,
      provisional: values.provisional,
      closed_at: values.at,
    })
    .onConflict((oc) => oc.constraint('score_months_pkey').doNothing())
    .returning('month')
    .executeTakeFirst();
  return row !== undefined;
}
