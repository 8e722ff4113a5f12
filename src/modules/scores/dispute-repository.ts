import type { Executor } from '../../schema.ts';
import { companyLabels } from '../companies/index.ts';
import type { DisputeReason, DisputeState } from './score-repository.ts';

/** A dispute as stored, with what its views show of its event. */
export interface DisputeRecord {
  readonly id: string;
  readonly policyId: string;
  readonly companyId: string;
  readonly environment: string;
  readonly eventId: string;
  readonly journeyId: string;
  readonly month: string;
  readonly kind: string;
  readonly occurredAt: Date;
  readonly reason: DisputeReason;
  readonly details: string | null;
  readonly state: DisputeState;
  readonly decisionReason: string | null;
  readonly createdAt: Date;
  readonly decidedAt: Date | null;
  readonly companyReference: string;
}

function disputeQuery(db: Executor) {
  return db
    .selectFrom('score_disputes as d')
    .innerJoin('trip_score_events as e', (join) =>
      join.onRef('e.policy_id', '=', 'd.policy_id').onRef('e.id', '=', 'd.event_id'),
    )
    .innerJoin(companyLabels(db).as('c'), 'c.id', 'd.company_id')
    .select([
      'd.id',
      'd.policy_id',
      'd.company_id',
      'd.environment',
      'd.event_id',
      'd.journey_id',
      'd.month',
      'e.kind',
      'e.occurred_at',
      'd.reason',
      'd.details',
      'd.state',
      'd.decision_reason',
      'd.created_at',
      'd.decided_at',
      'c.company_reference',
    ]);
}

type DisputeRow = Awaited<ReturnType<ReturnType<typeof disputeQuery>['execute']>>[number];

const toRecord = (r: DisputeRow): DisputeRecord => ({
  id: r.id,
  policyId: r.policy_id,
  companyId: r.company_id,
  environment: r.environment,
  eventId: r.event_id,
  journeyId: r.journey_id,
  month: r.month,
  kind: r.kind,
  occurredAt: r.occurred_at,
  reason: r.reason,
  details: r.details,
  state: r.state,
  decisionReason: r.decision_reason,
  createdAt: r.created_at,
  decidedAt: r.decided_at,
  companyReference: r.company_reference,
});

/** An event of a policy's trip that still stands (its trip not voided), with its trip's month. */
export async function findCountingEvent(
  db: Executor,
  policyId: string,
  eventId: string,
): Promise<{ journeyId: string; month: string } | undefined> {
  const row = await db
    .selectFrom('trip_score_events as e')
    .innerJoin('trip_scores as t', (join) =>
      join.onRef('t.policy_id', '=', 'e.policy_id').onRef('t.journey_id', '=', 'e.journey_id'),
    )
    .select(['e.journey_id', 't.month'])
    .where('e.policy_id', '=', policyId)
    .where('e.id', '=', eventId)
    .where('t.voided_at', 'is', null)
    .executeTakeFirst();
  return row === undefined ? undefined : { journeyId: row.journey_id, month: row.month };
}

/**
 * Inserts a pending dispute of an event; undefined when the event has one already (the unique
 * `(policy_id, event_id)` decides, so two racing disputes make one).
 */
