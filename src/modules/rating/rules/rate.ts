import { poundsText, toPence } from '../../../platform/money.ts';
import { londonDate } from '../../../platform/london-calendar.ts';
import { installmentPlanApr } from './apr.ts';
import { deriveValues, type DerivedValues } from './derived-values.ts';
import {
  applyFactors,
  compileBook,
  Exact,
  factorProducts,
  type ExactDecimal,
  type FactorLine,
  type RatingProblem,
} from './factor-lookup.ts';
import type { InstallmentPlan, InstallmentPlanKind, QuoteInput, RateBookContent } from './rate-book.ts';

/*
 * The price of a quote (issue 36, item 2): a pure function of (rate book version, quote, date). The
 * factors multiply in exact decimal arithmetic; each amount is rounded once, half to even, to the penny
 * (the rate per unit to four decimal places of a pound); the year's fixed premium is held within the
 * version's minimum and maximum; IPT is added as the bordereau reads it back (the `pricing` amounts
 * include IPT: IPT = gross × rate ÷ (100 + rate)). docs/api.md ("Rating: how a price is made") says
 * how each field of `pricing` is derived, with a worked example a test holds to this code.
 */

/** Integer pence → pounds, by integer arithmetic (the exact decimal the pence denote). */
const pounds = (pence: number) => Number(poundsText(pence));

const HALF_EVEN = Exact.ROUND_HALF_EVEN;
const round = (value: ExactDecimal, places = 0) => value.toDecimalPlaces(places, HALF_EVEN);

/** The interface's `pricing` block as rating fills it: pounds, rates as numbers (`ipt_rate` 12 = 12 %). */
export interface RatedPricing {
  readonly upfront_rate: number;
  readonly subscription_rate: number;
  readonly usage_rate: number;
  readonly usage_unit: RateBookContent['usage_unit'];
  readonly subscription_installments: number;
  readonly upfront_premium: number;
  readonly subscription_premium: number;
  readonly usage_premium: number;
  readonly base_premium: number;
  readonly yearly_premium_estimate: number;
  readonly total_excess: number;
  readonly estimated_distance: number;
  readonly withhold_fee: number;
  readonly deposit_fee: number;
  readonly admin_fee: number;
  readonly mta_fee: number;
  readonly cancel_fee: number;
  readonly ipt_rate: number;
  readonly commission_rate: number;
}

/** How the fixed premium was made: exact decimals as text, then the one rounding. */
export interface FixedBreakdown {
  readonly base_pence: number;
  readonly factor: string;
  readonly before_limits_pence: string;
  readonly min_pence: number;
  readonly max_pence: number;
  readonly limit_applied: 'minimum' | 'maximum' | null;
  readonly after_limits_pence: string;
  /** The term's days over the days of the year from its start (1 for a year's term). */
  readonly term_days: number;
  readonly year_days: number;
  readonly ipt_rate: string;
  /** after_limits × term_days ÷ year_days × (1 + ipt ÷ 100), exactly. */
  readonly exact_pence: string;
  readonly rounded_pence: number;
}

export interface PerUnitBreakdown {
  readonly base_rate: string;
  readonly factor: string;
  /** base_rate × factor × (1 + ipt ÷ 100), pounds, exactly. */
  readonly exact: string;
  /** To four decimal places of a pound, half to even. */
  readonly rounded: string;
}

export interface InstallmentsBreakdown {
  readonly plan: InstallmentPlanKind;
  readonly loading_rate: string;
  /** The fixed premium with the plan's loading, exactly (pence). */
  readonly exact_total_pence: string;
  readonly upfront_pence: number;
  readonly installment_pence: number;
  readonly installments: number;
  /** The plan's APR (percent, one decimal); 0.0 for a single payment. */
  readonly apr_percent: string;
}

export interface UsageEstimateBreakdown {
  readonly annual_distance: number;
  readonly term_distance: number;
  readonly rate: string;
  readonly exact_pence: string;
  readonly rounded_pence: number;
}

export interface RatingBreakdown {
  /** The date the quote was rated on (ages, windows of years): `YYYY-MM-DD`. */
  readonly rated_on: string;
  readonly usage_unit: RateBookContent['usage_unit'];
  readonly factors: readonly FactorLine[];
  readonly fixed: FixedBreakdown;
  readonly per_unit: PerUnitBreakdown;
  readonly installments: InstallmentsBreakdown;
  readonly usage_estimate: UsageEstimateBreakdown;
  readonly rounding: string;
}

/** A rated quote: its pricing, the same amounts in pence, and how they were made. */
export interface RatedQuote {
  readonly pricing: RatedPricing;
  readonly breakdown: RatingBreakdown;
}

export type RateResult =
  | { readonly ok: true; readonly value: RatedQuote }
  | { readonly ok: false; readonly problems: readonly RatingProblem[] };

const DAY_SECONDS = 86_400;
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** Days from `start` (`YYYY-MM-DD`) to its anniversary: 366 when a 29 February falls between. */
function yearDaysFrom(start: string): number {
  const year = Number(start.slice(0, 4));
  const monthDay = start.slice(5);
  // A term from 29 February runs to its anniversary on 28 February, as renewals do: 365 days.
  if (monthDay === '02-29') return 365;
  return (monthDay < '02-29' ? isLeap(year) : isLeap(year + 1)) ? 366 : 365;
}

