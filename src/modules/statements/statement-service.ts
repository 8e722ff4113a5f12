import type { FastifyBaseLogger } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../../platform/clock.ts';
import { forEachConcurrent, mapConcurrent } from '../../platform/concurrency.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, isUniqueViolation, notFound } from '../../platform/errors.ts';
import { recordEvent, recordEvents } from '../../platform/events.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { fromPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import type { NotificationService, StatementIssuedValues } from '../notifications/index.ts';
import { carriedForward, type ChargeOutcome, type PaymentService } from '../payments/index.ts';
import { appendStatementVersions, findPolicy } from '../policies/index.ts';
import { totalKilometres, totalMiles, type JourneyService } from '../journeys/index.ts';
import {
  addCredits,
  billJourneys,
  creditBalances,
  listCredits,
  creditVoidedJourneys,
  findStatement,
  insertStatements,
  lastStatement,
  dueForBilling,
  countDueForBilling,
  listStatementJourneys,
  listStatements,
  lockBillingStates,
  setStatementPayments,
  type BilledJourney,
  type BillingState,
  type ClaimedTotals,
  type StatementRow,
} from './statement-repository.ts';
import type { Statement } from './statement-schemas.ts';
import {
  automaticPeriodEnd,
  billingDateIn,
  installmentsDue,
  londonDate,
  londonMidnight,
  nextPeriod,
} from './statement-period.ts';
import { newId } from '../../platform/ids.ts';
import { applyUsageRules, productRulesOf } from './usage-billing.ts';
import {
  keepOdometers,
  listStatementOdometers,
  reconcileOdometers,
  type StatementOdometer,
} from './odometer-billing.ts';
import { discrepancyPercent } from './rules/odometer.ts';
import type { CappedDay, StatementRulesResult } from './rules/usage-rules.ts';

export const BILL_CHUNK_QUEUE = 'statements.bill-chunk';
export const BILLING_RUN_QUEUE = 'statements.billing-run';
export const FINAL_STATEMENT_QUEUE = 'statements.final';
/**
 * Policies billed in one transaction. Each chunk costs a fixed number of statements, so bigger chunks
 * amortise round trips; past about a thousand the gain is small and a failed chunk retries more work.
 */
/** How many of a term's installments fall due within [periodStart, periodEnd]. */
function termInstallments(
  plan: { billingDay: number | null; subscriptionInstallments: number | null },
  termStartAt: Date,
  periodStart: Date,
  periodEnd: Date,
): number {
  if (periodEnd.getTime() < periodStart.getTime()) return 0;
  return installmentsDue({
    policyStart: termStartAt,
    billingDay: plan.billingDay ?? Number(londonDate(termStartAt).slice(8)),
    count: plan.subscriptionInstallments ?? 12,
    periodStart,
    periodEnd,
  }).length;
}

/** The currency statements are billed in (companies bill in GBP). */
const CURRENCY = 'GBP';
const CHUNK_SIZE = 1000;
/**
 * Chunks billed at once by one process. NOTE: more than the cores: a chunk's connection spends much of
 * its time waiting (on this process, on WAL writes, on the commit), and at 20,000 policies on a busy
 * 2-core machine four chunks at once billed 3,540–3,900 policies/s where two billed 2,540–2,600
 * (eight: 3,190); the pool keeps the rest of its connections for everything else.
 */
const BILLING_CONCURRENCY = 4;
/** Due policies read at a time: twenty chunks, a few megabytes. */
const DUE_PAGE_SIZE = 20 * CHUNK_SIZE;
/** Card charges in flight at once after a chunk commits. */
const COLLECT_CONCURRENCY = 8;

/** The rules' lines of a statement whose policy's product has no rules (or that names none). */
const NO_RULES: Pick<
  StatementRulesResult,
  'capCreditPence' | 'annualCapCreditPence' | 'freeDistanceCreditPence' | 'minimumTopUpPence' | 'cappedDays'
> = {
  capCreditPence: 0,
  annualCapCreditPence: 0,
  freeDistanceCreditPence: 0,
  minimumTopUpPence: 0,
  cappedDays: [],
};

const NO_JOURNEYS: ClaimedTotals = {
  journeyCount: 0,
  lateJourneyCount: 0,
  usagePremiumPence: 0,
  distanceMetres: 0,
  durationSeconds: 0,
  busiestDayMetres: 0,
  firstStartAt: null,
};

interface StatementRequest {
  readonly policyId: string;
  /** The end of the period asked for (whole seconds are kept). */
  readonly endAt: Date;
  /** An automatic billing day (`YYYY-MM-DD`): at most one statement a policy for it. */
  readonly billingDate?: string | undefined;
  /** The last statement of an ended policy. */
  readonly final?: boolean;
  readonly allowEnded?: boolean;
}

