import { sql, type Generated, type Selectable } from 'kysely';
import { jsonRows } from '../../platform/db/json-rows.ts';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { StatementOdometerTables } from './odometer-billing.ts';
import type { CappedDay } from './rules/usage-rules.ts';
import type { ScoreMonthLine } from './score-billing.ts';
import type { UsageRuleTables } from './usage-rules-repository.ts';

/** Statements, the credit ledger, and the product rules' records (usage-rules-repository). */
export interface StatementTables extends UsageRuleTables, StatementOdometerTables {
  statements: {
    id: string;
    policy_id: string;
    company_id: string;
    environment: string;
    period_start_at: Date;
    period_end_at: Date;
    billing_date: string | null;
    final: Generated<boolean>;
    journey_count: number;
    distance_metres: number;
    duration_seconds: number;
    usage_premium_pence: number;
    installments: number;
    subscription_premium_pence: number;
    total_premium_pence: number;
    credits_used_pence: number;
    billed_premium_pence: number;
    /** Billed but below the processor's minimum charge: carried to the next statement (0019). */
    carried_forward_pence: number;
    /** Carried in from an earlier statement and billed here. */
    brought_forward_pence: number;
    /** The product rules' lines (migration 0022). */
    cap_credit_pence: number;
    annual_cap_credit_pence: number;
    free_distance_credit_pence: number;
    minimum_top_up_pence: number;
    capped_days: string | CappedDay[];
    /** Price by score (migration 0060): the line, and what it adjusted each month by. */
    score_adjustment_pence: Generated<number>;
    score_months: Generated<string | ScoreMonthLine[]>;
    payment_id: string | null;
    created_at: Date;
  };
  policy_credits: {
    id: Generated<string>;
    policy_id: string;
    company_id: string;
    environment: string;
    amount_pence: number;
    source: 'void' | 'goodwill' | 'refund' | 'statement' | 'carried_forward';
    reference: string;
    reason: string | null;
    created_at: Date;
  };
}

export type StatementRow = Selectable<StatementTables['statements']>;

export interface ClaimedTotals {
  readonly journeyCount: number;
  /** Of them, late uploads (journeys of days an earlier statement billed). */
  readonly lateJourneyCount: number;
  readonly usagePremiumPence: number;
  readonly distanceMetres: number;
  readonly durationSeconds: number;
  /** The most distance of one London day among the period's journeys (asked with `byDay`). */
  readonly busiestDayMetres: number;
  /** The earliest start among them, late uploads included (null: none). */
  readonly firstStartAt: Date | null;
}

/**
 * The journeys each new statement bills, as totals per statement: those of its policy that start in its
 * period (after `afterAt`, the previous statement's end, up to `endAt`), read and summed without a
 * write, and the late uploads since the previous statement, which are claimed by setting
 * `statement_version_id` in an UPDATE that re-checks it is unset. Exactly once (migration 0014): the
 * caller holds each policy's row lock, which excludes storing and voiding its journeys meanwhile, and
 * periods do not overlap; a journey stored after a period was billed is marked late when stored.
 */
