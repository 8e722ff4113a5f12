/**
 * The usage alerts journeys trigger: budget exceeded, daily cap reached, annual cap reached, each once
 * per policy and period, checked after each journey is stored against settings kept in memory.
 */
import type { FastifyBaseLogger } from 'fastify';
import { Decimal } from 'decimal.js';
import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { recordEvent } from '../../platform/events.ts';
import { londonMidnight } from '../../platform/london-calendar.ts';
import type { Tenant } from '../companies/index.ts';
import { mileageBudgetExceededEmail, type NotificationService } from '../notifications/index.ts';
import { capMetres, METRES_PER, productVersionAt, type ProductRecord } from '../products/index.ts';
import {
  dueAlerts,
  londonPeriodsOf,
  yearCountedMetres,
  type AlertLimits,
  type UsageAlertKind,
  type UsageUnit,
} from './rules/usage-alerts.ts';
import { findPolicyholderContact } from '../accounts/index.ts';
import {
  findPolicyProduct,
  findPolicyUsageSettings,
  insertUsageAlert,
  readAlertSums,
  type PolicyUsageSettings,
  type SumsRequest,
  type SumsResult,
} from './usage-repository.ts';
import { createSettingsCache } from './settings-cache.ts';

/** Policies whose alert settings are kept in memory. */
const WATCH_CACHE_SIZE = 10_000;
/**
 * How long a policy's alert settings are trusted before they are read again. NOTE: budgets, products'
 * rules and a policy's product can change in another process (this process forgets a budget it sets at
 * once): for about this long after such a change, and for the one journey that then refreshes them,
 * journeys are checked against the settings before it. An alert missed this way is only late: the
 * next journey of the period checks the same conditions again.
 */
const WATCH_TTL_MS = 10_000;

/** What ingestion checks a policy's journeys against: its term, budget and product. */
interface Watch {
  readonly policy: PolicyUsageSettings;
  readonly product: ProductRecord | null;
}

/** A stored journey, as alerts see it. */
export interface StoredJourney {
  readonly id: string;
  readonly policyId: string;
  readonly policyReference: string;
  readonly startAt: Date;
}

interface AlertDeps {
  db: Executor;
  clock: Clock;
  notifications: NotificationService;
  logger: FastifyBaseLogger;
}

const unitLabel = (unit: UsageUnit): string => (unit === 'km' ? 'km' : 'miles');
/** Metres in a unit for people to read, one decimal (display only: decisions compare whole metres). */
const inUnit = (metres: number, unit: UsageUnit): string =>
  `${new Decimal(metres).dividedBy(METRES_PER[unit]).toDecimalPlaces(1, Decimal.ROUND_DOWN).toString()} ${unitLabel(unit)}`;

/** Whether any of a policy's journeys could make an alert due: a budget with alerts on, or a cap. */
function watches(policy: PolicyUsageSettings, product: ProductRecord | null): boolean {
  const versions = product?.versions ?? [];
  const alertsAllowed = product === null || versions.some((v) => v.rules.mileage_budget_alerts ?? true);
  if (policy.budget !== null && alertsAllowed) return true;
  return versions.some(
    (v) => v.rules.daily_cap_distance !== undefined || v.rules.annual_cap_distance !== undefined,
  );
}

