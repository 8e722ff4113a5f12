import { sql, type Generated, type Selectable } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { billedByStatement, type JourneySource } from '../journeys/index.ts';
import type { CappedDay } from './rules/usage-rules.ts';
import type { VoidedJourney } from './usage-billing.ts';
import type { StatementOdometerTables } from './odometer-billing.ts';
import type { UsageRuleTables } from './usage-rules-repository.ts';
import { jsonRows } from '../../platform/db/json-rows.ts';

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

export interface BilledJourney {
  readonly id: string;
  readonly providerReference: string | null;
  readonly policyReference: string;
  readonly policyVersionId: string;
  readonly route: string;
  readonly startAt: Date;
  readonly endAt: Date;
  readonly distanceMetres: number;
  readonly distanceUnit: string;
  readonly usageRate: string;
  readonly usagePremiumPence: number;
  readonly startLat: number | null;
  readonly startLng: number | null;
  readonly endLat: number | null;
  readonly endLng: number | null;
  readonly startName: string | null;
  readonly endName: string | null;
  readonly startPostcode: string | null;
  readonly endPostcode: string | null;
  readonly isVoid: boolean;
  readonly source: JourneySource;
}

const journeyColumns = [
  'id',
  'provider_reference',
  'policy_reference',
  'policy_version_id',
  'route',
  'start_at',
  'end_at',
  'distance_metres',
  'distance_unit',
  'usage_rate',
  'usage_premium_pence',
  'start_lat',
  'start_lng',
  'end_lat',
  'end_lng',
  'start_name',
  'end_name',
  'start_postcode',
  'end_postcode',
  'is_void',
  'source',
] as const;

type JourneyRow = {
  id: string;
  provider_reference: string | null;
  policy_reference: string;
  policy_version_id: string;
  route: string;
  start_at: Date;
  end_at: Date;
  distance_metres: number;
  distance_unit: string;
  usage_rate: string;
  usage_premium_pence: number;
  start_lat: number | null;
  start_lng: number | null;
  end_lat: number | null;
  end_lng: number | null;
  start_name: string | null;
  end_name: string | null;
  start_postcode: string | null;
  end_postcode: string | null;
  is_void: boolean;
  source: JourneySource;
};

const toJourney = (r: JourneyRow): BilledJourney => ({
  id: r.id,
  providerReference: r.provider_reference,
  policyReference: r.policy_reference,
  policyVersionId: r.policy_version_id,
  route: r.route,
  startAt: r.start_at,
  endAt: r.end_at,
  distanceMetres: r.distance_metres,
  distanceUnit: r.distance_unit,
  usageRate: r.usage_rate,
  usagePremiumPence: r.usage_premium_pence,
  startLat: r.start_lat,
  startLng: r.start_lng,
  endLat: r.end_lat,
  endLng: r.end_lng,
  startName: r.start_name,
  endName: r.end_name,
  startPostcode: r.start_postcode,
  endPostcode: r.end_postcode,
  source: r.source,
  isVoid: r.is_void,
});

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

/**
 * The journeys of some statements of one policy, by statement, each list by start: those that start in
 * the statements' periods (a range of the (policy_id, start_at) index) and the late uploads they claimed
 * (the partial index on late ones), each given to its statement by `journey_statement` (migration 0014),
 * the rule billing follows. Reads nothing outside those periods however long the policy's history.
 */
export async function listStatementJourneys(
  db: Executor,
  policyId: string,
  statements: ReadonlyArray<{ id: string; period_start_at: Date; period_end_at: Date }>,
): Promise<Map<string, BilledJourney[]>> {
  const byStatement = new Map<string, BilledJourney[]>(statements.map((st) => [st.id, []]));
  if (statements.length === 0) return byStatement;
  const ids = statements.map((st) => st.id);
  const journeys = db
    .selectFrom('journeys')
    .select([...journeyColumns, billedByStatement.as('billed_by')])
    .where('policy_id', '=', policyId);
  // One after the other: `db` may be a transaction, one connection.
  const inPeriods = await journeys
    .where('start_at', '>=', new Date(Math.min(...statements.map((st) => st.period_start_at.getTime()))))
    .where('start_at', '<=', new Date(Math.max(...statements.map((st) => st.period_end_at.getTime()))))
    .execute();
  const lateUploads = await journeys
    .where('late', '=', true)
    .where('statement_version_id', 'in', ids)
    .execute();
  const rows = new Map([...inPeriods, ...lateUploads].map((row) => [row.id, row]));
  for (const row of [...rows.values()].sort((a, b) => a.start_at.getTime() - b.start_at.getTime()))
    if (row.billed_by !== null) byStatement.get(row.billed_by)?.push(toJourney(row));
  return byStatement;
}

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
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
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
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
    .where('policy_id', '=', policyId)
    .orderBy('period_end_at', 'desc')
    .limit(page.limit);
  if (page.before !== undefined) query = query.where('period_end_at', '<', page.before);
  return query.execute();
}

