import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { UsageUnit } from '../policies/index.ts';
import type { CappedDay, RuleCredit } from './rules/usage-rules.ts';

export interface UsageRuleTables {
  journey_rule_credits: {
    id: string;
    journey_id: string;
    policy_id: string;
    statement_id: string;
    rule: RuleCredit['rule'];
    day: string;
    distance_metres: number;
    credit_pence: number;
    created_at: Date;
  };
  policy_usage_years: {
    policy_id: string;
    year_start_at: Date;
    charged_metres: number;
  };
}

/** A statement being written, as the rules' queries see it. */
export interface RuleClaim {
  readonly statementId: string;
  readonly policyId: string;
  /** The previous statement's end (null before the first): journeys after it are in the period. */
  readonly afterAt: Date | null;
  readonly endAt: Date;
}

/** Before any policy's cover: the lower bound of a first statement's period. */
const MIN_INSTANT = new Date('1900-01-01T00:00:00Z');

/**
 * The busiest London day of statements that share days with earlier ones (late uploads, a period that
 * began mid-day), counting what the earlier statements charged on those days: statement id → metres.
 * The others' busiest day comes with their journeys' sums (`billJourneys`).
 */
export async function sharedDaySums(
  trx: Executor,
  claims: readonly RuleClaim[],
): Promise<Map<string, number>> {
  if (claims.length === 0) return new Map();
  const result = await sql<{ statement_id: string; busiest_day_metres: string }>`
    with c as (
      select * from unnest(${claims.map((c) => c.statementId)}::uuid[], ${claims.map((c) => c.policyId)}::uuid[],
        ${claims.map((c) => c.afterAt ?? MIN_INSTANT)}::timestamptz[], ${claims.map((c) => c.endAt)}::timestamptz[])
        as c(statement_id, policy_id, after_at, end_at)
    ), days as (
      select c.statement_id, c.policy_id, c.after_at, d.day, sum(d.distance_metres) as metres
      from c cross join lateral (
        select (j.start_at at time zone 'Europe/London')::date as day, j.distance_metres
        from journeys j
        where j.policy_id = c.policy_id and j.start_at > c.after_at and j.start_at <= c.end_at and not j.is_void
        union all
        select (j.start_at at time zone 'Europe/London')::date, j.distance_metres
        from journeys j
        where j.policy_id = c.policy_id and j.late and j.statement_version_id = c.statement_id and not j.is_void
      ) d
      group by 1, 2, 3, 4
    )
    select days.statement_id, max(days.metres + coalesce(earlier.charged, 0))::text as busiest_day_metres
    from days
    left join lateral (
      select sum(j.distance_metres) - coalesce(sum(cr.metres), 0) as charged
      from journeys j
      left join lateral (
        select sum(r.distance_metres) as metres from journey_rule_credits r
        where r.journey_id = j.id and r.rule = 'daily_cap'
      ) cr on true
      where days.day <= (days.after_at at time zone 'Europe/London')::date
        and j.policy_id = days.policy_id and not j.is_void
        and j.start_at >= (days.day::timestamp at time zone 'Europe/London')
        and j.start_at < ((days.day + 1)::timestamp at time zone 'Europe/London')
        and j.start_at <= days.after_at
        and j.statement_version_id is distinct from days.statement_id
    ) earlier on true
    group by days.statement_id`.execute(trx);
  return new Map(result.rows.map((r) => [r.statement_id, Number(r.busiest_day_metres)]));
}

/** A journey as the rules read it, with the daily-cap credit it has had. */
export interface RuleJourneyRow {
  readonly statementId: string;
  readonly id: string;
  readonly startAt: Date;
  readonly distanceMetres: number;
  readonly usagePremiumPence: number;
  readonly usageRate: string;
  readonly usageUnit: UsageUnit;
  /** Billed by the statement being written (its period's, or a late upload it claimed). */
  readonly claimed: boolean;
  readonly dailyCapCreditMetres: number;
  readonly dailyCapCreditPence: number;
}

/**
 * The journeys of some statements one by one, with the other billed journeys of the London days they
 * fall on (`fromAt` to `toAt`): the rules' input when the sums show a rule may touch them.
 */