/** What one journey is checked against: its periods, the limits in force and the sums to read. */
function alertPlan({ policy, product }: Watch, journey: StoredJourney) {
  const periods = londonPeriodsOf(journey.startAt);
  const unit: UsageUnit = product?.usageUnit ?? 'mile';
  const versions = product?.versions ?? [];
  // The rules of a London day are those in force at its midnight, as billing has them.
  const rulesOn = (date: string) =>
    productVersionAt(versions, date === periods.date ? periods.dayStartAt : londonMidnight(date))?.rules ??
    {};
  const rules = rulesOn(periods.date);
  const capOf = (distance: number | undefined) => (distance === undefined ? null : capMetres(distance, unit));

  const limits: AlertLimits = {
    budgetMetres:
      policy.budget === null || !(rules.mileage_budget_alerts ?? true)
        ? null
        : capMetres(policy.budget.distancePerMonth, policy.budget.usageUnit),
    dailyCapMetres: capOf(rules.daily_cap_distance),
    annualCapMetres: capOf(rules.annual_cap_distance),
  };
  // NOTE: the policy year is the current term (journeys of an earlier term no longer alert).
  const inTerm =
    journey.startAt.getTime() >= policy.currentStartAt.getTime() &&
    journey.startAt.getTime() <= policy.currentEndAt.getTime();
  const dailyCaps = versions
    .map((v) => v.rules.daily_cap_distance)
    .filter((d) => d !== undefined)
    .map((d) => capMetres(d, unit));
  const yearPeriod = policy.currentStartAt.toISOString();
  const request: SumsRequest = {
    policyId: journey.policyId,
    day:
      limits.dailyCapMetres === null
        ? undefined
        : { fromAt: periods.dayStartAt, toAt: periods.dayEndAt, period: periods.date },
    month:
      limits.budgetMetres === null
        ? undefined
        : { fromAt: periods.monthStartAt, toAt: periods.monthEndAt, period: periods.month },
    year:
      limits.annualCapMetres === null || !inTerm
        ? undefined
        : {
            fromAt: policy.currentStartAt,
            throughAt: policy.currentEndAt,
            period: yearPeriod,
            busyDayAboveMetres: dailyCaps.length === 0 ? null : Math.min(...dailyCaps),
          },
  };
  return { periods, unit, rules, rulesOn, capOf, limits, yearPeriod, request };
}

type AlertPlan = ReturnType<typeof alertPlan>;

/**
 * Records the due alerts and emits each one this check was the first to record (a racing journey's
 * check stops at the alert row): its event, and for a budget the policyholder's email.
 */
async function emitAlerts(
  deps: AlertDeps,
  tenant: Tenant,
  context: {
    watch: Watch;
    journey: StoredJourney;
    plan: AlertPlan;
    sums: SumsResult;
    yearMetres: number | null;
  },
  due: readonly UsageAlertKind[],
): Promise<void> {
  const { policy } = context.watch;
  const { journey, plan, sums, yearMetres } = context;
  const { periods, unit, rules, yearPeriod } = plan;
  const now = deps.clock.now();
  await inTransaction(deps.db, async (trx) => {
    for (const kind of due) {
      const period: Record<UsageAlertKind, string> = {
        budget_exceeded: periods.month,
        daily_cap_reached: periods.date,
        annual_cap_reached: yearPeriod,
      };
      // Only the writer of the alert row emits: a racing journey's check stops here.
      if (!(await insertUsageAlert(trx, { policyId: journey.policyId, kind, period: period[kind], at: now })))
        continue;
      if (kind === 'budget_exceeded' && policy.budget !== null) {
        const budget = policy.budget;
        await recordEvent(
          trx,
          tenant,
          'usage.budget_exceeded',
          {
            policy_reference: policy.policyReference,
            month: periods.month,
            distance_per_month: Number(budget.distancePerMonth),
            usage_unit: budget.usageUnit,
            distance_in_metres: sums.monthMetres,
            journey_reference: journey.id,
          },
          now,
        );
        const contact = await findPolicyholderContact(trx, policy.userId);
        if (contact !== undefined)
          await deps.notifications.queueEmail(
            trx,
            tenant,
            'mileage-budget-exceeded',
            contact.email,
            mileageBudgetExceededEmail({
              firstNames: contact.firstNames,
              policyReference: policy.policyReference,
              month: periods.month,
              budget: `${budget.distancePerMonth} ${unitLabel(budget.usageUnit)}`,
              distanceSoFar: inUnit(sums.monthMetres, budget.usageUnit),
            }),
          );
      } else if (kind === 'daily_cap_reached') {
        await recordEvent(
          trx,
          tenant,
          'usage.daily_cap_reached',
          {
            policy_reference: policy.policyReference,
            date: periods.date,
            daily_cap_distance: rules.daily_cap_distance,
            usage_unit: unit,
            distance_in_metres: sums.dayMetres,
            journey_reference: journey.id,
          },
          now,
        );
      } else if (kind === 'annual_cap_reached') {
        await recordEvent(
          trx,
          tenant,
          'usage.annual_cap_reached',
          {
            policy_reference: policy.policyReference,
            policy_year_start: yearPeriod,
            annual_cap_distance: rules.annual_cap_distance,
            usage_unit: unit,
            distance_in_metres: yearMetres,
            journey_reference: journey.id,
          },
          now,
        );
      }
    }
  });
}

