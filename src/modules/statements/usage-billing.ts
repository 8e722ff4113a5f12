/**
 * The product rules in a statement's transaction: reads what the pure rules need (sums for every
 * statement, journeys one by one only where a rule may touch them), calls them, writes what they decided
 * (journeys' rule credits, policy years' counted distance). The same for one statement and for a
 * billing run's thousand.
 */
import type { Executor } from '../../schema.ts';
import { asTenant, type DataEnvironment } from '../companies/index.ts';
import { findProducts } from '../products/index.ts';
import {
  dayAfter,
  earlierDaysOf,
  hasRules,
  rulesInForce,
  startsAtMidnight,
  yearOfFrom,
  type RulesInForce,
} from './rules/rules-in-force.ts';
import { londonDate, londonMidnight } from './rules/statement-period.ts';
import {
  applyStatementRules,
  dayAfterVoids,
  needsJourneys,
  withoutJourneys,
  type RuleCredit,
  type StatementRulesResult,
} from './rules/usage-rules.ts';
import {
  insertRuleCredits,
  ruleJourneys,
  setYearCounts,
  termStarts,
  sharedDaySums,
  yearCounts,
  type RuleClaim,
} from './usage-rules-repository.ts';

/** A statement being written, with what the rules need of its policy. */
export interface RuledStatement extends RuleClaim {
  readonly companyId: string;
  readonly environment: string;
  readonly productReference: string | null;
  /** The current term's start: the policy year most journeys fall in. */
  readonly termStartAt: Date;
  readonly distanceMetres: number;
  readonly usagePremiumPence: number;
  /** Late uploads among its journeys: their days are shared with earlier statements. */
  readonly lateJourneyCount: number;
  /** The most distance of one London day of its period's journeys (late uploads aside). */
  readonly busiestDayMetres: number;
  /** Its earliest journey's start (null: no journey). */
  readonly firstStartAt: Date | null;
}

/** A billed journey voided since, credited by the statement being written. */
export interface VoidedJourney {
  readonly statementId: string;
  readonly policyId: string;
  readonly journeyId: string;
  readonly startAt: Date;
  readonly distanceMetres: number;
  /** What the policyholder paid for it: its premium less its rule credits. */
  readonly paidPence: number;
  /** Distance it counted towards its policy year's cap. */
  readonly countedMetres: number;
}

/** The rules of the products some policies name, by policy id: only products with rules. */
export type ProductRulesByPolicy = ReadonlyMap<string, RulesInForce>;

/** The products named by some policies, by policy: only products with rules. */
export async function productRulesOf(
  trx: Executor,
  policies: ReadonlyArray<{
    policyId: string;
    companyId: string;
    environment: string;
    productReference: string | null;
  }>,
): Promise<ProductRulesByPolicy> {
  const byTenant = new Map<string, { companyId: string; environment: string; refs: Set<string> }>();
  for (const p of policies) {
    if (p.productReference === null) continue;
    const key = `${p.companyId}/${p.environment}`;
    const entry = byTenant.get(key) ?? {
      companyId: p.companyId,
      environment: p.environment,
      refs: new Set(),
    };
    entry.refs.add(p.productReference);
    byTenant.set(key, entry);
  }
  const rules = new Map<string, RulesInForce>();
  for (const [key, t] of byTenant) {
    const tenant = asTenant(t.companyId, t.environment as DataEnvironment);
    for (const product of await findProducts(trx, tenant, [...t.refs]))
      if (product.versions.some((v) => hasRules(v.rules)))
        rules.set(`${key}/${product.reference}`, rulesInForce(product));
  }
  const byPolicy = new Map<string, RulesInForce>();
  for (const p of policies) {
    const found = rules.get(`${p.companyId}/${p.environment}/${p.productReference ?? ''}`);
    if (found !== undefined) byPolicy.set(p.policyId, found);
  }
  return byPolicy;
}

/** What a capped day's recompute after voids charges back: taken off the voids' ledger credits. */
export interface VoidDayCharge {
  readonly policyId: string;
  readonly companyId: string;
  readonly environment: string;
  readonly statementId: string;
  readonly date: string;
  readonly pence: number;
}

