/**
 * Writing statements, the same for one policy (POST /statements, a final statement) as for a billing
 * run's chunk of a thousand: load what the policies' statements need, call the pure rules for the
 * periods and amounts, persist the statements with their ledger entries, charges, events and emails in
 * the caller's transaction; after commit, the first attempt at each charge.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Clock } from '../../platform/clock.ts';
import { mapConcurrent } from '../../platform/concurrency.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, isUniqueViolation, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { BILLING_CURRENCY } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import { listStatementJourneys, type BilledJourney, type JourneyService } from '../journeys/index.ts';
import type { NotificationService } from '../notifications/index.ts';
import type { ChargeOutcome, PaymentService } from '../payments/index.ts';
import { appendStatementVersions, findPolicy } from '../policies/index.ts';
import { addCredits, creditBalances, creditVoidedJourneys } from './credit-repository.ts';
import { keepOdometers, reconcileOdometers, type StatementOdometer } from './odometer-billing.ts';
import {
  ledgerMovements,
  periodSubscription,
  statementAmounts,
  type PeriodSubscription,
  type StatementAmounts,
} from './rules/statement-amounts.ts';
import { nextPeriod } from './rules/statement-period.ts';
import type { StatementRulesResult } from './rules/usage-rules.ts';
import {
  billJourneys,
  insertStatements,
  lockBillingStates,
  setStatementPayments,
  type BillingState,
  type ClaimedTotals,
  type StatementRow,
} from './statement-repository.ts';
import { announceStatements } from './statement-events.ts';
import { applyUsageRules, productRulesOf, type UsageRulesOutcome } from './usage-billing.ts';
import { scoreAdjustments, type ScoreAdjustment } from './score-billing.ts';

/** What the statements module's services are built from. */
export interface StatementDeps {
  readonly db: Executor;
  readonly clock: Clock;
  readonly jobs: Jobs;
  readonly notifications: NotificationService;
  readonly payments: PaymentService;
  readonly logger: FastifyBaseLogger;
  /** `HH:MM` Europe/London: when the worker's daily billing run starts. */
  readonly billingRunAt: string;
  readonly metrics?: Registry;
  /** Stores odometer reconciliations in the statement's transaction. */
  readonly journeys: Pick<JourneyService, 'storeIn'>;
}

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

const NO_SCORE: ScoreAdjustment = { pence: 0, months: [] };

const NO_JOURNEYS: ClaimedTotals = {
  journeyCount: 0,
  lateJourneyCount: 0,
  usagePremiumPence: 0,
  distanceMetres: 0,
  durationSeconds: 0,
  busiestDayMetres: 0,
  firstStartAt: null,
};

export interface StatementRequest {
  readonly policyId: string;
  /** The end of the period asked for (whole seconds are kept). */
  readonly endAt: Date;
  /** An automatic billing day (`YYYY-MM-DD`): at most one statement a policy for it. */
  readonly billingDate?: string | undefined;
  /** The last statement of an ended policy. */
  readonly final?: boolean;
  readonly allowEnded?: boolean;
}

export interface Written {
  readonly state: BillingState;
  readonly row: StatementRow;
  /** The card charge recorded with the statement, to attempt after commit. */
  readonly paymentId: string | undefined;
  /** The odometer readings it compared, when readings cover it. */
  readonly odometer: StatementOdometer | undefined;
}

export type StatementOutcome =
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
export const periodConflict = (previousEndAt: Date | null, firstStartAt: Date | null) =>
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

/** The installments paid at binding belong to the first term: a later term bills all of its own. */
const prepaidOfTerm = (state: BillingState, termStartAt: Date): number =>
  termStartAt.getTime() === state.firstStartAt.getTime() ? state.prepaidInstallments : 0;

const wholeSeconds = (at: Date): Date => new Date(Math.floor(at.getTime() / 1000) * 1000);

/** A statement to write: its policy's state, its id and period. */
interface Planned {
  readonly request: StatementRequest;
  readonly state: BillingState;
  readonly id: string;
  readonly start: Date;
  readonly end: Date;
}

/** A planned statement with its journeys' totals and its installments. */
interface Priced extends Planned {
  readonly totals: ClaimedTotals;
  readonly subscription: PeriodSubscription;
}

/** The period of each request whose policy can have one; the others' outcomes. */
function planStatements(
  requests: readonly StatementRequest[],
  states: ReadonlyMap<string, BillingState>,
  outcomes: Map<string, StatementOutcome>,
): Planned[] {
  const planned: Planned[] = [];
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
  return planned;
}

/** A statement's row and amounts, its ledger balance and the product rules' lines given. */
interface Amounted {
  readonly row: StatementRow;
  readonly amounts: StatementAmounts;
}

