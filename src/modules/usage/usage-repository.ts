import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import { policyUsageTermsQuery } from '../policies/index.ts';
import { findProducts, type ProductRecord } from '../products/index.ts';
import type { UsageAlertKind, UsageUnit } from './rules/usage-alerts.ts';

export interface UsageTables {
  mileage_budgets: {
    policy_id: string;
    company_id: string;
    environment: string;
    /** numeric: exact decimal text. */
    distance_per_month: string;
    usage_unit: UsageUnit;
    created_at: Date;
    updated_at: Date;
  };
  usage_alerts: {
    policy_id: string;
    kind: UsageAlertKind;
    /** `YYYY-MM` (budget), `YYYY-MM-DD` (daily cap) or the policy year's start, ISO (annual cap). */
    period: string;
    created_at: Date;
  };
}

/** What usage needs of a policy, with its budget if it has one. */
export interface PolicyUsageSettings {
  readonly id: string;
  readonly policyReference: string;
  readonly userId: string;
  readonly productReference: string | null;
  readonly currentStartAt: Date;
  readonly currentEndAt: Date;
  readonly budget: MileageBudgetRecord | null;
}

export interface MileageBudgetRecord {
  /** In `usageUnit`, as exact decimal text. */
  readonly distancePerMonth: string;
  readonly usageUnit: UsageUnit;
  readonly updatedAt: Date;
}

/** A policy's product and current term (the policies module's query) with its budget, in one statement. */
const policySettings = (db: Executor) =>
  policyUsageTermsQuery(db)
    .leftJoin('mileage_budgets as b', 'b.policy_id', 'p.id')
    .select(['b.distance_per_month', 'b.usage_unit', 'b.updated_at']);

type SettingsRow = {
  id: string;
  policy_reference: string;
  user_id: string;
  product_reference: string | null;
  current_start_at: Date;
  current_end_at: Date;
  distance_per_month: string | null;
  usage_unit: UsageUnit | null;
  updated_at: Date | null;
};

const toSettings = (row: SettingsRow): PolicyUsageSettings => ({
  id: row.id,
  policyReference: row.policy_reference,
  userId: row.user_id,
  productReference: row.product_reference,
  currentStartAt: row.current_start_at,
  currentEndAt: row.current_end_at,
  budget:
    row.distance_per_month === null || row.usage_unit === null || row.updated_at === null
      ? null
      : { distancePerMonth: row.distance_per_month, usageUnit: row.usage_unit, updatedAt: row.updated_at },
});

/** The tenant's policy under `reference` with its budget, or undefined. */
export async function findPolicyUsageSettings(
  db: Executor,
  tenant: Tenant,
  reference: string,
): Promise<PolicyUsageSettings | undefined> {
  const row = await policySettings(db)
    .where(forTenant(tenant, 'p'))
    .where('p.policy_reference', '=', reference)
    .executeTakeFirst();
  return row === undefined ? undefined : toSettings(row);
}

/** A policy's settings by id (ingestion has the id already). */
export async function findPolicyUsageSettingsById(
  db: Executor,
  policyId: string,
): Promise<PolicyUsageSettings | undefined> {
  const row = await policySettings(db).where('p.id', '=', policyId).executeTakeFirst();
  return row === undefined ? undefined : toSettings(row);
}

/** The tenant's product under `reference` (null: none named, or none by that reference). */
export async function findPolicyProduct(
  db: Executor,
  tenant: Tenant,
  reference: string | null,
): Promise<ProductRecord | null> {
  if (reference === null) return null;
  const [product] = await findProducts(db, tenant, [reference]);
  return product ?? null;
}

/** Sets (or replaces) a policy's budget. */
export async function upsertMileageBudget(
  db: Executor,
  tenant: Tenant,
  policyId: string,
  values: { distancePerMonth: string; usageUnit: UsageUnit; at: Date },
): Promise<void> {
  await db
    .insertInto('mileage_budgets')
    .values({
      policy_id: policyId,
      company_id: tenant.companyId,
      environment: tenant.environment,
      distance_per_month: values.distancePerMonth,
      usage_unit: values.usageUnit,
      created_at: values.at,
      updated_at: values.at,
    })
    .onConflict((oc) =>
      oc.constraint('mileage_budgets_pkey').doUpdateSet({
        distance_per_month: values.distancePerMonth,
        usage_unit: values.usageUnit,
        updated_at: values.at,
      }),
    )
    .execute();
}