export interface UsageRulesOutcome {
  /** Each ruled statement's lines, by statement id. */
  readonly results: Map<string, StatementRulesResult>;
  readonly voidDayCharges: VoidDayCharge[];
}

type CreditRow = RuleCredit & { policyId: string; statementId: string };
type CountRow = { policyId: string; yearStart: string; metres: number };
/** Distance counted towards each policy year, by policy: policy id → year start (ISO) → metres. */
type YearCounts = Map<string, Map<string, number>>;

/**
 * Voids first: the distance they counted leaves their year, and a capped day gives the room they freed
 * back to its other journeys, before this statement's journeys are capped against the day. Writes the
 * credits that gives the day's other journeys; returns the charge-backs and the statements with voids.
 */
async function settleVoids(
  trx: Executor,
  products: ProductRulesByPolicy,
  ruled: readonly RuledStatement[],
  voided: readonly VoidedJourney[],
  counts: YearCounts,
  at: Date,
): Promise<{ ledgerCharges: VoidDayCharge[]; withVoids: Set<string> }> {
  const creditRows: CreditRow[] = [];
  const ledgerCharges: VoidDayCharge[] = [];
  const starts = await termStarts(trx, [
    ...new Set(voided.filter((v) => products.has(v.policyId)).map((v) => v.policyId)),
  ]);
  const voidsByStatement = new Map<string, VoidedJourney[]>();
  for (const v of voided)
    if (products.has(v.policyId))
      voidsByStatement.set(v.statementId, [...(voidsByStatement.get(v.statementId) ?? []), v]);
  for (const s of ruled) {
    const voids = voidsByStatement.get(s.statementId);
    if (voids === undefined) continue;
    const rules = products.get(s.policyId);
    const counted = counts.get(s.policyId) ?? new Map<string, number>();
    counts.set(s.policyId, counted);
    const yearOf = yearOfFrom(starts.get(s.policyId) ?? [], s.termStartAt);
    for (const v of voids) {
      const year = yearOf(v.startAt);
      counted.set(year, Math.max((counted.get(year) ?? 0) - v.countedMetres, 0));
    }
    const days = [...new Set(voids.map((v) => londonDate(v.startAt)))];
    const remaining = await ruleJourneys(
      trx,
      days.map((date) => ({
        ...s,
        endAt: s.afterAt ?? s.endAt,
        fromAt: londonMidnight(date),
        toAt: dayAfter(date),
      })),
    );
    for (const date of days) {
      const after = dayAfterVoids({
        date,
        remaining: remaining.filter((j) => !j.claimed && londonDate(j.startAt) === date),
        dailyCapMetres: rules?.on(date).dailyCapMetres ?? null,
        voidedPaidPence: voids
          .filter((v) => londonDate(v.startAt) === date)
          .reduce((t, v) => t + v.paidPence, 0),
      });
      if (after.chargedBackPence === 0 && after.credits.length === 0) continue;
      creditRows.push(
        ...after.credits.map((c) => ({ ...c, policyId: s.policyId, statementId: s.statementId })),
      );
      if (after.chargedBackPence > 0)
        ledgerCharges.push({
          policyId: s.policyId,
          companyId: s.companyId,
          environment: s.environment,
          statementId: s.statementId,
          date,
          pence: after.chargedBackPence,
        });
      const year = yearOf(londonMidnight(date));
      counted.set(year, (counted.get(year) ?? 0) + after.chargedBackMetres);
    }
  }
  await insertRuleCredits(trx, creditRows, at);
  return { ledgerCharges, withVoids: new Set(voidsByStatement.keys()) };
}