interface Written {
  readonly state: BillingState;
  readonly row: StatementRow;
  /** The card charge recorded with the statement, to attempt after commit. */
  readonly paymentId: string | undefined;
  /** The odometer readings it compared, when readings cover it. */
  readonly odometer: StatementOdometer | undefined;
}

type StatementOutcome =
  | ({ readonly kind: 'written' } & Written)
  | { readonly kind: 'not_found' }
  | { readonly kind: 'not_active'; readonly status: string }
  /** The period asked for ends before it would start: already billed that far. */
  | {
      readonly kind: 'not_after_previous';
      readonly previousEndAt: Date | null;
      readonly firstStartAt: Date | null;
    };

/** The period cannot end there: before the previous statement's end, or (the first) before the policy's start. */
const periodConflict = (previousEndAt: Date | null, firstStartAt: Date | null) =>
  previousEndAt === null
    ? new AppError(
        'STATEMENT_PERIOD_CONFLICT',
        `effective_date must be after the policy's start_date${firstStartAt === null ? '' : ` (${firstStartAt.toISOString()})`}: a first statement covers the policy from its start`,
        { errors: [{ path: '/body/effective_date', message: "must be after the policy's start_date" }] },
      )
    : new AppError(
        'STATEMENT_PERIOD_CONFLICT',
        `effective_date must be after the previous statement's end (${previousEndAt.toISOString()})`,
        {
          errors: [
            { path: '/body/effective_date', message: 'must be after the end of the previous statement' },
          ],
        },
      );

export type StatementView = Statement;

const journeyInStatement = (j: BilledJourney) => ({
  journey_reference: j.id,
  provider_reference: j.providerReference,
  policy_reference: j.policyReference,
  policy_version_reference: j.policyVersionId,
  route: j.route,
  distance_in_metres: j.distanceMetres,
  distance_units: j.distanceUnit === 'km' ? 'kms' : 'miles',
  total_miles: totalMiles(j.distanceMetres),
  total_kms: totalKilometres(j.distanceMetres),
  usage_rate: Number(j.usageRate),
  usage_premium: fromPence(j.usagePremiumPence),
  start_lat: j.startLat,
  start_long: j.startLng,
  end_lat: j.endLat,
  end_long: j.endLng,
  start_at: j.startAt.toISOString(),
  end_at: j.endAt.toISOString(),
  start_name: j.startName,
  end_name: j.endName,
  start_postcode: j.startPostcode,
  end_postcode: j.endPostcode,
  is_void: j.isVoid,
  source: j.source,
  is_estimated: j.source === 'estimate',
});

/** A statement's odometer block: the readings it compared and the distances between them. */
const odometerInStatement = (o: StatementOdometer) => {
  const odometerMetres = o.end.readingMetres - o.start.readingMetres;
  return {
    start_reading_metres: o.start.readingMetres,
    start_reading_time: o.start.at.toISOString(),
    end_reading_metres: o.end.readingMetres,
    end_reading_time: o.end.at.toISOString(),
    odometer_distance_in_metres: odometerMetres,
    gps_distance_in_metres: o.gpsMetres,
    discrepancy_percent: discrepancyPercent(odometerMetres, o.gpsMetres),
  };
};

const cappedDaysOf = (row: StatementRow): CappedDay[] =>
  typeof row.capped_days === 'string' ? (JSON.parse(row.capped_days) as CappedDay[]) : row.capped_days;

function toView(
  policyReference: string,
  row: StatementRow,
  journeys: BilledJourney[],
  current: boolean,
  payment: ChargeOutcome | undefined,
  odometer: StatementOdometer | undefined,
): StatementView {
  return {
    policy_reference: policyReference,
    policy_version_reference: row.id,
    current,
    distance_in_metres: row.distance_metres,
    duration_in_mins: Math.round(row.duration_seconds / 60),
    total_miles: totalMiles(row.distance_metres),
    total_kms: totalKilometres(row.distance_metres),
    subscription_premium: fromPence(row.subscription_premium_pence),
    usage_premium: fromPence(row.usage_premium_pence),
    total_premium: fromPence(row.total_premium_pence),
    billed_premium: fromPence(row.billed_premium_pence),
    capped_days: cappedDaysOf(row).map((d) => ({
      date: d.date,
      distance_driven_in_metres: d.drivenMetres,
      distance_charged_in_metres: d.chargedMetres,
      credit: fromPence(d.creditPence),
    })),
    cap_credit: fromPence(row.cap_credit_pence),
    annual_cap_credit: fromPence(row.annual_cap_credit_pence),
    free_distance_credit: fromPence(row.free_distance_credit_pence),
    minimum_top_up: fromPence(row.minimum_top_up_pence),
    credits_used: fromPence(row.credits_used_pence),
    carried_forward: fromPence(row.carried_forward_pence),
    brought_forward: fromPence(row.brought_forward_pence),
    subscription_installments: row.installments,
    statement_start_date: row.period_start_at.toISOString(),
    statement_end_date: row.period_end_at.toISOString(),
    journey_count: row.journey_count,
    journeys: journeys.map(journeyInStatement),
    odometer: odometer === undefined ? null : odometerInStatement(odometer),
    ...(payment === undefined
      ? {}
      : {
          payment: {
            payment_amount: payment.payment_amount,
            ...(payment.error_message === undefined ? {} : { error_message: payment.error_message }),
          },
        }),
  };
}