/**
 * Voids of journeys already billed that no statement has credited yet: each is claimed by its policy's
 * new statement and becomes a credit on the ledger of what was paid for it (its premium less what the
 * product's rules credited of it), in one statement for many policies. Returns them, for the rules.
 */
export async function creditVoidedJourneys(
  trx: Executor,
  statements: ReadonlyArray<{ statementId: string; policyId: string }>,
  at: Date,
): Promise<VoidedJourney[]> {
  if (statements.length === 0) return [];
  const result = await sql<{
    statement_id: string;
    policy_id: string;
    journey_id: string;
    start_at: Date;
    distance_metres: number;
    paid_pence: string;
    uncounted_metres: string;
  }>`
    with voids as (
      update journey_voids v set credited_statement_version_id = s.statement_id
      from unnest(${statements.map((s) => s.statementId)}::uuid[], ${statements.map((s) => s.policyId)}::uuid[])
        as s(statement_id, policy_id)
      where v.policy_id = s.policy_id and v.billed_statement_version_id is not null
        and v.credited_statement_version_id is null
      returning v.id, v.journey_id, v.policy_id, v.company_id, v.environment, v.usage_premium_pence, s.statement_id
    ), paid as (
      select voids.*, j.start_at, j.distance_metres,
        voids.usage_premium_pence - coalesce(cr.pence, 0) as paid_pence, coalesce(cr.uncounted, 0) as uncounted_metres
      from voids
      join journeys j on j.id = voids.journey_id
      left join lateral (
        select sum(r.credit_pence) as pence,
          sum(r.distance_metres) filter (where r.rule <> 'free_distance') as uncounted
        from journey_rule_credits r where r.journey_id = voids.journey_id
      ) cr on true
    ), credited as (
      insert into policy_credits (policy_id, company_id, environment, amount_pence, source, reference, reason, created_at)
      select policy_id, company_id, environment, paid_pence, 'void', id::text, 'voided journey already billed', ${at}
      from paid where paid_pence <> 0
    )
    select statement_id, policy_id, journey_id, start_at, distance_metres, paid_pence, uncounted_metres
    from paid`.execute(trx);
  return result.rows.map((r) => ({
    statementId: r.statement_id,
    policyId: r.policy_id,
    journeyId: r.journey_id,
    startAt: r.start_at,
    distanceMetres: r.distance_metres,
    paidPence: Number(r.paid_pence),
    countedMetres: r.distance_metres - Number(r.uncounted_metres),
  }));
}