export async function billJourneys(
  trx: Executor,
  claims: ReadonlyArray<{
    statementId: string;
    policyId: string;
    afterAt: Date | null;
    endAt: Date;
    /** Whether to find the busiest London day of the period's journeys. */
    byDay?: boolean;
  }>,
): Promise<Map<string, ClaimedTotals>> {
  const totals = new Map<string, ClaimedTotals>();
  if (claims.length === 0) return totals;
  // Late journeys start at or before the previous end, so a period's range holds only journeys that no
  // statement has billed.
  // One index-only range scan a policy (lateral), whatever the planner guesses of the arrays' length.
  // NOTE: a statement whose product caps days asks for its busiest London day too (`byDay`), from the
  // same scan: its journeys are summed by day first (one group for the others).
  const inPeriod = sql<ClaimedRow>`
    select c.statement_id, t.*
    from json_to_recordset(${jsonRows(
      claims.map((c) => ({
        statement_id: c.statementId,
        policy_id: c.policyId,
        after_ms: (c.afterAt ?? MIN_INSTANT).getTime(),
        end_ms: c.endAt.getTime(),
        by_day: c.byDay === true,
      })),
    )}::json) as c0(statement_id uuid, policy_id uuid, after_ms float8, end_ms float8, by_day boolean)
    cross join lateral (select c0.statement_id, c0.policy_id, to_timestamp(c0.after_ms / 1000) as after_at,
      to_timestamp(c0.end_ms / 1000) as end_at, c0.by_day) c
    cross join lateral (
      select sum(d.journey_count) as journey_count, sum(d.usage_premium_pence) as usage_premium_pence,
        sum(d.distance_metres) as distance_metres, extract(epoch from sum(d.duration)) as duration_seconds,
        max(d.distance_metres) as busiest_day_metres, min(d.first_start_at) as first_start_at
      from (
        select count(*) as journey_count, sum(j.usage_premium_pence) as usage_premium_pence,
          sum(j.distance_metres) as distance_metres, sum(j.end_at - j.start_at) as duration,
          min(j.start_at) as first_start_at
        from journeys j
        where j.policy_id = c.policy_id and j.start_at > c.after_at and j.start_at <= c.end_at and not j.is_void
        group by case when c.by_day then (j.start_at at time zone 'Europe/London')::date end
      ) d
    ) t
    where t.journey_count > 0`;
  const late = claims.filter((c) => c.afterAt !== null);
  const lateUploads = sql<ClaimedRow>`
    with claimed as (
      update journeys j set statement_version_id = c.statement_id
      from json_to_recordset(${jsonRows(
        late.map((c) => ({ statement_id: c.statementId, policy_id: c.policyId, after_at: c.afterAt })),
      )}::json) as c(statement_id uuid, policy_id uuid, after_at timestamptz)
      where j.policy_id = c.policy_id and j.late and j.start_at <= c.after_at
        and j.statement_version_id is null and not j.is_void
      returning c.statement_id, j.usage_premium_pence, j.distance_metres, j.start_at, j.end_at
    )
    ${totalsByStatement}`;
  const rows = [
    ...(await inPeriod.execute(trx)).rows.map((row) => ({ ...row, late: false })),
    ...(late.length === 0
      ? []
      : (await lateUploads.execute(trx)).rows.map((row) => ({ ...row, late: true }))),
  ];
  for (const row of rows) {
    const before = totals.get(row.statement_id);
    totals.set(row.statement_id, {
      journeyCount: (before?.journeyCount ?? 0) + Number(row.journey_count),
      lateJourneyCount: (before?.lateJourneyCount ?? 0) + (row.late ? Number(row.journey_count) : 0),
      usagePremiumPence: (before?.usagePremiumPence ?? 0) + Number(row.usage_premium_pence),
      distanceMetres: (before?.distanceMetres ?? 0) + Number(row.distance_metres),
      durationSeconds: (before?.durationSeconds ?? 0) + Number(row.duration_seconds),
      busiestDayMetres: Math.max(before?.busiestDayMetres ?? 0, Number(row.busiest_day_metres)),
      firstStartAt:
        before?.firstStartAt !== undefined &&
        before.firstStartAt !== null &&
        before.firstStartAt < row.first_start_at
          ? before.firstStartAt
          : row.first_start_at,
    });
  }
  return totals;
}

/** Before any policy's cover: the lower bound of a first statement's period. */
const MIN_INSTANT = new Date('1900-01-01T00:00:00Z');

interface ClaimedRow {
  statement_id: string;
  journey_count: string;
  usage_premium_pence: string;
  distance_metres: string;
  duration_seconds: string;
  busiest_day_metres: string;
  first_start_at: Date;
}

// Sums as text: bigint and numeric sums exceed what pg hands back as numbers. Journeys start and end on
// whole seconds (UNIX times), so their durations sum to whole seconds.
const totalsByStatement = sql`
  select statement_id, count(*) as journey_count, sum(usage_premium_pence) as usage_premium_pence,
    sum(distance_metres) as distance_metres,
    extract(epoch from sum(end_at - start_at)) as duration_seconds,
    0 as busiest_day_metres, min(start_at) as first_start_at
  from claimed group by statement_id`;