/** The term's whole days and the days of the year from its start (365, or 366 across a 29 February). */
export function termDays(input: QuoteInput): { termDays: number; yearDays: number } {
  const start = londonDate(new Date(input.policy.start_date * 1000));
  // NOTE: rounded to whole days, so a term ending at 23:59:59 or on a clock change is still its days.
  const days = Math.round((input.policy.end_date - input.policy.start_date) / DAY_SECONDS);
  return { termDays: Math.max(days, 1), yearDays: yearDaysFrom(start) };
}

/** `annual` × the term's days ÷ the year's days (the division last; none for a year's term). */
function ofTerm(annual: ExactDecimal, days: { termDays: number; yearDays: number }): ExactDecimal {
  return days.termDays === days.yearDays ? annual : annual.times(days.termDays).dividedBy(days.yearDays);
}

/**
 * `yearly_premium_estimate` in pence: what the term's fixed payments and estimated usage come to,
 * scaled to a year (days of the year over days of the term) when the term is not one, rounded once.
 */
export function yearlyEstimatePence(
  fixedPaidPence: number,
  usagePence: number,
  termDays: number,
  yearDays: number,
) {
  const termPence = fixedPaidPence + usagePence;
  if (termDays === yearDays) return termPence;
  return round(new Exact(termPence).times(yearDays).dividedBy(termDays)).toNumber();
}

function planOf(
  content: RateBookContent,
  asked: InstallmentPlanKind | undefined,
): InstallmentPlan | RatingProblem {
  const plan =
    asked === undefined
      ? content.installment_plans[0]
      : content.installment_plans.find((p) => p.kind === asked);
  if (plan !== undefined) return plan;
  const offered = content.installment_plans.map((p) => p.kind).join(', ');
  return { path: 'installment_plan', message: `must be one this rate book offers: ${offered}` };
}

const RULE =
  'Each amount is rounded once, half to even: money to the penny, the rate per unit to four decimal places of a pound.';

/** The fixed premium exactly (pence): factors, limits, the term's share of a year, IPT. */
function fixedExact(
  content: RateBookContent,
  factor: ExactDecimal,
  days: { termDays: number; yearDays: number },
) {
  const before = factor.times(content.base_fixed_premium_pence);
  const min = content.min_fixed_premium_pence;
  const max = content.max_fixed_premium_pence;
  const limit = before.lessThan(min)
    ? ('minimum' as const)
    : before.greaterThan(max)
      ? ('maximum' as const)
      : null;
  const held = limit === 'minimum' ? new Exact(min) : limit === 'maximum' ? new Exact(max) : before;
  // Divided last, so the only inexact step is one division whose tie, if any, is exact.
  const exact = ofTerm(held.times(compileBook(content).withIpt), days);
  return { before, limit, held, exact };
}

/** The fixed part with its breakdown; exact until the one rounding. */
function fixedPart(
  content: RateBookContent,
  factor: ExactDecimal,
  days: { termDays: number; yearDays: number },
) {
  const { before, limit, held, exact } = fixedExact(content, factor, days);
  const min = content.min_fixed_premium_pence;
  const max = content.max_fixed_premium_pence;
  const breakdown: FixedBreakdown = {
    base_pence: content.base_fixed_premium_pence,
    factor: factor.toString(),
    before_limits_pence: before.toString(),
    min_pence: min,
    max_pence: max,
    limit_applied: limit,
    after_limits_pence: held.toString(),
    term_days: days.termDays,
    year_days: days.yearDays,
    ipt_rate: content.ipt_rate,
    exact_pence: exact.toString(),
    rounded_pence: round(exact).toNumber(),
  };
  return { exact, breakdown };
}

function installments(
  plan: InstallmentPlan,
  loading: ExactDecimal,
  fixedExact: ExactDecimal,
  basePence: number,
): InstallmentsBreakdown {
  if (plan.kind === 'single')
    return {
      plan: 'single',
      loading_rate: '0',
      exact_total_pence: fixedExact.toString(),
      upfront_pence: basePence,
      installment_pence: 0,
      installments: 0,
      apr_percent: '0.0',
    };
  const total = fixedExact.times(loading);
  return {
    plan: 'monthly',
    loading_rate: plan.loading_rate,
    exact_total_pence: total.toString(),
    upfront_pence: 0,
    installment_pence: round(total.dividedBy(plan.installments)).toNumber(),
    installments: plan.installments,
    apr_percent: installmentPlanApr(plan),
  };
}

/** The rate per unit with IPT, rounded to four places of a pound. */
function usageRateOf(content: RateBookContent, perUnit: ExactDecimal) {
  const book = compileBook(content);
  const exact = book.baseRatePerUnit.times(perUnit).times(book.withIpt);
  return { exact, rounded: round(exact, 4) };
}

