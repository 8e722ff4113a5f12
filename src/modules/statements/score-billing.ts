/**
 * Price by driving score in a statement's transaction: for the policies whose product has a `score_pricing`
 * rule, reads each London month's usage billed so far (less the caps' and free distance's credits), what
 * earlier statements adjusted it by, and its score (through the scores module), then brings every month up
 * to date with the pure rule (rules/score-adjustment.ts). Policies of other products cost nothing here.
 */
import { sql } from 'kysely';
import { jsonRows } from '../../platform/db/json-rows.ts';
import { londonMidnight } from '../../platform/london-calendar.ts';
import type { Executor } from '../../schema.ts';
import { asTenant, type DataEnvironment } from '../companies/index.ts';
import { findProducts, productVersionAt, type ProductRecord } from '../products/index.ts';
import { pricingMonths, type PricingMonth } from '../scores/index.ts';
import {
  applyDues,
  monthAdjustment,
  type MonthDue,
  type ScorePricingRule,
} from './rules/score-adjustment.ts';

/** What a statement adjusted one month by, as stored in `statements.score_months` and shown. */
export interface ScoreMonthLine {
  /** `YYYY-MM`, London. */
  readonly month: string;
  /** The month's score that priced it (null: none, or under 50 miles scored: not adjusted). */
  readonly score: number | null;
  /** The band's percentage, capped, in hundredths of a percent. */
  readonly basisPoints: number;
  /** The month's usage premium billed so far (this statement's included), less the rules' credits. */
  readonly usagePence: number;
  /** What earlier statements adjusted the month by. */
  readonly adjustedBeforePence: number;
  /** What this statement adjusts it by (negative: a credit). */
  readonly adjustmentPence: number;
}

/** A statement being written, as score pricing needs it. */
export interface ScoredStatement {
  readonly statementId: string;
  readonly policyId: string;
  readonly companyId: string;
  readonly environment: string;
  readonly productReference: string | null;
  readonly endAt: Date;
  /** The last statement of an ended policy: no month of it is still under way. */
  readonly final: boolean;
  /** What it bills before the score adjustment and the ledger (≥ 0 in practice). */
  readonly beforePence: number;
}

export interface ScoreAdjustment {
  readonly pence: number;
  readonly months: ScoreMonthLine[];
}

const NO_RULE: ScorePricingRule = { bands: [], cap_percent: 0 };

/** The month after `YYYY-MM`. */
function nextMonth(month: string): string {
  const [y = 0, m = 1] = month.split('-').map(Number);
  return m === 12 ? `${String(y + 1)}-01` : `${String(y)}-${String(m + 1).padStart(2, '0')}`;
}

/** Of some policies, the products whose versions price by score, by policy id. */
async function scorePricedProducts(
  trx: Executor,
  statements: readonly ScoredStatement[],
): Promise<Map<string, ProductRecord>> {
  const refsByTenant = new Map<string, Set<string>>();
  for (const s of statements) {
    if (s.productReference === null) continue;
    const key = `${s.companyId}/${s.environment}`;
    refsByTenant.set(key, (refsByTenant.get(key) ?? new Set()).add(s.productReference));
  }
  const products = new Map<string, ProductRecord>();
  for (const [key, refs] of refsByTenant) {
    const [companyId = '', environment = ''] = key.split('/');
    const tenant = asTenant(companyId, environment as DataEnvironment);
    for (const product of await findProducts(trx, tenant, [...refs]))
      if (product.versions.some((v) => v.rules.score_pricing !== undefined))
        products.set(`${key}/${product.reference}`, product);
  }
  const byPolicy = new Map<string, ProductRecord>();
  for (const s of statements) {
    const product = products.get(`${s.companyId}/${s.environment}/${s.productReference ?? ''}`);
    if (product !== undefined) byPolicy.set(s.policyId, product);
  }
  return byPolicy;
}

type MonthSums = Map<string, Map<string, number>>;

/**
 * Per policy and London month: the usage premium of its journeys billed up to each statement's end (not
 * void), less the product rules' credits of them; and what earlier statements adjusted each month by.
 */