/** A statement's row: its journeys' totals, installments, the rules' lines and the amounts of the rule. */
function statementRow(
  p: Priced,
  rules: typeof NO_RULES,
  score: ScoreAdjustment,
  ledgerBalancePence: number,
  chargedBackPence: number,
  now: Date,
): Amounted {
  const amounts = statementAmounts({
    usagePremiumPence: p.totals.usagePremiumPence,
    subscriptionPremiumPence: p.subscription.subscriptionPremiumPence,
    rules: { ...rules, scoreAdjustmentPence: score.pence },
    ledgerBalancePence,
    chargedBackPence,
    currency: BILLING_CURRENCY,
  });
  const row: StatementRow = {
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
    installments: p.subscription.installments,
    subscription_premium_pence: p.subscription.subscriptionPremiumPence,
    total_premium_pence: amounts.totalPremiumPence,
    credits_used_pence: amounts.creditsUsedPence,
    billed_premium_pence: amounts.billedPremiumPence,
    carried_forward_pence: amounts.carriedForwardPence,
    brought_forward_pence: amounts.broughtForwardPence,
    cap_credit_pence: rules.capCreditPence,
    annual_cap_credit_pence: rules.annualCapCreditPence,
    free_distance_credit_pence: rules.freeDistanceCreditPence,
    minimum_top_up_pence: rules.minimumTopUpPence,
    capped_days: rules.cappedDays,
    score_adjustment_pence: score.pence,
    score_months: score.months,
    payment_id: null,
    created_at: now,
  };
  return { row, amounts };
}

/**
 * Claims the planned statements' journeys (odometer reconciliations first: a reconciliation is one of
 * them) and counts their installments; stores the `st` versions.
 */
async function priceStatements(deps: StatementDeps, trx: Executor, planned: readonly Planned[], now: Date) {
  const products = await productRulesOf(
    trx,
    planned.map((p) => p.state),
  );
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
  const priced: Priced[] = planned.map((p) => ({
    ...p,
    totals: claimed.get(p.id) ?? NO_JOURNEYS,
    // A period that spans two terms carries the installments of each, at each term's price.
    subscription: periodSubscription({
      currentTerm: {
        startAt: p.state.termStartAt,
        billingDay: p.state.billingDay,
        subscriptionInstallments: p.state.subscriptionInstallments,
        subscriptionPremiumPence: p.state.subscriptionPremiumPence,
        prepaidInstallments: prepaidOfTerm(p.state, p.state.termStartAt),
      },
      previousTerm:
        p.state.previousTerm === null
          ? null
          : {
              ...p.state.previousTerm,
              prepaidInstallments: prepaidOfTerm(p.state, p.state.previousTerm.startAt),
            },
      periodStartAt: p.start,
      periodEndAt: p.end,
      endsCover: p.request.final ?? false,
    }),
  }));
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
  return { products, odometers, priced };
}

/**
 * Credits: billed journeys voided since become ledger credits (what was paid for them), then the product
 * rules take their lines, then the balance pays what it can. Returns the rows and the rules' outcome.
 */
async function creditStatements(
  trx: Executor,
  products: Awaited<ReturnType<typeof productRulesOf>>,
  priced: readonly Priced[],
  now: Date,
): Promise<{ statements: Amounted[]; ruled: UsageRulesOutcome }> {
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
  // Price by score comes after the rules: it adjusts the usage they left charged.
  const scored = await scoreAdjustments(
    trx,
    priced.map((p) => {
      const r = ruled.results.get(p.id) ?? NO_RULES;
      return {
        statementId: p.id,
        policyId: p.state.policyId,
        companyId: p.state.companyId,
        environment: p.state.environment,
        productReference: p.state.productReference,
        endAt: p.end,
        final: p.request.final ?? false,
        beforePence:
          p.totals.usagePremiumPence +
          p.subscription.subscriptionPremiumPence -
          r.capCreditPence -
          r.annualCapCreditPence -
          r.freeDistanceCreditPence +
          r.minimumTopUpPence,
      };
    }),
    now,
  );
  const balances = await creditBalances(
    trx,
    priced.map((p) => p.state.policyId),
  );
  // A negative balance is an amount carried forward from an earlier statement: billed now. A capped day
  // recomputed after a void charges back part of the void's credit.
  const statements = priced.map((p) =>
    statementRow(
      p,
      ruled.results.get(p.id) ?? NO_RULES,
      scored.get(p.id) ?? NO_SCORE,
      balances.get(p.state.policyId) ?? 0,
      ruled.voidDayCharges.filter((c) => c.statementId === p.id).reduce((total, c) => total + c.pence, 0),
      now,
    ),
  );
  return { statements, ruled };
}

