/**
 * Score disputes: a policyholder disputes a driving event once; staff accept it (the event stops counting,
 * the trip's and month's scores are worked out again in the decision's transaction) or reject it with a
 * reason; either way the policyholder is emailed and `score.dispute_decided` is recorded.
 */
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Executor } from '../../schema.ts';
import { findPolicyholderContact } from '../accounts/index.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import { scoreDisputeDecidedEmail, type NotificationService } from '../notifications/index.ts';
import { policyUsageTermsQuery } from '../policies/index.ts';
import {
  decideDispute,
  findCountingEvent,
  findDispute,
  insertDispute,
  listDisputesInState,
  listPolicyDisputes,
  updateClosedMonthScore,
  type DisputeRecord,
} from './dispute-repository.ts';
import { rescoreTrip } from './dispute-recut.ts';
import type { DisputeState } from './score-repository.ts';
import type { DisputeDecision, DisputeView, NewDispute } from './score-schemas.ts';
import { monthFigures, readablePolicy, scoringRulesOf, type ScoreReader } from './score-figures.ts';
import { listMonthTrips, lockMonthScores } from './score-repository.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The staff queue's page: the oldest first, and a queue longer than this is worked from its head. */
const QUEUE_LIMIT = 500;

/** Who decides a dispute: a staff member. */
export interface DisputeDecider {
  readonly staffId: string;
  readonly email: string;
}

const londonTime = (at: Date): string =>
  at.toLocaleString('en-GB', { timeZone: 'Europe/London', dateStyle: 'long', timeStyle: 'short' });

/** A dispute as the API shows it; `company_reference` for staff only. */
export function disputeView(d: DisputeRecord, policyReference: string, staff = false): DisputeView {
  return {
    dispute_reference: d.id,
    policy_reference: policyReference,
    journey_reference: d.journeyId,
    event_reference: d.eventId,
    kind: d.kind as DisputeView['kind'],
    occurred_at: d.occurredAt.toISOString(),
    reason: d.reason,
    details: d.details,
    state: d.state,
    created_at: d.createdAt.toISOString(),
    decided_at: d.decidedAt === null ? null : d.decidedAt.toISOString(),
    decision_reason: d.decisionReason,
    ...(staff ? { company_reference: d.companyReference } : {}),
  };
}

async function policyReferenceOf(db: Executor, policyId: string): Promise<string> {
  const policy = await policyUsageTermsQuery(db).where('p.id', '=', policyId).executeTakeFirst();
  return policy?.policy_reference ?? '';
}

/** The accepted event stops counting: its trip's score, and its month's (when closed), rewritten. */
async function rescore(trx: Executor, d: DisputeRecord): Promise<number | null> {
  await lockMonthScores(trx, d.policyId);
  const tenant = asTenant(d.companyId, d.environment as DataEnvironment);
  const rulesAt = await scoringRulesOf(trx, tenant, d.policyId);
  if (rulesAt !== undefined) await rescoreTrip(trx, d.policyId, d.journeyId, rulesAt);
  const month = monthFigures(await listMonthTrips(trx, d.policyId, d.month, d.month)).score;
  await updateClosedMonthScore(trx, d.policyId, d.month, month);
  return month;
}

/** Emails the policyholder the decision, in the decision's transaction. */
async function emailDecision(
  notifications: NotificationService,
  trx: Executor,
  d: DisputeRecord,
  policyReference: string,
  month: number | null,
) {
  const policy = await policyUsageTermsQuery(trx).where('p.id', '=', d.policyId).executeTakeFirst();
  const contact = policy === undefined ? undefined : await findPolicyholderContact(trx, policy.user_id);
  if (policy === undefined || contact === undefined) return;
  const outcome = d.state === 'accepted' ? 'accepted' : 'rejected';
  await notifications.queueEmail(
    trx,
    { companyId: d.companyId, environment: d.environment },
    `score-dispute-${outcome}`,
    contact.email,
    scoreDisputeDecidedEmail({
      firstNames: contact.firstNames,
      policyReference,
      kind: d.kind,
      occurredAt: londonTime(d.occurredAt),
      outcome,
      reason: d.decisionReason ?? '',
      month: d.month,
      monthScore: month,
    }),
    policy.user_id,
  );
}