/** The statements a rule may touch, ruled journey by journey (their journeys read in one query). */
async function ruleByJourney(
  trx: Executor,
  detailed: ReadonlyArray<{ statement: RuledStatement; rules: RulesInForce; fromAt: Date }>,
  counts: YearCounts,
  out: { results: Map<string, StatementRulesResult>; creditRows: CreditRow[]; countRows: CountRow[] },
): Promise<void> {
  if (detailed.length === 0) return;
  const allStarts = await termStarts(
    trx,
    detailed.map((d) => d.statement.policyId),
  );
  const rows = await ruleJourneys(
    trx,
    detailed.map(({ statement, fromAt }) => ({
      ...statement,
      fromAt: londonMidnight(londonDate(fromAt)),
      toAt: dayAfter(londonDate(statement.endAt)),
    })),
  );
  for (const { statement: s, rules } of detailed) {
    const of = rows.filter((r) => r.statementId === s.statementId);
    const period = rules.period(s.endAt, s.endAt);
    const result = applyStatementRules({
      journeys: of.filter((r) => r.claimed),
      earlierDays: earlierDaysOf(of),
      rulesOn: (date) => rules.on(date),
      yearOf: yearOfFrom(allStarts.get(s.policyId) ?? [], s.termStartAt),
      yearCountedMetres: counts.get(s.policyId) ?? new Map(),
      freeDistanceMetres: period.freeDistanceMetres,
      minimumUsagePremiumPence: period.minimumUsagePremiumPence,
    });
    out.results.set(s.statementId, result);
    out.creditRows.push(
      ...result.credits.map((c) => ({ ...c, policyId: s.policyId, statementId: s.statementId })),
    );
    for (const [yearStart, metres] of result.yearCountedMetres)
      out.countRows.push({ policyId: s.policyId, yearStart, metres });
  }
}

/**
 * Applies the products' rules to statements being written, after their journeys were claimed and the
 * voids they credit were settled. Statements of policies without a product with rules are left out.
 */
export async function applyUsageRules(
  trx: Executor,
  products: ProductRulesByPolicy,
  statements: readonly RuledStatement[],
  voided: readonly VoidedJourney[],
  at: Date,
): Promise<UsageRulesOutcome> {
  const results = new Map<string, StatementRulesResult>();
  const ruled = statements.filter((s) => products.has(s.policyId));
  if (ruled.length === 0) return { results, voidDayCharges: [] };
  const counts = await yearCounts(
    trx,
    ruled.map((s) => s.policyId),
  );
  const { ledgerCharges, withVoids } = await settleVoids(trx, products, ruled, voided, counts, at);

  // The statements: sums for all, journeys one by one for those a rule may touch.
  // Statements sharing London days with earlier ones have those days summed with what was charged on
  // them; the others' busiest day came with their journeys' sums.
  const shared = await sharedDaySums(
    trx,
    ruled.filter((s) => s.distanceMetres > 0 && (s.lateJourneyCount > 0 || !startsAtMidnight(s.afterAt))),
  );
  const out = { results, creditRows: [] as CreditRow[], countRows: [] as CountRow[] };
  const detailed: Array<{ statement: RuledStatement; rules: RulesInForce; fromAt: Date }> = [];
  for (const s of ruled) {
    const rules = products.get(s.policyId);
    if (rules === undefined) continue;
    const firstStartAt = s.firstStartAt ?? s.endAt;
    const fromAt = new Date(Math.min(firstStartAt.getTime(), (s.afterAt ?? firstStartAt).getTime() + 1000));
    const period = rules.period(fromAt, s.endAt);
    const statementSums = {
      distanceMetres: s.distanceMetres,
      usagePremiumPence: s.usagePremiumPence,
      busiestDayMetres: shared.get(s.statementId) ?? s.busiestDayMetres,
      year: firstStartAt.getTime() >= s.termStartAt.getTime() ? s.termStartAt.toISOString() : null,
    };
    const counted = counts.get(s.policyId) ?? new Map<string, number>();
    if (needsJourneys(statementSums, period, counted)) {
      detailed.push({ statement: s, rules, fromAt: firstStartAt });
      continue;
    }
    const result = withoutJourneys(statementSums, period, counted);
    results.set(s.statementId, result);
    for (const [yearStart, metres] of result.yearCountedMetres)
      out.countRows.push({ policyId: s.policyId, yearStart, metres });
  }
  await ruleByJourney(trx, detailed, counts, out);
  // Years a void changed but no journey of this statement touched.
  for (const s of ruled) {
    if (!withVoids.has(s.statementId)) continue;
    const touched = results.get(s.statementId)?.yearCountedMetres;
    for (const [yearStart, metres] of counts.get(s.policyId) ?? [])
      if (touched?.has(yearStart) !== true) out.countRows.push({ policyId: s.policyId, yearStart, metres });
  }
  await insertRuleCredits(trx, out.creditRows, at);
  await setYearCounts(trx, out.countRows);
  return { results, voidDayCharges: ledgerCharges };
}