/** A policy's credit ledger, newest first: grants (positive) and what statements and refunds used (negative). */
export function listCredits(db: Executor, policyId: string) {
  return db
    .selectFrom('policy_credits')
    .select(['amount_pence', 'source', 'reference', 'reason', 'created_at'])
    .where('policy_id', '=', policyId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

/** Ledger balances of many policies (absent: no entries, a zero balance). */
export async function creditBalances(
  db: Executor,
  policyIds: readonly string[],
): Promise<Map<string, number>> {
  if (policyIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('policy_credits')
    .select(['policy_id', sql<string>`sum(amount_pence)::bigint`.as('balance')])
    .where('policy_id', 'in', [...policyIds])
    .groupBy('policy_id')
    .execute();
  return new Map(rows.map((r) => [r.policy_id, Number(r.balance)]));
}

/** Many statements in one INSERT from one JSON parameter (json-rows.ts). */
export async function insertStatements(trx: Executor, rows: readonly StatementRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into statements (id, policy_id, company_id, environment, period_start_at, period_end_at,
      billing_date, final, journey_count, distance_metres, duration_seconds, usage_premium_pence,
      installments, subscription_premium_pence, total_premium_pence, credits_used_pence,
      billed_premium_pence, carried_forward_pence, brought_forward_pence, cap_credit_pence,
      annual_cap_credit_pence, free_distance_credit_pence, minimum_top_up_pence, capped_days, payment_id,
      created_at)
    select id, policy_id, company_id, environment, to_timestamp(period_start_ms / 1000),
      to_timestamp(period_end_ms / 1000), billing_date, final, journey_count, distance_metres,
      duration_seconds, usage_premium_pence, installments, subscription_premium_pence, total_premium_pence,
      credits_used_pence, billed_premium_pence, carried_forward_pence, brought_forward_pence,
      cap_credit_pence, annual_cap_credit_pence, free_distance_credit_pence, minimum_top_up_pence,
      capped_days, payment_id, to_timestamp(created_ms / 1000)
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
        capped_days jsonb, payment_id uuid, created_ms float8)`.execute(trx);
}

export interface CreditEntry {
  readonly policyId: string;
  readonly companyId: string;
  readonly environment: string;
  readonly amountPence: number;
  readonly source: 'void' | 'goodwill' | 'refund' | 'statement' | 'carried_forward';
  readonly reference: string;
  readonly reason?: string | null;
  readonly at: Date;
}

export async function addCredits(trx: Executor, entries: readonly CreditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await trx
    .insertInto('policy_credits')
    .values(
      entries.map((entry) => ({
        policy_id: entry.policyId,
        company_id: entry.companyId,
        environment: entry.environment,
        amount_pence: entry.amountPence,
        source: entry.source,
        reference: entry.reference,
        reason: entry.reason ?? null,
        created_at: entry.at,
      })),
    )
    .execute();
}

/**
 * Live policies whose billing date is `date`: billing day `day`, or any day past the month's end when
 * `date` is the month's last day (29–31 fall on the last day of shorter months). Across tenants.
 */
function duePolicies(db: Executor, billingDays: readonly number[], billingInstant: Date) {
  return (
    db
      .selectFrom('policies as p')
      .where('p.status', '=', 'active')
      .where('p.billing_day', 'in', [...billingDays])
      // NOTE: where cover first began, not the current term's start: a renewal stored early moves that
      // ahead, and a term that starts on its billing date still owes the previous term's last period.
      .where('p.first_start_at', '<', billingInstant)
  );
}

/** How many policies are due on a billing date (see `duePolicies`). */
export async function countDueForBilling(
  db: Executor,
  billingDays: readonly number[],
  billingInstant: Date,
): Promise<number> {
  const row = await duePolicies(db, billingDays, billingInstant)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface DuePolicy {
  readonly id: string;
  readonly reference: string;
  /** A statement for this billing date exists already. */
  readonly billed: boolean;
}

/**
 * The policies due on `date`, a page of `pageSize` at a time: each billing day's in id order, each
 * page one range of `policies_billing_day_id_idx` after the last (a million-policy day is not held in
 * memory whole, nor read and sorted again for each page). Those with a statement for `date` already are
 * flagged, so a re-run reads and writes nothing else.
 */
export async function* dueForBilling(
  db: Executor,
  due: { billingDays: readonly number[]; billingInstant: Date; date: string; pageSize: number },
): AsyncGenerator<DuePolicy[]> {
  for (const billingDay of due.billingDays) {
    let afterId: string | null = null;
    for (;;) {
      let query = duePolicies(db, [billingDay], due.billingInstant)
        .select(['p.id', 'p.policy_reference'])
        .select((eb) =>
          eb
            .exists(
              eb
                .selectFrom('statements as s')
                .select('s.id')
                .whereRef('s.policy_id', '=', 'p.id')
                .where('s.billing_date', '=', due.date),
            )
            .as('billed'),
        );
      if (afterId !== null) query = query.where('p.id', '>', afterId);
      const rows = await query.orderBy('p.id').limit(due.pageSize).execute();
      if (rows.length > 0)
        yield rows.map((r) => ({
          id: r.id,
          reference: r.policy_reference,
          billed: Boolean(r.billed),
        }));
      if (rows.length < due.pageSize) break;
      afterId = rows.at(-1)?.id ?? null;
    }
  }
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
      p.subscription_installments, p.product_reference, u.email, u.first_names, b.billed_through_at,
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