export function createDisputeService(deps: {
  db: Executor;
  clock: Clock;
  notifications: NotificationService;
}) {
  const { db, clock, notifications } = deps;

  return {
    /** POST /policys/:ref/score-events/:event/disputes: a pending dispute of a counting event, once. */
    async open(
      tenant: Tenant,
      reader: ScoreReader,
      policyReference: string,
      eventReference: string,
      body: NewDispute,
    ): Promise<DisputeView> {
      if (body.reason === 'other' && body.details === undefined)
        throw new AppError('VALIDATION_FAILED', 'details are required when the reason is other', {
          errors: [{ path: '/body/details', message: 'is required when reason is other' }],
        });
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const policy = await readablePolicy(trx, tenant, reader, policyReference);
        const event = UUID.test(eventReference)
          ? await findCountingEvent(trx, policy.id, eventReference)
          : undefined;
        if (event === undefined) throw notFound('event');
        const id = await insertDispute(trx, {
          policyId: policy.id,
          companyId: tenant.companyId,
          environment: tenant.environment,
          eventId: eventReference,
          ...event,
          reason: body.reason,
          details: body.details?.trim() ?? null,
          at: now,
        });
        if (id === undefined) throw new AppError('EVENT_ALREADY_DISPUTED', 'The event is disputed already');
        const dispute = await findDispute(trx, id);
        if (dispute === undefined) throw notFound('dispute');
        return disputeView(dispute, policy.policy_reference);
      });
    },

    /** GET /policys/:ref/score-disputes: the policy's disputes, newest first. */
    async list(tenant: Tenant, reader: ScoreReader, policyReference: string): Promise<DisputeView[]> {
      const policy = await readablePolicy(db, tenant, reader, policyReference);
      const disputes = await listPolicyDisputes(db, policy.id);
      return disputes.map((d) => disputeView(d, policy.policy_reference));
    },

    /** GET /admin/score-disputes: one state's disputes across companies, oldest first. */
    async queue(state: DisputeState): Promise<DisputeView[]> {
      const disputes = await listDisputesInState(db, state, QUEUE_LIMIT);
      const references = new Map<string, string>();
      for (const d of disputes)
        if (!references.has(d.policyId)) references.set(d.policyId, await policyReferenceOf(db, d.policyId));
      return disputes.map((d) => disputeView(d, references.get(d.policyId) ?? '', true));
    },

    /** GET /admin/score-disputes/:ref. */
    async get(reference: string): Promise<DisputeView> {
      const dispute = UUID.test(reference) ? await findDispute(db, reference) : undefined;
      if (dispute === undefined) throw notFound('dispute');
      return disputeView(dispute, await policyReferenceOf(db, dispute.policyId), true);
    },

    /**
     * POST /admin/score-disputes/:ref/decision: a pending dispute decided once (409 DISPUTE_DECIDED after),
     * its scores rewritten when accepted, the policyholder emailed and the webhook event recorded, all in
     * one transaction.
     */
    async decide(
      reference: string,
      decider: DisputeDecider,
      decision: DisputeDecision,
    ): Promise<DisputeView> {
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const found = UUID.test(reference) ? await findDispute(trx, reference, { lock: true }) : undefined;
        if (found === undefined) throw notFound('dispute');
        if (found.state !== 'pending')
          throw new AppError('DISPUTE_DECIDED', `The dispute was ${found.state} already`);
        const state: 'accepted' | 'rejected' = decision.decision === 'accept' ? 'accepted' : 'rejected';
        const reason = decision.reason.trim();
        await decideDispute(trx, found, {
          state,
          reason,
          decidedBy: `staff:${decider.email}`,
          staffId: decider.staffId,
          at: now,
        });
        const decided: DisputeRecord = { ...found, state, decisionReason: reason, decidedAt: now };
        const month = state === 'accepted' ? await rescore(trx, decided) : null;
        const policyReference = await policyReferenceOf(trx, found.policyId);
        await recordEvent(
          trx,
          { companyId: found.companyId, environment: found.environment },
          'score.dispute_decided',
          { policy_reference: policyReference, dispute_reference: found.id, decision: state },
          now,
        );
        await emailDecision(notifications, trx, decided, policyReference, month);
        return disputeView(decided, policyReference, true);
      });
    },
  };
}

export type DisputeService = ReturnType<typeof createDisputeService>;