export async function insertDispute(
  trx: Executor,
  values: {
    policyId: string;
    companyId: string;
    environment: string;
    eventId: string;
    journeyId: string;
    month: string;
    reason: DisputeReason;
    details: string | null;
    at: Date;
  },
): Promise<string | undefined> {
  const row = await trx
    .insertInto('score_disputes')
    .values({
      policy_id: values.policyId,
      company_id: values.companyId,
      environment: values.environment,
      event_id: values.eventId,
      journey_id: values.journeyId,
      month: values.month,
      reason: values.reason,
      details: values.details,
      state: 'pending',
      decision_reason: null,
      decided_by: null,
      decided_staff_id: null,
      created_at: values.at,
      decided_at: null,
    })
    .onConflict((oc) => oc.constraint('score_disputes_event_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

/** One dispute by its reference (any company: staff reads), optionally locked for a decision. */
export async function findDispute(
  db: Executor,
  id: string,
  options: { lock?: boolean } = {},
): Promise<DisputeRecord | undefined> {
  let q = disputeQuery(db).where('d.id', '=', id);
  if (options.lock === true) q = q.forUpdate('d');
  const row = await q.executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/** A policy's disputes, newest first. */
export async function listPolicyDisputes(db: Executor, policyId: string): Promise<DisputeRecord[]> {
  const rows = await disputeQuery(db)
    .where('d.policy_id', '=', policyId)
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .execute();
  return rows.map(toRecord);
}

/** Disputes in one state across companies (the staff queue), oldest first, at most `limit`. */
export async function listDisputesInState(
  db: Executor,
  state: DisputeState,
  limit: number,
): Promise<DisputeRecord[]> {
  const rows = await disputeQuery(db)
    .where('d.state', '=', state)
    .orderBy('d.created_at')
    .orderBy('d.id')
    .limit(limit)
    .execute();
  return rows.map(toRecord);
}

/** Sets a pending dispute's decision (the caller holds its lock). */
export async function decideDispute(
  trx: Executor,
  dispute: { policyId: string; id: string },
  decision: { state: 'accepted' | 'rejected'; reason: string; decidedBy: string; staffId: string; at: Date },
): Promise<void> {
  await trx
    .updateTable('score_disputes')
    .set({
      state: decision.state,
      decision_reason: decision.reason,
      decided_by: decision.decidedBy,
      decided_staff_id: decision.staffId,
      decided_at: decision.at,
    })
    .where('policy_id', '=', dispute.policyId)
    .where('id', '=', dispute.id)
    .where('state', '=', 'pending')
    .execute();
}

/** The months of a policy in [fromMonth, toMonth] with a pending dispute. */
export async function listDisputedMonths(
  db: Executor,
  policyId: string,
  fromMonth: string,
  toMonth: string,
): Promise<Set<string>> {
  const rows = await db
    .selectFrom('score_disputes')
    .select('month')
    .distinct()
    .where('policy_id', '=', policyId)
    .where('state', '=', 'pending')
    .where('month', '>=', fromMonth)
    .where('month', '<=', toMonth)
    .execute();
  return new Set(rows.map((r) => r.month));
}

/** A trip's stored figures and the kinds of its events that still count (none accepted in a dispute). */
export async function findTripForRescore(
  trx: Executor,
  policyId: string,
  journeyId: string,
): Promise<
  | {
      startAt: Date;
      month: string;
      distanceMetres: number;
      nightMetres: number;
      counting: Array<{ kind: string }>;
    }
  | undefined
> {
  const trip = await trx
    .selectFrom('trip_scores')
    .select(['start_at', 'month', 'distance_metres', 'night_metres'])
    .where('policy_id', '=', policyId)
    .where('journey_id', '=', journeyId)
    .forUpdate()
    .executeTakeFirst();
  if (trip === undefined) return undefined;
  const counting = await trx
    .selectFrom('trip_score_events as e')
    .select('e.kind')
    .where('e.policy_id', '=', policyId)
    .where('e.journey_id', '=', journeyId)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('score_disputes as d')
            .select('d.id')
            .whereRef('d.policy_id', '=', 'e.policy_id')
            .whereRef('d.event_id', '=', 'e.id')
            .where('d.state', '=', 'accepted'),
        ),
      ),
    )
    .execute();
  return {
    startAt: trip.start_at,
    month: trip.month,
    distanceMetres: trip.distance_metres,
    nightMetres: trip.night_metres,
    counting,
  };
}

/** Rewrites a trip's score (a dispute accepted). */
export async function updateTripScore(
  trx: Executor,
  policyId: string,
  journeyId: string,
  score: number | null,
): Promise<void> {
  await trx
    .updateTable('trip_scores')
    .set({ score: score === null ? null : score.toFixed(1) })
    .where('policy_id', '=', policyId)
    .where('journey_id', '=', journeyId)
    .execute();
}

/** Rewrites a closed month's score (a dispute accepted after it closed); nothing for a month still open. */
export async function updateClosedMonthScore(
  trx: Executor,
  policyId: string,
  month: string,
  score: number | null,
): Promise<void> {
  await trx
    .updateTable('score_months')
    .set({ score: score === null ? null : score.toFixed(1) })
    .where('policy_id', '=', policyId)
    .where('month', '=', month)
    .execute();
}

/** Deletes the disputes of some policies (their policyholder's erasure); returns how many. */
export async function deleteDisputes(trx: Executor, policyIds: readonly string[]): Promise<number> {
  if (policyIds.length === 0) return 0;
  const deleted = await trx
    .deleteFrom('score_disputes')
    .where('policy_id', 'in', policyIds)
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}

/** The disputes of events of some of a policy's trips, with their events' kind and time. */
export async function listTripDisputes(
  trx: Executor,
  policyId: string,
  journeyIds: readonly string[],
): Promise<Array<{ id: string; state: DisputeState; kind: string; occurredAt: Date }>> {
  if (journeyIds.length === 0) return [];
  const rows = await trx
    .selectFrom('score_disputes as d')
    .innerJoin('trip_score_events as e', (join) =>
      join.onRef('e.policy_id', '=', 'd.policy_id').onRef('e.id', '=', 'd.event_id'),
    )
    .select(['d.id', 'd.state', 'e.kind', 'e.occurred_at'])
    .where('d.policy_id', '=', policyId)
    .where('e.journey_id', 'in', journeyIds)
    .orderBy('e.occurred_at')
    .orderBy('d.id')
    .forUpdate('d')
    .execute();
  return rows.map((r) => ({ id: r.id, state: r.state, kind: r.kind, occurredAt: r.occurred_at }));
}

/** The events of some of a policy's trips, with their trip's month. */
export async function listTripEvents(
  trx: Executor,
  policyId: string,
  journeyIds: readonly string[],
): Promise<Array<{ id: string; journeyId: string; month: string; kind: string; occurredAt: Date }>> {
  if (journeyIds.length === 0) return [];
  const rows = await trx
    .selectFrom('trip_score_events as e')
    .innerJoin('trip_scores as t', (join) =>
      join.onRef('t.policy_id', '=', 'e.policy_id').onRef('t.journey_id', '=', 'e.journey_id'),
    )
    .select(['e.id', 'e.journey_id', 't.month', 'e.kind', 'e.occurred_at'])
    .where('e.policy_id', '=', policyId)
    .where('e.journey_id', 'in', journeyIds)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    journeyId: r.journey_id,
    month: r.month,
    kind: r.kind,
    occurredAt: r.occurred_at,
  }));
}

/** Moves a dispute, decision and all, to another event of its policy (the same event, re-cut). */
export async function moveDispute(
  trx: Executor,
  policyId: string,
  id: string,
  to: { eventId: string; journeyId: string; month: string },
): Promise<void> {
  await trx
    .updateTable('score_disputes')
    .set({ event_id: to.eventId, journey_id: to.journeyId, month: to.month })
    .where('policy_id', '=', policyId)
    .where('id', '=', id)
    .execute();
}
