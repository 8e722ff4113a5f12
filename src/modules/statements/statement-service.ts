import type { FastifyBaseLogger } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../../platform/clock.ts';
import { mapConcurrent } from '../../platform/concurrency.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, isUniqueViolation, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { fromPence, toPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import type { AccountService } from '../accounts/index.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import { statementIssuedEmail, type NotificationService } from '../notifications/index.ts';
import type { ChargeOutcome, PaymentService } from '../payments/index.ts';
import { appendVersion, findPolicy, listVersions, lockPolicy, type PolicyRecord } from '../policies/index.ts';
import { totalKilometres, totalMiles } from '../journeys/index.ts';
import {
  addCredit,
  claimJourneys,
  claimVoidCredits,
  creditBalance,
  findStatement,
  insertStatement,
  lastStatement,
  listDueForBilling,
  listStatementJourneys,
  listStatements,
  setStatementPayment,
  type BilledJourney,
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

export const BILL_CHUNK_QUEUE = 'statements.bill-chunk';
export const BILLING_RUN_QUEUE = 'statements.billing-run';
export const FINAL_STATEMENT_QUEUE = 'statements.final';
const CHUNK_SIZE = 500;
/** Policies billed at once by one process: enough to keep PostgreSQL busy on a few cores. */
const BILLING_CONCURRENCY = 8;

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
});