/**
 * The two amounts re-rating a book compares, as `rate` makes them: `base_premium` in pence and
 * `usage_rate` in pounds; null exactly when `rate` is not ok (then `rate` says why). `values` are
 * `deriveValues(input, onDate)`, derived once for underwriting and rating alike. Throws where `rate`
 * throws (an excess with more than two decimal places).
 */
export function ratePremiums(
  content: RateBookContent,
  input: QuoteInput,
  values: DerivedValues,
): { readonly basePence: number; readonly usageRate: number } | null {
  if ('path' in planOf(content, input.installment_plan) || values.estimatedAnnualDistance === null)
    return null;
  const products = factorProducts(content, values);
  if (products === null) return null;
  toPence(input.policy.compulsory_excess ?? 0);
  toPence(input.policy.voluntary_excess ?? 0);
  const { exact } = fixedExact(content, products.fixed, termDays(input));
  return {
    basePence: round(exact).toNumber(),
    usageRate: usageRateOf(content, products.perUnit).rounded.toNumber(),
  };
}

/**
 * Prices `input` on `content` at `onDate` (`YYYY-MM-DD`, the date ages and windows are counted to):
 * every field of `pricing` (pounds) and the breakdown; or every value the quote lacks that a factor
 * needs. Pure; integer pence and exact decimals inside.
 */
export function rate(
  content: RateBookContent,
  input: QuoteInput,
  onDate: string,
  values: DerivedValues = deriveValues(input, onDate),
): RateResult {
  const plan = planOf(content, input.installment_plan);
  const applied = applyFactors(content, values);
  const problems: RatingProblem[] = [];
  if ('path' in plan) problems.push(plan);
  if (!applied.ok) problems.push(...applied.problems);
  if (values.estimatedAnnualDistance === null)
    problems.push({
      path: 'vehicle.estimated_yearly_mileage',
      message: 'is needed to estimate the usage premium',
    });
  if (problems.length > 0 || 'path' in plan || !applied.ok || values.estimatedAnnualDistance === null)
    return { ok: false, problems };

  const days = termDays(input);
  const fixed = fixedPart(content, applied.value.fixed, days);
  const book = compileBook(content);
  const { exact: unitExact, rounded: usageRate } = usageRateOf(content, applied.value.perUnit);
  const paid = installments(plan, book.monthlyLoading, fixed.exact, fixed.breakdown.rounded_pence);
  const annualDistance = values.estimatedAnnualDistance;
  const termDistance = round(ofTerm(new Exact(annualDistance), days));
  const usageExact = usageRate.times(termDistance).times(100);
  const usagePence = round(usageExact).toNumber();
  const fixedPaidPence = paid.upfront_pence + paid.installment_pence * paid.installments;
  // A year's estimate: what the term costs, scaled to a year when the term is not one.
  const yearlyPence = yearlyEstimatePence(fixedPaidPence, usagePence, days.termDays, days.yearDays);
  // Pounds with at most two places each (the policy schema's rule): their sum in pence is exact.
  const excessPence =
    toPence(input.policy.compulsory_excess ?? 0) + toPence(input.policy.voluntary_excess ?? 0);
  const pricing: RatedPricing = {
    upfront_rate: paid.plan === 'single' ? 1 : 0,
    subscription_rate: Number(paid.loading_rate),
    usage_rate: usageRate.toNumber(),
    usage_unit: content.usage_unit,
    subscription_installments: paid.installments,
    upfront_premium: pounds(paid.upfront_pence),
    subscription_premium: pounds(paid.installment_pence),
    usage_premium: pounds(usagePence),
    base_premium: pounds(fixed.breakdown.rounded_pence),
    yearly_premium_estimate: pounds(yearlyPence),
    total_excess: pounds(excessPence),
    estimated_distance: termDistance.toNumber(),
    withhold_fee: 0,
    deposit_fee: pounds(content.fees.deposit_fee_pence),
    admin_fee: pounds(content.fees.admin_fee_pence),
    mta_fee: pounds(content.fees.adjustment_fee_pence),
    cancel_fee: pounds(content.fees.cancellation_fee_pence),
    ipt_rate: Number(content.ipt_rate),
    commission_rate: Number(content.commission_rate),
  };
  const breakdown: RatingBreakdown = {
    rated_on: onDate,
    usage_unit: content.usage_unit,
    factors: applied.value.lines,
    fixed: fixed.breakdown,
    per_unit: {
      base_rate: content.base_rate_per_unit,
      factor: applied.value.perUnit.toString(),
      exact: unitExact.toString(),
      rounded: usageRate.toFixed(4),
    },
    installments: paid,
    usage_estimate: {
      annual_distance: annualDistance,
      term_distance: termDistance.toNumber(),
      rate: usageRate.toFixed(4),
      exact_pence: usageExact.toString(),
      rounded_pence: usagePence,
    },
    rounding: RULE,
  };
  return { ok: true, value: { pricing, breakdown } };
}

/** The breakdown a customer sees: the same, with only the factors the version marks customer-visible. */
export function customerBreakdown(breakdown: RatingBreakdown): RatingBreakdown {
  return { ...breakdown, factors: breakdown.factors.filter((line) => line.customer_visible) };
}