/** Checks one stored journey against its policy's settings and emits the alerts it makes due. */
async function checkAlerts(
  deps: AlertDeps,
  tenant: Tenant,
  watch: Watch,
  journey: StoredJourney,
): Promise<void> {
  const plan = alertPlan(watch, journey);
  const { request } = plan;
  if (request.day === undefined && request.month === undefined && request.year === undefined) return;

  const sums = await readAlertSums(deps.db, request);
  const yearMetres =
    request.year === undefined
      ? null
      : yearCountedMetres(sums.yearMetres, sums.busyDays, (date) =>
          plan.capOf(plan.rulesOn(date).daily_cap_distance),
        );
  const due = dueAlerts(
    plan.limits,
    { dayMetres: sums.dayMetres, monthMetres: sums.monthMetres, yearMetres },
    sums.recorded,
  );
  if (due.length === 0) return;
  await emitAlerts(deps, tenant, { watch, journey, plan, sums, yearMetres }, due);
}

/** The alerts after each journey, with the policies' settings kept in memory; `forget` drops a policy's. */
export function createUsageAlertService(deps: AlertDeps) {
  const { db, logger } = deps;
  // NOTE: most policies have neither a budget nor a capped product; for them ingestion pays one map
  // lookup (null: nothing to check). Products are kept by tenant and reference on the same terms, as
  // many policies name the same few.
  const onRefreshError = (error: unknown) => {
    logger.warn({ err: error }, 'usage settings could not be refreshed; the cached ones are kept');
  };
  const watched = createSettingsCache<Watch | null>({
    capacity: WATCH_CACHE_SIZE,
    ttlMs: WATCH_TTL_MS,
    maxRefreshes: 2,
    onRefreshError,
  });
  const products = createSettingsCache<ProductRecord | null>({
    capacity: WATCH_CACHE_SIZE,
    ttlMs: WATCH_TTL_MS,
    maxRefreshes: 2,
    onRefreshError,
  });

  async function readWatch(tenant: Tenant, journey: StoredJourney): Promise<Watch | null> {
    const policy = await findPolicyUsageSettings(db, tenant, journey.policyReference);
    if (policy === undefined) return null;
    const reference = policy.productReference;
    const product =
      reference === null
        ? null
        : await products.get(`${tenant.companyId}/${tenant.environment}/${reference}`, () =>
            findPolicyProduct(db, tenant, reference),
          );
    return watches(policy, product) ? { policy, product } : null;
  }

  async function watchOf(tenant: Tenant, journey: StoredJourney): Promise<Watch | null> {
    const load = () => readWatch(tenant, journey);
    const watch = await watched.get(journey.policyId, load);
    // A journey after the cached term's end means the policy was renewed since: read the new term.
    if (watch !== null && journey.startAt.getTime() > watch.policy.currentEndAt.getTime())
      return watched.get(journey.policyId, load, true);
    return watch;
  }

  return {
    /** Forgets a policy's settings (its budget changed in this process). */
    forget(policyId: string): void {
      watched.delete(policyId);
    },

    /**
     * After a journey is stored: records and emits the usage alerts it makes due (each once per policy
     * and period, the alert row's key deciding who emits). Never throws: the journey is stored, and an
     * alert missed now is found by the next journey of the period, which checks the same conditions.
     */
    async afterJourney(tenant: Tenant, journey: StoredJourney): Promise<void> {
      try {
        const watch = await watchOf(tenant, journey);
        if (watch !== null) await checkAlerts(deps, tenant, watch, journey);
      } catch (error) {
        logger.error(
          { err: error, journey: journey.id, policy: journey.policyReference },
          'usage alerts could not be checked; the next journey of the policy checks again',
        );
      }
    },
  };
}