function toView(
  policyReference: string,
  row: StatementRow,
  journeys: BilledJourney[],
  current: boolean,
  payment: ChargeOutcome | undefined,
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
    credits_used: fromPence(row.credits_used_pence),
    subscription_installments: row.installments,
    statement_start_date: row.period_start_at.toISOString(),
    statement_end_date: row.period_end_at.toISOString(),
    journey_count: row.journey_count,
    journeys: journeys.map(journeyInStatement),
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

/**
 * Statements: continuous periods, each journey billed exactly once (a single UPDATE claims them),
 * subscription installments due in the period, credits from the ledger, then the card charge after
 * commit. Automatic billing days and final statements on cancellation and lapse.
 */
export function createStatementService(deps: {
  db: Executor;
  clock: Clock;
  jobs: Jobs;
  accounts: AccountService;
  notifications: NotificationService;
  payments: PaymentService;
  logger: FastifyBaseLogger;
  billingRunAt: string;
  metrics?: Registry;
}) {
  const { db, clock, jobs, accounts, notifications, payments, logger } = deps;
  const billed = new Counter({
    name: 'billing_run_policies_total',
    help: 'Policies handled by billing runs, by outcome (billed, already_billed, failed)',
    labelNames: ['outcome'],
    registers: deps.metrics === undefined ? [] : [deps.metrics],
  });
  jobs.define({ name: BILLING_RUN_QUEUE, options: { retryLimit: 2, expireInSeconds: 3600 } });
  jobs.define({ name: BILL_CHUNK_QUEUE, options: { retryLimit: 3, retryDelay: 60, expireInSeconds: 3600 } });
  jobs.define({
    name: FINAL_STATEMENT_QUEUE,
    options: { retryLimit: 5, retryDelay: 60, retryBackoff: true },
  });

  /**
   * Writes one statement in its own transaction: locks the policy, claims journeys and credits, writes
   * the `st` version and the statement row. Returns undefined when a `billingDate` was already billed.
   */
  async function writeStatement(
    tenant: Tenant,
    reference: string,
    options: { endAt: Date; billingDate?: string | undefined; final?: boolean; allowEnded?: boolean },
  ): Promise<{ policy: PolicyRecord; row: StatementRow; journeys: BilledJourney[] } | undefined> {
    const now = clock.now();
    try {
      return await inTransaction(db, async (trx) => {
        const policy = await lockPolicy(trx, tenant, reference);
        if (policy === undefined) throw notFound('policy');
        if (policy.status !== 'active' && options.allowEnded !== true) {
          throw new AppError(
            'POLICY_NOT_ACTIVE',
            `The policy is ${policy.status}; its final statement was issued when it ended`,
          );
        }
        const versions = await listVersions(trx, policy.id);
        const first = versions[0];
        const latest = versions.at(-1);
        if (first === undefined || latest === undefined)
          throw new AppError('INTERNAL', `policy ${reference} has no versions`);
        const previous = await lastStatement(trx, policy.id);
        const termStart = new Date(first.snapshot.policy.start_date * 1000);
        const period = nextPeriod(previous?.period_end_at ?? null, termStart, wholeSeconds(options.endAt));
        if (!period.ok) {
          if (options.billingDate !== undefined || options.final === true) return undefined;
          throw new AppError(
            'STATEMENT_PERIOD_CONFLICT',
            `effective_date must be after the previous statement's end (${previous?.period_end_at.toISOString() ?? ''})`,
            {
              errors: [
                { path: '/body/effective_date', message: 'must be after the end of the previous statement' },
              ],
            },
          );
        }
        const version = await appendVersion(trx, policy, {
          versionType: 'st',
          snapshot: latest.snapshot,
          effectiveAt: period.end,
          at: now,
          status: policy.status,
          statement: { startAt: period.start, endAt: period.end, usagePremiumPence: 0 },
        });
        const journeys = await claimJourneys(trx, policy.id, version.id, period.end);
        const usagePence = journeys.reduce((sum, j) => sum + j.usagePremiumPence, 0);
        const pricing = latest.snapshot.pricing;
        const term = latest.snapshot.policy;
        const installments = installmentsDue({
          policyStart: new Date(term.start_date * 1000),
          billingDay: term.billing_day_date ?? Number(londonDate(new Date(term.start_date * 1000)).slice(8)),
          count: pricing.subscription_installments ?? 12,
          periodStart: period.start,
          periodEnd: period.end,
        }).length;
        const subscriptionPence = installments * toPence(pricing.subscription_premium);
        const totalPence = usagePence + subscriptionPence;

        // Credits: billed journeys voided since become ledger credits, then the balance pays what it can.
        for (const credit of await claimVoidCredits(trx, policy.id, version.id)) {
          await addCredit(trx, tenant, {
            policyId: policy.id,
            amountPence: credit.amountPence,
            source: 'void',
            reference: credit.id,
            reason: 'voided journey already billed',
            at: now,
          });
        }
        const creditsUsed = Math.min(await creditBalance(trx, policy.id), totalPence);
        if (creditsUsed > 0) {
          await addCredit(trx, tenant, {
            policyId: policy.id,
            amountPence: -creditsUsed,
            source: 'statement',
            reference: version.id,
            at: now,
          });
        }
        const row: StatementRow = {
          id: version.id,
          policy_id: policy.id,
          company_id: tenant.companyId,
          environment: tenant.environment,
          period_start_at: period.start,
          period_end_at: period.end,
          billing_date: options.billingDate ?? null,
          final: options.final ?? false,
          journey_count: journeys.length,
          distance_metres: journeys.reduce((sum, j) => sum + j.distanceMetres, 0),
          duration_seconds: journeys.reduce(
            (sum, j) => sum + Math.round((j.endAt.getTime() - j.startAt.getTime()) / 1000),
            0,
          ),
          usage_premium_pence: usagePence,
          installments,
          subscription_premium_pence: subscriptionPence,
          total_premium_pence: totalPence,
          credits_used_pence: creditsUsed,
          billed_premium_pence: totalPence - creditsUsed,
          payment_id: null,
          created_at: now,
        };
        await insertStatement(trx, row);
        await trx
          .updateTable('policy_versions')
          .set({ usage_premium_pence: usagePence })
          .where('id', '=', version.id)
          .execute();
        await recordEvent(
          trx,
          tenant,
          'statement.created',
          {
            policy_reference: reference,
            policy_version_reference: version.id,
            statement_start_date: period.start.toISOString(),
            statement_end_date: period.end.toISOString(),
            journey_count: journeys.length,
            usage_premium: fromPence(usagePence),
            subscription_premium: fromPence(subscriptionPence),
            total_premium: fromPence(totalPence),
            billed_premium: fromPence(row.billed_premium_pence),
          },
          now,
        );
        const account = await accounts.findById(trx, tenant, policy.userId);
        if (account !== undefined) {
          await notifications.queueEmail(
            trx,
            tenant,
            'statement-issued',
            account.email,
            statementIssuedEmail({
              firstNames: account.firstNames,
              policyReference: reference,
              periodStartOn: londonDate(period.start),
              periodEndOn: londonDate(period.end),
              journeyCount: journeys.length,
              distanceMiles: totalMiles(row.distance_metres),
              usagePremiumPence: usagePence,
              subscriptionPremiumPence: subscriptionPence,
              totalPremiumPence: totalPence,
              billedPremiumPence: row.billed_premium_pence,
              currency: 'GBP',
            }),
          );
        }
        return { policy, row, journeys };
      });
    } catch (error) {
      // A concurrent request or run got there first: the same period start, or the same billing date.
      if (isUniqueViolation(error, 'statements_billing_date_key')) return undefined;
      if (
        isUniqueViolation(error, 'statements_period_key') ||
        isUniqueViolation(error, 'policy_versions_sequence_key')
      ) {
        if (options.billingDate !== undefined || options.final === true) return undefined;
        throw new AppError(
          'STATEMENT_PERIOD_CONFLICT',
          'Another statement for this policy was issued at the same time',
          { cause: error },
        );
      }
      throw error;
    }
  }

  /** After commit: charge the billed premium; a failure is returned with the statement, not thrown. */
  async function collect(
    tenant: Tenant,
    written: { policy: PolicyRecord; row: StatementRow },
  ): Promise<ChargeOutcome | undefined> {
    if (written.row.billed_premium_pence <= 0) return undefined;
    const outcome = await payments.chargeStatement(tenant, {
      policyId: written.policy.id,
      policyVersionId: written.row.id,
      amountPence: written.row.billed_premium_pence,
    });
    if (outcome !== undefined) await setStatementPayment(db, written.row.id, outcome.payment_reference);
    return outcome;
  }

  async function billOne(
    item: { reference: string; companyId: string; environment: string },
    date: string,
  ): Promise<'billed' | 'already' | 'failed'> {
    const outcome = await billOneUncounted(item, date);
    billed.inc({ outcome: outcome === 'already' ? 'already_billed' : outcome });
    return outcome;
  }

  async function billOneUncounted(
    item: { reference: string; companyId: string; environment: string },
    date: string,
  ): Promise<'billed' | 'already' | 'failed'> {
    const tenant = asTenant(item.companyId, item.environment as DataEnvironment);
    try {
      const written = await writeStatement(tenant, item.reference, {
        endAt: automaticPeriodEnd(date),
        billingDate: date,
      });
      if (written === undefined) return 'already';
      await collect(tenant, written);
      return 'billed';
    } catch (error) {
      logger.error({ err: error, policy: item.reference, date }, 'billing a policy failed');
      return 'failed';
    }
  }

  /** The policies whose billing date is `date` (`YYYY-MM-DD`, Europe/London). */
  async function dueOn(date: string) {
    const [y, m, d] = date.split('-').map(Number) as [number, number, number];
    const lastDay = billingDateIn(y, m, 31) === date;
    const days = lastDay ? Array.from({ length: 32 - d }, (_, i) => d + i) : [d];
    return listDueForBilling(db, days, londonMidnight(date));
  }

  const service = {
    /** POST /statements: a statement up to `effectiveAt` (default now), charged after commit. */
    async create(tenant: Tenant, reference: string, effectiveAt?: Date): Promise<StatementView> {
      const written = await writeStatement(tenant, reference, { endAt: effectiveAt ?? clock.now() });
      if (written === undefined)
        throw new AppError(
          'STATEMENT_PERIOD_CONFLICT',
          'effective_date must be after the previous statement',
        );
      const payment = await collect(tenant, written);
      return toView(reference, written.row, written.journeys, true, payment);
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
        await listStatementJourneys(db, row.id),
        latest?.id === row.id,
        await paymentOf(tenant, row),
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
      const statements = [];
      for (const row of shown)
        statements.push(
          toView(
            reference,
            row,
            await listStatementJourneys(db, row.id),
            latest?.id === row.id,
            await paymentOf(tenant, row),
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
        await addCredit(trx, tenant, {
          policyId: policy.id,
          amountPence,
          source: 'goodwill',
          reference: `goodwill:${crypto.randomUUID()}`,
          reason,
          at: now,
        });
        await recordEvent(
          trx,
          tenant,
          'credit.granted',
          { policy_reference: reference, amount: fromPence(amountPence), reason },
          now,
        );
      });
      return { policy_reference: reference, balance: fromPence(await creditBalance(db, policy.id)) };
    },

    /** Bills every policy whose billing date is `date`; each (policy, date) at most once however often it runs. */
    async runBillingDay(date: string): Promise<BillingRunCounts> {
      const due = await dueOn(date);
      const counts: BillingRunCounts = { date, due: due.length, billed: 0, already_billed: 0, failed: 0 };
      // Policies are independent (each locks only its own row), so several are billed at once.
      for (const outcome of await mapConcurrent(due, BILLING_CONCURRENCY, (item) => billOne(item, date))) {
        if (outcome === 'billed') counts.billed++;
        else if (outcome === 'already') counts.already_billed++;
        else counts.failed++;
      }
      logger.info(counts, 'billing run finished');
      return counts;
    },

    /** The worker's daily run: fans the due policies out in chunks, so several workers share the day. */
    async enqueueBillingDay(date: string): Promise<number> {
      const due = await dueOn(date);
      for (let i = 0; i < due.length; i += CHUNK_SIZE) {
        await jobs.send(
          BILL_CHUNK_QUEUE,
          { date, policies: due.slice(i, i + CHUNK_SIZE) },
          { singletonKey: `${date}:${String(i / CHUNK_SIZE)}` },
        );
      }
      logger.info(
        { date, due: due.length, chunks: Math.ceil(due.length / CHUNK_SIZE) },
        'billing run enqueued',
      );
      return due.length;
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
      const written = await writeStatement(tenant, reference, { endAt, final: true, allowEnded: true });
      if (written !== undefined) await collect(tenant, written);
    },

    async registerWorkers(): Promise<void> {
      await jobs.work<{ date?: string }>(BILLING_RUN_QUEUE, async (data) => {
        await service.enqueueBillingDay(data.date ?? londonDate(clock.now()));
      });
      await jobs.work<{
        date: string;
        policies: Array<{ reference: string; companyId: string; environment: string }>;
      }>(BILL_CHUNK_QUEUE, async (data) => {
        await mapConcurrent(data.policies, BILLING_CONCURRENCY, (item) => billOne(item, data.date));
      });
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