/** What to sum for one journey's alerts; a period left out is not read. */
export interface SumsRequest {
  readonly policyId: string;
  readonly day?: { readonly fromAt: Date; readonly toAt: Date; readonly period: string } | undefined;
  readonly month?: { readonly fromAt: Date; readonly toAt: Date; readonly period: string } | undefined;
  readonly year?:
    | {
        readonly fromAt: Date;
        /** Inclusive: the term's last second. */
        readonly throughAt: Date;
        readonly period: string;
        /** London days above this are listed (the smallest daily cap of any rule set); null: none. */
        readonly busyDayAboveMetres: number | null;
      }
    | undefined;
}

export interface SumsResult {
  readonly dayMetres: number;
  readonly monthMetres: number;
  readonly yearMetres: number;
  readonly busyDays: Array<{ date: string; metres: number }>;
  /** The alerts of these periods already recorded. */
  readonly recorded: Set<UsageAlertKind>;
}

const journeySum = (policyId: string, fromAt: Date, toAt: Date, inclusive: boolean) => sql<string>`(
  select coalesce(sum(distance_metres), 0)::bigint from journeys
  where policy_id = ${policyId} and not is_void and start_at >= ${fromAt}
    and start_at ${inclusive ? sql`<=` : sql`<`} ${toAt})`;

/**
 * The day's, month's and year's sums of one policy, the year's days over a cap, and the alerts of
 * those periods already recorded: one round trip, each sum from the (policy_id, start_at) index.
 */
export async function readAlertSums(db: Executor, request: SumsRequest): Promise<SumsResult> {
  const { policyId, day, month, year } = request;
  const kinds: Array<{ kind: UsageAlertKind; period: string }> = [];
  if (month !== undefined) kinds.push({ kind: 'budget_exceeded', period: month.period });
  if (day !== undefined) kinds.push({ kind: 'daily_cap_reached', period: day.period });
  if (year !== undefined) kinds.push({ kind: 'annual_cap_reached', period: year.period });
  const result = await sql<{
    day_metres: number | string | null;
    month_metres: number | string | null;
    year_metres: number | string | null;
    busy_days: Array<[string, number | string]> | string | null;
    recorded: string | null;
  }>`
    select
      ${day === undefined ? sql`null` : journeySum(policyId, day.fromAt, day.toAt, false)} as day_metres,
      ${month === undefined ? sql`null` : journeySum(policyId, month.fromAt, month.toAt, false)} as month_metres,
      ${year === undefined ? sql`null` : journeySum(policyId, year.fromAt, year.throughAt, true)} as year_metres,
      ${
        year === undefined || year.busyDayAboveMetres === null
          ? sql`null`
          : sql`(
        select jsonb_agg(jsonb_build_array(d.day, d.metres)) from (
          select ((start_at at time zone 'Europe/London')::date)::text as day, sum(distance_metres) as metres
          from journeys
          where policy_id = ${policyId} and not is_void and start_at >= ${year.fromAt}
            and start_at <= ${year.throughAt}
          group by 1 having sum(distance_metres) > ${year.busyDayAboveMetres}
        ) d)`
      } as busy_days,
      ${
        kinds.length === 0
          ? sql`null`
          : sql`(
        select string_agg(kind, ',') from usage_alerts
        where policy_id = ${policyId} and (kind, period) in (${sql.join(
          kinds.map((k) => sql`(${k.kind}::text, ${k.period}::text)`),
        )}))`
      } as recorded`.execute(db);
  const row = result.rows[0];
  const busy: Array<[string, number | string]> =
    row?.busy_days === null || row?.busy_days === undefined
      ? []
      : typeof row.busy_days === 'string'
        ? (JSON.parse(row.busy_days) as Array<[string, number | string]>)
        : row.busy_days;
  return {
    dayMetres: Number(row?.day_metres ?? 0),
    monthMetres: Number(row?.month_metres ?? 0),
    yearMetres: Number(row?.year_metres ?? 0),
    busyDays: busy.map(([date, metres]) => ({ date, metres: Number(metres) })),
    recorded: new Set((row?.recorded ?? '').split(',').filter((k): k is UsageAlertKind => k !== '')),
  };
}

/** Records an alert; false when it was already recorded (only the first writer goes on to emit it). */
export async function insertUsageAlert(
  db: Executor,
  values: { policyId: string; kind: UsageAlertKind; period: string; at: Date },
): Promise<boolean> {
  const row = await db
    .insertInto('usage_alerts')
    .values({ policy_id: values.policyId, kind: values.kind, period: values.period, created_at: values.at })
    .onConflict((oc) => oc.constraint('usage_alerts_pkey').doNothing())
    .returning('policy_id')
    .executeTakeFirst();
  return row !== undefined;
}