const wholeSeconds = (at: Date): Date => new Date(Math.floor(at.getTime() / 1000) * 1000);

export interface BillingRunCounts {
  date: string;
  due: number;
  billed: number;
  already_billed: number;
  failed: number;
}

/** A policy a billing run could not bill, and why (its error's message). */
export interface BillingFailure {
  readonly policy_reference: string;
  readonly reason: string;
}

/**
 * Statements: continuous periods, each journey billed exactly once (by the period holding its start,
 * or the next one for a late upload),
 * subscription installments due in the period, credits from the ledger, then the card charge after
 * commit. Automatic billing days and final statements on cancellation and lapse.
 */
export function createStatementService(deps: {
  db: Executor;
  clock: Clock;
  jobs: Jobs;
  notifications: NotificationService;
  payments: PaymentService;
  logger: FastifyBaseLogger;
  billingRunAt: string;
  metrics?: Registry;
  /** Stores odometer reconciliations in the statement's transaction. */
  journeys: Pick<JourneyService, 'storeIn'>;
}) {
  const { db, clock, jobs, notifications, payments, logger } = deps;
  const billed = new Counter({
    name: 'billing_run_policies_total',
    help: 'Policies handled by billing runs, by outcome (billed, already_billed, failed)',
    labelNames: ['outcome'],
    registers: deps.metrics === undefined ? [] : [deps.metrics],
  });
  // NOTE: heartbeats, so that a run or chunk whose worker died (kill -9, a lost machine) is retried
  // within seconds, not when its hour of expiry is up; a retried chunk bills nobody twice.
  jobs.define({
    name: BILLING_RUN_QUEUE,
    options: { retryLimit: 2, expireInSeconds: 3600, heartbeatSeconds: 10 },
  });
  jobs.define({
    name: BILL_CHUNK_QUEUE,
    options: { retryLimit: 5, retryDelay: 5, expireInSeconds: 3600, heartbeatSeconds: 10 },
  });
  jobs.define({
    name: FINAL_STATEMENT_QUEUE,
    options: { retryLimit: 5, retryDelay: 60, retryBackoff: true },
  });

  /**
   * Writes the statements of many policies in the caller's transaction, in a fixed number of statements
   * whatever their count: locks the policies (id order), reads their terms and last periods, sums the
   * period's journeys and owed void credits, draws on the credit ledger, and writes the `st` versions,
   * statements, events and emails. The rules (periods, installments, credits) are the same for one
   * policy (POST /statements) as for a billing run's chunk.
   */
  async function writeStatements(
    trx: Executor,
    requests: readonly StatementRequest[],
  ): Promise<Map<string, StatementOutcome>> {
    const now = clock.now();
    const outcomes = new Map<string, StatementOutcome>();
    const states = new Map(
      (
        await lockBillingStates(
          trx,
          requests.map((r) => r.policyId),
        )
      ).map((st) => [st.policyId, st]),
    );

    const planned: Array<{
      request: StatementRequest;
      state: BillingState;
      id: string;
      start: Date;
      end: Date;
    }> = [];
    for (const request of requests) {
      const state = states.get(request.policyId);
      if (state === undefined) {
        outcomes.set(request.policyId, { kind: 'not_found' });
        continue;
      }
      if (state.status !== 'active' && request.allowEnded !== true) {
        outcomes.set(request.policyId, { kind: 'not_active', status: state.status });
        continue;
      }
      const period = nextPeriod(state.previousEndAt, state.firstStartAt, wholeSeconds(request.endAt));
      if (!period.ok) {
        outcomes.set(request.policyId, {
          kind: 'not_after_previous',
          previousEndAt: state.previousEndAt,
          firstStartAt: state.firstStartAt,
        });
        continue;
      }
      planned.push({ request, state, id: newId(), start: period.start, end: period.end });
    }
    if (planned.length === 0) return outcomes;

    const products = await productRulesOf(
      trx,
      planned.map((p) => p.state),
    );
    // Before the period's journeys are claimed: a reconciliation is one of them.
    const odometers = await reconcileOdometers(
      trx,
      planned.map((p) => ({
        statementId: p.id,
        policyId: p.state.policyId,
        policyReference: p.state.policyReference,
        companyId: p.state.companyId,
        environment: p.state.environment,
        productReference: p.state.productReference,
        afterAt: p.state.previousEndAt,
        periodStartAt: p.start,
        periodEndAt: p.end,
      })),
      (...args) => deps.journeys.storeIn(...args),
      now,
    );
    const claimed = await billJourneys(
      trx,
      planned.map((p) => ({
        statementId: p.id,
        policyId: p.state.policyId,
        afterAt: p.state.previousEndAt,
        endAt: p.end,
        byDay: products.has(p.state.policyId),
      })),
    );
    const priced = planned.map((p) => {
      const totals = claimed.get(p.id) ?? NO_JOURNEYS;
      const { termStartAt, previousTerm } = p.state;
      // A period that spans two terms carries the installments of each, at each term's price.
      const current = termInstallments(p.state, termStartAt, p.start, p.end);
      const earlier =
        previousTerm === null || p.start.getTime() >= termStartAt.getTime()
          ? 0
          : termInstallments(
              previousTerm,
              previousTerm.startAt,
              p.start,
              new Date(Math.min(p.end.getTime(), termStartAt.getTime() - 1000)),
            );
      const installments = current + earlier;
      const subscriptionPence =
        current * p.state.subscriptionPremiumPence + earlier * (previousTerm?.subscriptionPremiumPence ?? 0);
      return {
        ...p,
        totals,
        installments,
        subscriptionPence,
        totalPence: totals.usagePremiumPence + subscriptionPence,
      };
    });
    await appendStatementVersions(
      trx,
      priced.map((p) => ({
        id: p.id,
        policyId: p.state.policyId,
        versionCount: p.state.versionCount,
        startAt: p.start,
        endAt: p.end,
        usagePremiumPence: p.totals.usagePremiumPence,
      })),
      now,
    );

    // Credits: billed journeys voided since become ledger credits (what was paid for them), then the
    // product rules take their lines, then the balance pays what it can.
    const voided = await creditVoidedJourneys(
      trx,
      priced.map((p) => ({ statementId: p.id, policyId: p.state.policyId })),
      now,
    );
    const ruled = await applyUsageRules(
      trx,
      products,
      priced.map((p) => ({
        statementId: p.id,
        policyId: p.state.policyId,
        companyId: p.state.companyId,
        environment: p.state.environment,
        productReference: p.state.productReference,
        afterAt: p.state.previousEndAt,
        endAt: p.end,
        termStartAt: p.state.termStartAt,
        distanceMetres: p.totals.distanceMetres,
        usagePremiumPence: p.totals.usagePremiumPence,
        lateJourneyCount: p.totals.lateJourneyCount,
        busiestDayMetres: p.totals.busiestDayMetres,
        firstStartAt: p.totals.firstStartAt,
      })),
      voided,
      now,
    );
    const balances = await creditBalances(
      trx,
      priced.map((p) => p.state.policyId),
    );
    const rows: StatementRow[] = priced.map((p) => {
      const rules = ruled.results.get(p.id) ?? NO_RULES;
      const afterRulesPence =
        p.totalPence -
        rules.capCreditPence -
        rules.annualCapCreditPence -
        rules.freeDistanceCreditPence +
        rules.minimumTopUpPence;
      // A negative balance is an amount carried forward from an earlier statement: billed now. A capped
      // day recomputed after a void charges back part of the void's credit.
      const chargedBack = ruled.voidDayCharges
        .filter((c) => c.statementId === p.id)
        .reduce((total, c) => total + c.pence, 0);
      const balance = (balances.get(p.state.policyId) ?? 0) - chargedBack;
      const creditsUsed = Math.min(Math.max(balance, 0), afterRulesPence);
      const broughtForward = Math.max(-balance, 0);
      const billed = afterRulesPence - creditsUsed + broughtForward;
      return {
        id: p.id,
        policy_id: p.state.policyId,
        company_id: p.state.companyId,
        environment: p.state.environment,
        period_start_at: p.start,
        period_end_at: p.end,
        billing_date: p.request.billingDate ?? null,
        final: p.request.final ?? false,
        journey_count: p.totals.journeyCount,
        distance_metres: p.totals.distanceMetres,
        duration_seconds: p.totals.durationSeconds,
        usage_premium_pence: p.totals.usagePremiumPence,
        installments: p.installments,
        subscription_premium_pence: p.subscriptionPence,
        total_premium_pence: p.totalPence,
        credits_used_pence: creditsUsed,
        billed_premium_pence: billed,
        carried_forward_pence: carriedForward(billed, CURRENCY),
        brought_forward_pence: broughtForward,
        cap_credit_pence: rules.capCreditPence,
        annual_cap_credit_pence: rules.annualCapCreditPence,
        free_distance_credit_pence: rules.freeDistanceCreditPence,
        minimum_top_up_pence: rules.minimumTopUpPence,
        capped_days: rules.cappedDays,
        payment_id: null,
        created_at: now,
      };
    });
    const entry = (row: StatementRow, amountPence: number, source: 'statement' | 'carried_forward') => ({
      policyId: row.policy_id,
      companyId: row.company_id,
      environment: row.environment,
      amountPence,
      source,
      reference: row.id,
      at: now,
    });
    await addCredits(trx, [
      ...ruled.voidDayCharges.map((c) => ({
        policyId: c.policyId,
        companyId: c.companyId,
        environment: c.environment,
        amountPence: -c.pence,
        source: 'void' as const,
        reference: `daily-cap:${c.statementId}:${c.date}`,
        reason: 'a voided journey freed room under the day’s cap for its other journeys',
        at: now,
      })),
      // Credits used and amounts brought forward both settle the ledger; an amount carried forward
      // leaves it owing until the next statement.
      ...rows
        .filter((row) => row.credits_used_pence > 0 || row.brought_forward_pence > 0)
        .map((row) => entry(row, row.brought_forward_pence - row.credits_used_pence, 'statement')),
      ...rows
        .filter((row) => row.carried_forward_pence > 0)
        .map((row) => entry(row, -row.carried_forward_pence, 'carried_forward')),
    ]);
    await insertStatements(trx, rows);
    await keepOdometers(trx, odometers, now);
    const odometerOf = new Map(odometers.map((o) => [o.statementId, o]));

    // NOTE: each owing statement's charge is recorded with it, so a crash after the commit leaves the
    // charge to the payments reconciler instead of losing it (payments.recordStatementCharges).
    const charges = await payments.recordStatementCharges(
      trx,
      priced.map((p, i) => ({
        tenant: asTenant(p.state.companyId, p.state.environment as DataEnvironment),
        userId: p.state.userId,
        policyId: p.state.policyId,
        policyVersionId: (rows[i] as StatementRow).id,
        amountPence:
          (rows[i] as StatementRow).billed_premium_pence - (rows[i] as StatementRow).carried_forward_pence,
      })),
    );
    await setStatementPayments(trx, charges);
    const written = priced.map((p, i) => {
      const row = rows[i] as StatementRow;
      return { state: p.state, row, paymentId: charges.get(row.id), odometer: odometerOf.get(row.id) };
    });
    await recordEvents(
      trx,
      written.map(({ state, row }) => ({
        scope: { companyId: state.companyId, environment: state.environment },
        type: 'statement.created',
        data: {
          policy_reference: state.policyReference,
          policy_version_reference: row.id,
          statement_start_date: row.period_start_at.toISOString(),
          statement_end_date: row.period_end_at.toISOString(),
          journey_count: row.journey_count,
          usage_premium: fromPence(row.usage_premium_pence),
          subscription_premium: fromPence(row.subscription_premium_pence),
          total_premium: fromPence(row.total_premium_pence),
          billed_premium: fromPence(row.billed_premium_pence),
        },
        at: now,
      })),
    );
    await notifications.queueEmails(
      trx,
      written.map(({ state, row }) => {
        const account = state.policyholder;
        return {
          scope: { companyId: state.companyId, environment: state.environment },
          template: 'statement-issued' as const,
          to: account.email,
          // NOTE: the address was read as the policy's lock was waited for, so it may be one an erasure
          // has since replaced: the account lets notifications refuse it (never sent to an erased person).
          userId: state.userId,
          // Rendered when sent (notifications' LATER_TEMPLATES): a chunk queues a thousand.
          data: {
            firstNames: account.firstNames,
            policyReference: state.policyReference,
            periodStartOn: londonDate(row.period_start_at),
            periodEndOn: londonDate(row.period_end_at),
            journeyCount: row.journey_count,
            distanceMiles: totalMiles(row.distance_metres),
            usagePremiumPence: row.usage_premium_pence,
            subscriptionPremiumPence: row.subscription_premium_pence,
            totalPremiumPence: row.total_premium_pence,
            billedPremiumPence: row.billed_premium_pence,
            currency: CURRENCY,
            payment: row.carried_forward_pence > 0 ? 'carried' : charges.has(row.id) ? 'card' : 'none',
            carriedForwardPence: row.carried_forward_pence,
          } satisfies StatementIssuedValues,
        };
      }),
    );
    for (const w of written) outcomes.set(w.state.policyId, { kind: 'written', ...w });
    return outcomes;
  }

  /**
   * After commit: the first attempt at each statement's recorded charge. A failed charge stays with its
   * statement and goes to dunning; it is not thrown (and a process that dies meanwhile leaves the
   * charges to the reconciler).
   */
  async function collect(written: readonly Written[]): Promise<Map<string, ChargeOutcome>> {
    const charged = new Map<string, ChargeOutcome>();
    await mapConcurrent(
      written.flatMap((w) => (w.paymentId === undefined ? [] : [{ ...w, paymentId: w.paymentId }])),
      COLLECT_CONCURRENCY,
      async ({ state, row, paymentId }) => {
        const tenant = asTenant(state.companyId, state.environment as DataEnvironment);
        try {
          const outcome = await payments.attemptStatementCharge(tenant, paymentId);
          if (outcome !== undefined) charged.set(row.id, outcome);
        } catch (error) {
          // The statement and its charge stand; the reconciler tries again when the lease ends.
          logger.error({ err: error, statement: row.id }, 'charging a statement failed');
        }
      },
    );
    return charged;
  }

  /**
   * One chunk of a billing day in one transaction, then its charges. Should the chunk fail as a whole
   * (one policy's data breaks a rule the database holds), its policies are billed one at a time so the
   * rest are not held back by it.
   */
  async function billChunk(
    items: ReadonlyArray<{ id: string; reference: string }>,
    date: string,
    failures?: BillingFailure[],
  ): Promise<Omit<BillingRunCounts, 'date' | 'due'>> {
    const counts = { billed: 0, already_billed: 0, failed: 0 };
    let outcomes: Map<string, StatementOutcome>;
    try {
      outcomes = await inTransaction(db, (trx) =>
        writeStatements(
          trx,
          items.map((item) => ({ policyId: item.id, endAt: automaticPeriodEnd(date), billingDate: date })),
        ),
      );
    } catch (error) {
      if (items.length === 1) {
        logger.error({ err: error, policy: items[0]?.reference, date }, 'billing a policy failed');
        failures?.push({
          policy_reference: items[0]?.reference ?? '',
          reason: error instanceof Error ? error.message : String(error),
        });
        billed.inc({ outcome: 'failed' });
        return { ...counts, failed: 1 };
      }
      logger.warn(
        { err: error, date, policies: items.length },
        'billing chunk failed; billing its policies one by one',
      );
      for (const one of await mapConcurrent(items, 2, (item) => billChunk([item], date, failures))) {
        counts.billed += one.billed;
        counts.already_billed += one.already_billed;
        counts.failed += one.failed;
      }
      return counts;
    }
    const written: Written[] = [];
    for (const outcome of outcomes.values()) {
      if (outcome.kind === 'written') written.push(outcome);
      else counts.already_billed++;
    }
    counts.billed = written.length;
    billed.inc({ outcome: 'billed' }, counts.billed);
    billed.inc({ outcome: 'already_billed' }, counts.already_billed);
    await collect(written);
    return counts;
  }

  /** The billing days of the policies due on `date` (`YYYY-MM-DD`, Europe/London), and its instant. */
  function dueDays(date: string) {
    const [y, m, d] = date.split('-').map(Number) as [number, number, number];
    const lastDay = billingDateIn(y, m, 31) === date;
    return {
      days: lastDay ? Array.from({ length: 32 - d }, (_, i) => d + i) : [d],
      instant: londonMidnight(date),
    };
  }

  /**
   * The policies due on `date` not billed for it yet, in chunks of CHUNK_SIZE, read a page at a time
   * (a million-policy day is not held whole); `seen` hears each page's size and how many of it were
   * billed already.
   */
  async function* dueChunks(
    date: string,
    seen: (page: { due: number; billed: number }) => void,
  ): AsyncGenerator<Array<{ id: string; reference: string }>> {
    const { days, instant } = dueDays(date);
    const pages = dueForBilling(db, {
      billingDays: days,
      billingInstant: instant,
      date,
      pageSize: DUE_PAGE_SIZE,
    });
    for await (const page of pages) {
      const todo = page.filter((item) => !item.billed);
      seen({ due: page.length, billed: page.length - todo.length });
      for (let i = 0; i < todo.length; i += CHUNK_SIZE) yield todo.slice(i, i + CHUNK_SIZE);
    }
  }

  /** One statement, for POST /statements and final statements: the chunk of one, its errors as 4xx. */
  async function writeOne(
    tenant: Tenant,
    reference: string,
    request: Omit<StatementRequest, 'policyId'>,
  ): Promise<(Written & { journeys: BilledJourney[] }) | undefined> {
    try {
      return await inTransaction(db, async (trx) => {
        const policy = await findPolicy(trx, tenant, reference);
        if (policy === undefined) throw notFound('policy');
        const outcome = (await writeStatements(trx, [{ ...request, policyId: policy.id }])).get(policy.id);
        if (outcome === undefined || outcome.kind === 'not_found') throw notFound('policy');
        if (outcome.kind === 'not_active')
          throw new AppError(
            'POLICY_NOT_ACTIVE',
            `The policy is ${outcome.status}; its final statement was issued when it ended`,
          );
        if (outcome.kind === 'not_after_previous') {
          if (request.final === true) return undefined;
          throw periodConflict(outcome.previousEndAt, outcome.firstStartAt);
        }
        const journeys = await listStatementJourneys(trx, policy.id, [outcome.row]);
        return { ...outcome, journeys: journeys.get(outcome.row.id) ?? [] };
      });
    } catch (error) {
      // Policies are locked before their last period is read, so this is a safety net, not a path.
      if (
        isUniqueViolation(error, 'statements_period_key') ||
        isUniqueViolation(error, 'policy_versions_sequence_key')
      ) {
        if (request.final === true) return undefined;
        throw new AppError(
          'STATEMENT_PERIOD_CONFLICT',
          'Another statement for this policy was issued at the same time',
          {
            cause: error,
          },
        );
      }
      throw error;
    }
  }

  const service = {
    /** POST /statements: a statement up to `effectiveAt` (default now), charged after commit. */
    async create(tenant: Tenant, reference: string, effectiveAt?: Date): Promise<StatementView> {
      const written = await writeOne(tenant, reference, { endAt: effectiveAt ?? clock.now() });
      if (written === undefined) throw periodConflict(null, null);
      const payment = (await collect([written])).get(written.row.id);
      return toView(reference, written.row, written.journeys, true, payment, written.odometer);
    },

    async get(tenant: Tenant, statementId: string): Promise<StatementView> {
      const row = await findStatement(db, tenant, statementId);
      if (row === undefined) throw notFound('statement');
      const policy = await db
        .selectFrom('policies')
        .select('policy_reference')
        .where('id', '=', row.policy_id)
        .executeTakeFirstOrThrow();
      const latest = await lastStatement(db, row.policy_id);
      return toView(
        policy.policy_reference,
        row,
        (await listStatementJourneys(db, row.policy_id, [row])).get(row.id) ?? [],
        latest?.id === row.id,
        await paymentOf(tenant, row),
        (await listStatementOdometers(db, [row.id])).get(row.id),
      );
    },

    async list(tenant: Tenant, reference: string, page: { limit: number; before?: Date | undefined }) {
      const policy = await findPolicy(db, tenant, reference);
      if (policy === undefined) throw notFound('policy');
      const rows = await listStatements(db, tenant, policy.id, {
        limit: page.limit + 1,
        before: page.before,
      });
      const shown = rows.slice(0, page.limit);
      const latest = await lastStatement(db, policy.id);
      // One query for every statement's journeys; payments are read for the statements that have one.
      const journeysOf = await listStatementJourneys(db, policy.id, shown);
      const payments = await Promise.all(shown.map((row) => paymentOf(tenant, row)));
      const odometers = await listStatementOdometers(
        db,
        shown.map((row) => row.id),
      );
      const statements = shown.map((row, i) =>
        toView(
          reference,
          row,
          journeysOf.get(row.id) ?? [],
          latest?.id === row.id,
          payments[i],
          odometers.get(row.id),
        ),
      );
      return {
        statements,
        next_cursor: rows.length > page.limit ? (shown.at(-1)?.period_end_at.toISOString() ?? null) : null,
      };
    },

    /** POST /admin/credits: a goodwill credit on a policy's ledger. */
    async grantCredit(
      tenant: Tenant,
      reference: string,
      amountPence: number,
      reason: string,
    ): Promise<{ policy_reference: string; balance: number }> {
      const policy = await findPolicy(db, tenant, reference);
      if (policy === undefined) throw notFound('policy');
      const now = clock.now();
      await inTransaction(db, async (trx) => {
        await addCredits(trx, [
          {
            policyId: policy.id,
            companyId: tenant.companyId,
            environment: tenant.environment,
            amountPence,
            source: 'goodwill',
            reference: `goodwill:${crypto.randomUUID()}`,
            reason,
            at: now,
          },
        ]);
        await recordEvent(
          trx,
          tenant,
          'credit.granted',
          { policy_reference: reference, amount: fromPence(amountPence), reason },
          now,
        );
      });
      const balance = (await creditBalances(db, [policy.id])).get(policy.id) ?? 0;
      return { policy_reference: reference, balance: fromPence(balance) };
    },

    /** The policy's credit ledger and its balance (pounds), for the console. */
    async credits(tenant: Tenant, reference: string) {
      const policy = await findPolicy(db, tenant, reference);
      if (policy === undefined) throw notFound('policy');
      const [entries, balances] = await Promise.all([
        listCredits(db, policy.id),
        creditBalances(db, [policy.id]),
      ]);
      return {
        policy_reference: reference,
        balance: fromPence(balances.get(policy.id) ?? 0),
        credits: entries.map((e) => ({
          amount: fromPence(e.amount_pence),
          source: e.source,
          reference: e.reference,
          reason: e.reason,
          created_at: e.created_at.toISOString(),
        })),
      };
    },

    /**
     * Bills every policy whose billing date is `date`; each (policy, date) at most once however often
     * it runs. `onProgress` hears the counts after each chunk (the console's live progress).
     */
    async runBillingDay(
      date: string,
      onProgress?: (counts: BillingRunCounts) => void,
    ): Promise<BillingRunCounts & { failures: BillingFailure[] }> {
      // NOTE: a day that has not begun in London has usage still to come: billing it would close
      // periods early and charge installments before they fall due.
      const today = londonDate(clock.now());
      if (date > today)
        throw new AppError(
          'BILLING_DATE_IN_FUTURE',
          `A billing run can be for today (${today}, Europe/London) or an earlier day, not ${date}`,
          { errors: [{ path: '/body/date', message: `must not be after ${today}` }] },
        );
      const { days, instant } = dueDays(date);
      // Counted first for the progress shown meanwhile; the result counts the policies the pages held.
      const counts: BillingRunCounts = {
        date,
        due: await countDueForBilling(db, days, instant),
        billed: 0,
        already_billed: 0,
        failed: 0,
      };
      onProgress?.({ ...counts });
      let due = 0;
      const chunks = dueChunks(date, (page) => {
        due += page.due;
        counts.already_billed += page.billed;
        billed.inc({ outcome: 'already_billed' }, page.billed);
      });
      const failures: BillingFailure[] = [];
      // Chunks hold disjoint policies (locked in id order), so they run side by side.
      await forEachConcurrent(chunks, BILLING_CONCURRENCY, async (c) => {
        const chunk = await billChunk(c, date, failures);
        counts.billed += chunk.billed;
        counts.already_billed += chunk.already_billed;
        counts.failed += chunk.failed;
        onProgress?.({ ...counts });
      });
      counts.due = due;
      logger.info(counts, 'billing run finished');
      return { ...counts, failures };
    },

    /** The worker's daily run: fans the due policies out in chunks, so several workers share the day. */
    async enqueueBillingDay(date: string): Promise<number> {
      let chunkCount = 0;
      let due = 0;
      for await (const policies of dueChunks(date, () => undefined)) {
        await jobs.send(
          BILL_CHUNK_QUEUE,
          { date, policies: policies.map(({ id, reference }) => ({ id, reference })) },
          { singletonKey: `${date}:${String(chunkCount)}` },
        );
        chunkCount++;
        due += policies.length;
      }
      logger.info({ date, due, chunks: chunkCount }, 'billing run enqueued');
      return due;
    },

    /** In the transaction that ends a policy: its final statement is issued by a job after commit. */
    async scheduleFinal(
      trx: Executor,
      tenant: Tenant,
      ended: { policyReference: string; endAt: Date },
    ): Promise<void> {
      await jobs.enqueue(trx, FINAL_STATEMENT_QUEUE, {
        companyId: tenant.companyId,
        environment: tenant.environment,
        policyReference: ended.policyReference,
        endAt: ended.endAt.toISOString(),
      });
    },

    /** The final statement of a cancelled or lapsed policy, up to the end of cover. */
    async issueFinal(tenant: Tenant, reference: string, endAt: Date): Promise<void> {
      const written = await writeOne(tenant, reference, { endAt, final: true, allowEnded: true });
      if (written !== undefined) await collect([written]);
    },

    async registerWorkers(): Promise<void> {
      await jobs.work<{ date?: string }>(BILLING_RUN_QUEUE, async (data) => {
        await service.enqueueBillingDay(data.date ?? londonDate(clock.now()));
      });
      await jobs.work<{ date: string; policies: Array<{ id: string; reference: string }> }>(
        BILL_CHUNK_QUEUE,
        async (data) => {
          await billChunk(data.policies, data.date);
        },
      );
      await jobs.work<{
        companyId: string;
        environment: DataEnvironment;
        policyReference: string;
        endAt: string;
      }>(FINAL_STATEMENT_QUEUE, async (data) => {
        await service.issueFinal(
          asTenant(data.companyId, data.environment),
          data.policyReference,
          new Date(data.endAt),
        );
      });
      const [hour, minute] = deps.billingRunAt.split(':');
      await jobs.schedule(
        BILLING_RUN_QUEUE,
        `${String(Number(minute))} ${String(Number(hour))} * * *`,
        {},
        'Europe/London',
      );
    },
  };

  const paymentOf = (tenant: Tenant, row: StatementRow): Promise<ChargeOutcome | undefined> =>
    row.payment_id === null ? Promise.resolve(undefined) : payments.outcomeOf(tenant, row.payment_id);

  return service;
}

export type StatementService = ReturnType<typeof createStatementService>;