/** The ledger entries of the statements: the capped days' charge-backs, then what settles each statement. */
async function settleLedger(
  trx: Executor,
  statements: readonly Amounted[],
  ruled: UsageRulesOutcome,
  now: Date,
): Promise<void> {
  const entries = (source: 'statement' | 'carried_forward') =>
    statements.flatMap(({ row, amounts }) =>
      ledgerMovements(amounts)
        .filter((m) => m.source === source)
        .map((m) => ({
          policyId: row.policy_id,
          companyId: row.company_id,
          environment: row.environment,
          amountPence: m.amountPence,
          source,
          reference: row.id,
          at: now,
        })),
    );
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
    ...entries('statement'),
    ...entries('carried_forward'),
  ]);
}

/**
 * Writes the statements of many policies in the caller's transaction, in a fixed number of statements
 * whatever their count: locks the policies (id order), reads their terms and last periods, sums the
 * period's journeys and owed void credits, draws on the credit ledger, and writes the `st` versions,
 * statements, events and emails. The rules (periods, installments, credits) are the same for one
 * policy (POST /statements) as for a billing run's chunk.
 */
export async function writeStatements(
  deps: StatementDeps,
  trx: Executor,
  requests: readonly StatementRequest[],
): Promise<Map<string, StatementOutcome>> {
  const now = deps.clock.now();
  const outcomes = new Map<string, StatementOutcome>();
  const states = new Map(
    (
      await lockBillingStates(
        trx,
        requests.map((r) => r.policyId),
      )
    ).map((st) => [st.policyId, st]),
  );
  const planned = planStatements(requests, states, outcomes);
  if (planned.length === 0) return outcomes;

  const { products, odometers, priced } = await priceStatements(deps, trx, planned, now);
  const { statements, ruled } = await creditStatements(trx, products, priced, now);
  await settleLedger(trx, statements, ruled, now);
  await insertStatements(
    trx,
    statements.map((s) => s.row),
  );
  await keepOdometers(trx, odometers, now);
  const odometerOf = new Map(odometers.map((o) => [o.statementId, o]));

  // NOTE: each owing statement's charge is recorded with it, so a crash after the commit leaves the
  // charge to the payments reconciler instead of losing it (payments.recordStatementCharges).
  const charges = await deps.payments.recordStatementCharges(
    trx,
    priced.map((p, i) => {
      const { row, amounts } = statements[i] as Amounted;
      return {
        tenant: asTenant(p.state.companyId, p.state.environment as DataEnvironment),
        userId: p.state.userId,
        policyId: p.state.policyId,
        policyVersionId: row.id,
        amountPence: amounts.chargePence,
      };
    }),
  );
  await setStatementPayments(trx, charges);
  const written: Written[] = priced.map((p, i) => {
    const { row } = statements[i] as Amounted;
    return { state: p.state, row, paymentId: charges.get(row.id), odometer: odometerOf.get(row.id) };
  });
  await announceStatements(deps, trx, written, now);
  for (const w of written) outcomes.set(w.state.policyId, { kind: 'written', ...w });
  return outcomes;
}

/**
 * After commit: the first attempt at each statement's recorded charge. A failed charge stays with its
 * statement and goes to dunning; it is not thrown (and a process that dies meanwhile leaves the
 * charges to the reconciler).
 */
export async function collect(
  deps: Pick<StatementDeps, 'payments' | 'logger'>,
  written: readonly Written[],
): Promise<Map<string, ChargeOutcome>> {
  const charged = new Map<string, ChargeOutcome>();
  await mapConcurrent(
    written.flatMap((w) => (w.paymentId === undefined ? [] : [{ ...w, paymentId: w.paymentId }])),
    COLLECT_CONCURRENCY,
    async ({ state, row, paymentId }) => {
      const tenant = asTenant(state.companyId, state.environment as DataEnvironment);
      try {
        const outcome = await deps.payments.attemptStatementCharge(tenant, paymentId);
        if (outcome !== undefined) charged.set(row.id, outcome);
      } catch (error) {
        // The statement and its charge stand; the reconciler tries again when the lease ends.
        deps.logger.error({ err: error, statement: row.id }, 'charging a statement failed');
      }
    },
  );
  return charged;
}

/** One statement, for POST /statements and final statements: the chunk of one, its errors as 4xx. */
export async function writeOne(
  deps: StatementDeps,
  tenant: Tenant,
  reference: string,
  request: Omit<StatementRequest, 'policyId'>,
): Promise<(Written & { journeys: BilledJourney[] }) | undefined> {
  try {
    return await inTransaction(deps.db, async (trx) => {
      const policy = await findPolicy(trx, tenant, reference);
      if (policy === undefined) throw notFound('policy');
      const outcome = (await writeStatements(deps, trx, [{ ...request, policyId: policy.id }])).get(
        policy.id,
      );
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