async function monthSums(
  trx: Executor,
  statements: readonly ScoredStatement[],
): Promise<{ usage: MonthSums; adjusted: MonthSums }> {
  const rows = jsonRows(statements.map((s) => ({ policy_id: s.policyId, end_ms: s.endAt.getTime() })));
  // NOTE: every journey of the policy up to the statement's end is billed by now: the period's by this
  // statement, late uploads claimed by it or earlier ones (billJourneys ran first, under the policy's lock).
  const usage = await sql<{ policy_id: string; month: string; pence: string }>`
    select j.policy_id, to_char(j.start_at at time zone 'Europe/London', 'YYYY-MM') as month,
      sum(j.usage_premium_pence - coalesce(cr.pence, 0))::bigint as pence
    from json_to_recordset(${rows}::json) as c(policy_id uuid, end_ms float8)
    join journeys j on j.policy_id = c.policy_id and j.start_at <= to_timestamp(c.end_ms / 1000)
    left join lateral (
      select sum(r.credit_pence) as pence from journey_rule_credits r where r.journey_id = j.id
    ) cr on true
    where not j.is_void
    group by 1, 2`.execute(trx);
  const adjusted = await sql<{ policy_id: string; month: string; pence: string }>`
    select s.policy_id, m->>'month' as month, sum((m->>'adjustmentPence')::bigint)::bigint as pence
    from statements s cross join lateral jsonb_array_elements(s.score_months) m
    where s.policy_id in (select policy_id from json_to_recordset(${rows}::json) as c(policy_id uuid, end_ms float8))
    group by 1, 2`.execute(trx);
  const collect = (list: ReadonlyArray<{ policy_id: string; month: string; pence: string }>): MonthSums => {
    const sums: MonthSums = new Map();
    for (const r of list) {
      const months = sums.get(r.policy_id) ?? new Map<string, number>();
      months.set(r.month, Number(r.pence));
      sums.set(r.policy_id, months);
    }
    return sums;
  };
  return { usage: collect(usage.rows), adjusted: collect(adjusted.rows) };
}

/** One statement's months brought up to date. */
function adjustStatement(
  s: ScoredStatement,
  product: ProductRecord,
  usage: ReadonlyMap<string, number>,
  adjusted: ReadonlyMap<string, number>,
  scores: ReadonlyMap<string, PricingMonth>,
  now: Date,
): ScoreAdjustment {
  const dues: MonthDue[] = [];
  const lines = new Map<string, Omit<ScoreMonthLine, 'adjustmentPence'>>();
  for (const month of new Set([...usage.keys(), ...adjusted.keys()])) {
    const monthStart = londonMidnight(`${month}-01`);
    // NOTE: a month is priced by the product version in force at its start, so a change of the rule
    // prices the months after it, never one already under way.
    const rule = productVersionAt(product.versions, monthStart)?.rules.score_pricing ?? NO_RULE;
    const found = scores.get(month);
    // NOTE: the final statement of an ended policy treats its last month as over: no trip can come after
    // the cover ended, and no later statement would adjust it.
    const over =
      s.final || (found?.over ?? now.getTime() >= londonMidnight(`${nextMonth(month)}-01`).getTime());
    // Over with under 50 miles scored, the score never stands: the month is not priced by it.
    const score = over && found?.enoughScored === true ? found.score : null;
    const adjustedBeforePence = adjusted.get(month) ?? 0;
    const billedUsagePence = usage.get(month) ?? 0;
    const due = monthAdjustment(
      {
        billedUsagePence,
        score,
        disputed: found?.disputed ?? false,
        provisional: !over,
        adjustedPence: adjustedBeforePence,
      },
      rule,
    );
    if (due.deferred || due.duePence === 0) continue;
    dues.push({ month, duePence: due.duePence });
    lines.set(month, {
      month,
      score,
      basisPoints: due.basisPoints,
      usagePence: billedUsagePence,
      adjustedBeforePence,
    });
  }
  const months = applyDues(dues, s.beforePence).flatMap((a) => {
    const line = lines.get(a.month);
    return line === undefined ? [] : [{ ...line, adjustmentPence: a.appliedPence }];
  });
  return { pence: months.reduce((sum, m) => sum + m.adjustmentPence, 0), months };
}

/**
 * The score adjustment of each statement whose policy's product prices by score (by statement id; the
 * others are absent): every month with usage or an earlier adjustment brought up to date, except a month
 * not over yet or with a pending dispute, which waits for a later statement.
 */
export async function scoreAdjustments(
  trx: Executor,
  statements: readonly ScoredStatement[],
  now: Date,
): Promise<Map<string, ScoreAdjustment>> {
  const result = new Map<string, ScoreAdjustment>();
  const products = await scorePricedProducts(trx, statements);
  const priced = statements.filter((s) => products.has(s.policyId));
  if (priced.length === 0) return result;
  const { usage, adjusted } = await monthSums(trx, priced);
  let earliest: string | undefined;
  for (const months of [...usage.values(), ...adjusted.values()])
    for (const month of months.keys()) if (earliest === undefined || month < earliest) earliest = month;
  const scores =
    earliest === undefined
      ? new Map<string, Map<string, PricingMonth>>()
      : await pricingMonths(
          trx,
          priced.map((s) => s.policyId),
          earliest,
          now,
        );
  for (const s of priced) {
    const product = products.get(s.policyId);
    if (product === undefined) continue;
    result.set(
      s.statementId,
      adjustStatement(
        s,
        product,
        usage.get(s.policyId) ?? new Map(),
        adjusted.get(s.policyId) ?? new Map(),
        scores.get(s.policyId) ?? new Map(),
        now,
      ),
    );
  }
  return result;
}