export async function lastStatement(trx: Executor, policyId: string): Promise<StatementRow | undefined> {
  return trx
    .selectFrom('statements')
    .selectAll()
    .where('policy_id', '=', policyId)
    .orderBy('period_end_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Links statements to their charges (statement id → payment id), in one statement. */
export async function setStatementPayments(
  db: Executor,
  byStatement: ReadonlyMap<string, string>,
): Promise<void> {
  if (byStatement.size === 0) return;
  await sql`
    update statements s set payment_id = v.payment_id
    from unnest(${[...byStatement.keys()]}::uuid[], ${[...byStatement.values()]}::uuid[]) as v(id, payment_id)
    where s.id = v.id`.execute(db);
}

export async function findStatement(
  db: Executor,
  tenant: Tenant,
  id: string,
): Promise<StatementRow | undefined> {
  return db
    .selectFrom('statements')
    .selectAll()
    .where(forTenant(tenant))
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Statements of a policy, newest first, after the cursor (a period end, exclusive). */
export async function listStatements(
  db: Executor,
  tenant: Tenant,
  policyId: string,
  page: { limit: number; before?: Date | undefined },
): Promise<StatementRow[]> {
  let query = db
    .selectFrom('statements')
    .selectAll()
    .where(forTenant(tenant))
    .where('policy_id', '=', policyId)
    .orderBy('period_end_at', 'desc')
    .limit(page.limit);
  if (page.before !== undefined) query = query.where('period_end_at', '<', page.before);
  return query.execute();
}

/** Many statements in one INSERT from one JSON parameter (json-rows.ts). */
export async function insertStatements(trx: Executor, rows: readonly StatementRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into statements (id, policy_id, company_id, environment, period_start_at, period_end_at,
      billing_date, final, journey_count, distance_metres, duration_seconds, usage_premium_pence,
      installments, subscription_premium_pence, total_premium_pence, credits_used_pence,
      billed_premium_pence, carried_forward_pence, brought_forward_pence, cap_credit_pence,
      annual_cap_credit_pence, free_distance_credit_pence, minimum_top_up_pence, capped_days,
      score_adjustment_pence, score_months, payment_id, created_at)
    select id, policy_id, company_id, environment, to_timestamp(period_start_ms / 1000),
      to_timestamp(period_end_ms / 1000), billing_date, final, journey_count, distance_metres,
      duration_seconds, usage_premium_pence, installments, subscription_premium_pence, total_premium_pence,
      credits_used_pence, billed_premium_pence, carried_forward_pence, brought_forward_pence,
      cap_credit_pence, annual_cap_credit_pence, free_distance_credit_pence, minimum_top_up_pence,
      capped_days, score_adjustment_pence, score_months, payment_id, to_timestamp(created_ms / 1000)
    from json_to_recordset(${jsonRows(
      rows.map((row) => ({
        id: row.id,
        policy_id: row.policy_id,
        company_id: row.company_id,
        environment: row.environment,
        period_start_ms: row.period_start_at.getTime(),
        period_end_ms: row.period_end_at.getTime(),
        billing_date: row.billing_date,
        final: row.final,
        journey_count: row.journey_count,
        distance_metres: row.distance_metres,
        duration_seconds: row.duration_seconds,
        usage_premium_pence: row.usage_premium_pence,
        installments: row.installments,
        subscription_premium_pence: row.subscription_premium_pence,
        total_premium_pence: row.total_premium_pence,
        credits_used_pence: row.credits_used_pence,
        billed_premium_pence: row.billed_premium_pence,
        carried_forward_pence: row.carried_forward_pence,
        brought_forward_pence: row.brought_forward_pence,
        cap_credit_pence: row.cap_credit_pence,
        annual_cap_credit_pence: row.annual_cap_credit_pence,
        free_distance_credit_pence: row.free_distance_credit_pence,
        minimum_top_up_pence: row.minimum_top_up_pence,
        capped_days:
          typeof row.capped_days === 'string' ? (JSON.parse(row.capped_days) as unknown) : row.capped_days,
        score_adjustment_pence: row.score_adjustment_pence,
        score_months:
          typeof row.score_months === 'string' ? (JSON.parse(row.score_months) as unknown) : row.score_months,
        payment_id: row.payment_id,
        created_ms: row.created_at.getTime(),
      })),
    )}::json)
      as t(id uuid, policy_id uuid, company_id uuid, environment text, period_start_ms float8,
        period_end_ms float8, billing_date date, final boolean, journey_count int, distance_metres bigint,
        duration_seconds bigint, usage_premium_pence bigint, installments int, subscription_premium_pence bigint,
        total_premium_pence bigint, credits_used_pence bigint, billed_premium_pence bigint,
        carried_forward_pence bigint, brought_forward_pence bigint, cap_credit_pence bigint,
        annual_cap_credit_pence bigint, free_distance_credit_pence bigint, minimum_top_up_pence bigint,
        capped_days jsonb, score_adjustment_pence bigint, score_months jsonb, payment_id uuid,
        created_ms float8)`.execute(trx);
}

/** What writing a statement needs to know of a locked policy, for many policies in one query. */
export interface BillingState {
  readonly policyId: string;
  readonly policyReference: string;
  readonly companyId: string;
  readonly environment: string;
  readonly userId: string;
  readonly status: string;
  readonly versionCount: number;
  /** Where cover first started: where the first statement starts. */
  readonly firstStartAt: Date;
  /** The current term's start, where its installments count from. */
  readonly termStartAt: Date;
  readonly billingDay: number | null;
  readonly subscriptionPremiumPence: number;
  readonly subscriptionInstallments: number | null;
  /** The first term's installments paid at binding (migration 0063): never billed. */
  readonly prepaidInstallments: number;
  /** The latest statement's end (null before the first). */
  readonly previousEndAt: Date | null;
  /**
   * The term before the current one, when the next period starts in it (a statement then spans both
   * terms and carries the installments of each): its start and installment plan.
   */
  readonly previousTerm: {
    readonly startAt: Date;
    readonly billingDay: number | null;
    readonly subscriptionPremiumPence: number;
    readonly subscriptionInstallments: number | null;
  } | null;
  /** Where the statement email goes. */
  readonly policyholder: { readonly email: string; readonly firstNames: string };
  /** The product the terms in force name, whose rules bill the statement. */
  readonly productReference: string | null;
}

/**
 * Locks many policies for their statements, in id order (so two callers locking overlapping sets cannot
 * deadlock), and reads what billing needs from the rows themselves (migration 0015) and the
 * policyholder's name and email for the statement email. The lock comes with the read: in READ
 * COMMITTED a row locked after waiting for another statement's transaction is returned as that
 * transaction left it, so `billed_through_at` is never stale. The latest statement's end is read too
 * and the later of the two taken: a statement written outside this code (by hand, or by a process
 * older than migration 0015) can then never be billed over.
 */
export async function lockBillingStates(db: Executor, policyIds: readonly string[]): Promise<BillingState[]> {
  if (policyIds.length === 0) return [];
  const result = await sql<{
    id: string;
    policy_reference: string;
    company_id: string;
    environment: string;
    user_id: string;
    status: string;
    version_count: number;
    first_start_at: Date;
    current_start_at: Date;
    billing_day: number | null;
    subscription_premium_pence: string;
    subscription_installments: number | null;
    prepaid_installments: number;
    billed_through_at: Date | null;
    email: string;
    first_names: string;
    previous_start_s: string | null;
    previous_billing_day: number | null;
    previous_premium_pence: string | null;
    previous_installments: number | null;
    product_reference: string | null;
  }>`
    select p.id, p.policy_reference, p.company_id, p.environment, p.user_id, p.status, p.version_count,
      p.first_start_at, p.current_start_at, p.billing_day, p.subscription_premium_pence,
      p.subscription_installments, p.prepaid_installments, p.product_reference, u.email, u.first_names, b.billed_through_at,
      prev.start_s as previous_start_s, prev.billing_day as previous_billing_day,
      prev.premium_pence as previous_premium_pence, prev.installments as previous_installments
    from policies p
    join users u on u.id = p.user_id
    cross join lateral (
      select greatest(p.billed_through_at,
        (select max(s.period_end_at) from statements s where s.policy_id = p.id)) as billed_through_at
    ) b
    -- NOTE: read only when the next period starts before the current term (a one-time filter: no
    -- version is read for the usual policy, billed within its term).
    left join lateral (
      select (v.snapshot->'policy'->>'start_date')::bigint as start_s,
        (v.snapshot->'policy'->>'billing_day_date')::int as billing_day,
        round((v.snapshot->'pricing'->>'subscription_premium')::numeric * 100)::bigint as premium_pence,
        (v.snapshot->'pricing'->>'subscription_installments')::int as installments
      from policy_versions v
      where coalesce(b.billed_through_at + interval '1 second', p.first_start_at) < p.current_start_at
        and v.policy_id = p.id and v.snapshot is not null and v.superseded_at is null
        and (v.snapshot->'policy'->>'start_date')::bigint < extract(epoch from p.current_start_at)
      order by v.sequence desc
      limit 1
    ) prev on true
    where p.id = any(${[...policyIds]}::uuid[])
    order by p.id
    for update of p`.execute(db);
  return result.rows.map((r) => ({
    policyId: r.id,
    policyReference: r.policy_reference,
    companyId: r.company_id,
    environment: r.environment,
    userId: r.user_id,
    status: r.status,
    versionCount: r.version_count,
    firstStartAt: r.first_start_at,
    termStartAt: r.current_start_at,
    billingDay: r.billing_day,
    subscriptionPremiumPence: Number(r.subscription_premium_pence),
    subscriptionInstallments: r.subscription_installments,
    prepaidInstallments: r.prepaid_installments,
    previousEndAt: r.billed_through_at,
    previousTerm:
      r.previous_start_s === null
        ? null
        : {
            startAt: new Date(Number(r.previous_start_s) * 1000),
            billingDay: r.previous_billing_day,
            subscriptionPremiumPence: Number(r.previous_premium_pence ?? 0),
            subscriptionInstallments: r.previous_installments,
          },
    policyholder: { email: r.email, firstNames: r.first_names },
    productReference: r.product_reference,
  }));
}