export async function ruleJourneys(
  trx: Executor,
  claims: ReadonlyArray<RuleClaim & { readonly fromAt: Date; readonly toAt: Date }>,
): Promise<RuleJourneyRow[]> {
  if (claims.length === 0) return [];
  const result = await sql<{
    statement_id: string;
    id: string;
    start_at: Date;
    distance_metres: number;
    usage_premium_pence: number;
    usage_rate: string;
    distance_unit: UsageUnit;
    claimed: boolean;
    daily_metres: string | null;
    daily_pence: string | null;
  }>`
    select c.statement_id, j.id, j.start_at, j.distance_metres, j.usage_premium_pence, j.usage_rate,
      j.distance_unit,
      (j.start_at > c.after_at or (j.late and j.statement_version_id = c.statement_id)) as claimed,
      cr.metres as daily_metres, cr.pence as daily_pence
    from unnest(${claims.map((c) => c.statementId)}::uuid[], ${claims.map((c) => c.policyId)}::uuid[],
      ${claims.map((c) => c.afterAt ?? MIN_INSTANT)}::timestamptz[], ${claims.map((c) => c.endAt)}::timestamptz[],
      ${claims.map((c) => c.fromAt)}::timestamptz[], ${claims.map((c) => c.toAt)}::timestamptz[])
      as c(statement_id, policy_id, after_at, end_at, from_at, to_at)
    join journeys j on j.policy_id = c.policy_id and j.start_at >= c.from_at and j.start_at < c.to_at
      and j.start_at <= c.end_at and not j.is_void
    left join lateral (
      select sum(r.distance_metres) as metres, sum(r.credit_pence) as pence from journey_rule_credits r
      where r.journey_id = j.id and r.rule = 'daily_cap'
    ) cr on true`.execute(trx);
  return result.rows.map((r) => ({
    statementId: r.statement_id,
    id: r.id,
    startAt: r.start_at,
    distanceMetres: r.distance_metres,
    usagePremiumPence: r.usage_premium_pence,
    usageRate: r.usage_rate,
    usageUnit: r.distance_unit,
    claimed: r.claimed,
    dailyCapCreditMetres: Number(r.daily_metres ?? 0),
    dailyCapCreditPence: Number(r.daily_pence ?? 0),
  }));
}

/** The start of every term of some policies (the keys of their policy years), ascending. */
export async function termStarts(trx: Executor, policyIds: readonly string[]): Promise<Map<string, Date[]>> {
  const starts = new Map<string, Date[]>();
  if (policyIds.length === 0) return starts;
  const result = await sql<{ policy_id: string; start_s: string }>`
    select distinct policy_id, (snapshot->'policy'->>'start_date') as start_s
    from policy_versions
    where policy_id = any(${[...policyIds]}::uuid[]) and snapshot is not null and superseded_at is null
    order by policy_id, start_s`.execute(trx);
  for (const r of result.rows)
    starts.set(r.policy_id, [...(starts.get(r.policy_id) ?? []), new Date(Number(r.start_s) * 1000)]);
  for (const list of starts.values()) list.sort((a, b) => a.getTime() - b.getTime());
  return starts;
}

/** Distance counted towards each policy year's annual cap, by policy and year start (ISO). */
export async function yearCounts(
  trx: Executor,
  policyIds: readonly string[],
): Promise<Map<string, Map<string, number>>> {
  const counts = new Map<string, Map<string, number>>();
  if (policyIds.length === 0) return counts;
  const rows = await trx
    .selectFrom('policy_usage_years')
    .select(['policy_id', 'year_start_at', 'charged_metres'])
    .where('policy_id', 'in', [...policyIds])
    .execute();
  for (const r of rows) {
    const of = counts.get(r.policy_id) ?? new Map<string, number>();
    of.set(r.year_start_at.toISOString(), r.charged_metres);
    counts.set(r.policy_id, of);
  }
  return counts;
}

/** Sets years' counted distance (absolute values, computed under the policies' row locks). */
export async function setYearCounts(
  trx: Executor,
  counts: ReadonlyArray<{ policyId: string; yearStart: string; metres: number }>,
): Promise<void> {
  if (counts.length === 0) return;
  await sql`
    insert into policy_usage_years (policy_id, year_start_at, charged_metres)
    select * from unnest(${counts.map((c) => c.policyId)}::uuid[], ${counts.map((c) => c.yearStart)}::timestamptz[],
      ${counts.map((c) => c.metres)}::bigint[])
    on conflict (policy_id, year_start_at) do update set charged_metres = excluded.charged_metres`.execute(
    trx,
  );
}

export async function insertRuleCredits(
  trx: Executor,
  rows: ReadonlyArray<RuleCredit & { policyId: string; statementId: string }>,
  at: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into journey_rule_credits (journey_id, policy_id, statement_id, rule, day, distance_metres,
      credit_pence, created_at)
    select j, p, s, r, d, m, c, ${at}::timestamptz
    from unnest(${rows.map((r) => r.journeyId)}::uuid[], ${rows.map((r) => r.policyId)}::uuid[],
      ${rows.map((r) => r.statementId)}::uuid[], ${rows.map((r) => r.rule)}::text[],
      ${rows.map((r) => r.date)}::date[], ${rows.map((r) => r.distanceMetres)}::bigint[],
      ${rows.map((r) => r.creditPence)}::bigint[]) as t(j, p, s, r, d, m, c)`.execute(trx);
}

/** A statement's capped days as stored (the API's shape, amounts in pence). */
export type StoredCappedDay = CappedDay;
