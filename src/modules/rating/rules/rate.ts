import { poundsText, toPence } from '../../../platform/money.ts';
import { londonDate } from '../../../platform/london-calendar.ts';
import { ESTIMATED_DISTANCE_MAX, MONEY_MAX, USAGE_RATE_MAX } from '../../policies/rules/index.ts';
import { installmentsDue } from '../../statements/rules/index.ts';
import { installmentPlanApr, installmentsApr } from './apr.ts';
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
 * how each field of `pricing` is derived, with a worked example a test holds to this code. A price a
 * policy could not hold (the policy schema's limits on `pricing`) is never made: every bounded amount
 * is checked exactly, before it becomes a number, and `rate` says which field drives it over.
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
  /** The plan's APR (percent, one decimal), its deposit fee counted; 0.0 for a single payment. */
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
  return yearlyExact(new Exact(fixedPaidPence), new Exact(usagePence), { termDays, yearDays }).toNumber();
}

/** `yearlyEstimatePence` exactly, for amounts of any size. */
function yearlyExact(
  fixedPaidPence: ExactDecimal,
  usagePence: ExactDecimal,
  days: { termDays: number; yearDays: number },
): ExactDecimal {
  const termPence = fixedPaidPence.plus(usagePence);
  if (days.termDays === days.yearDays) return termPence;
  return round(termPence.times(days.yearDays).dividedBy(days.termDays));
}

/**
 * The billing dates of the term a monthly plan's installments can fall on, up to `most`: statements
 * bill an installment on each billing date from the start (`installmentsDue`), so a term shorter than
 * the plan has fewer, and installments beyond them would never be billed.
 */
function installmentsInTerm(input: QuoteInput, most: number): number {
  const start = new Date(input.policy.start_date * 1000);
  return installmentsDue({
    policyStart: start,
    billingDay: input.policy.billing_day_date ?? Number(londonDate(start).slice(8)),
    count: most,
    periodStart: start,
    periodEnd: new Date(input.policy.end_date * 1000),
  }).length;
}

/**
 * The plan asked for (default: the rate book's first), a monthly one with no more installments than the
 * term has billing dates. A term with one billing date has no monthly plan: paid at once, the default
 * falls to a single payment when the rate book offers one.
 */
function planOf(content: RateBookContent, input: QuoteInput): InstallmentPlan | RatingProblem {
  const asked: InstallmentPlanKind | undefined = input.installment_plan;
  const plan =
    asked === undefined
      ? content.installment_plans[0]
      : content.installment_plans.find((p) => p.kind === asked);
  if (plan === undefined) {
    const offered = content.installment_plans.map((p) => p.kind).join(', ');
    return { path: 'installment_plan', message: `must be one this rate book offers: ${offered}` };
  }
  if (plan.kind === 'single') return plan;
  const installments = installmentsInTerm(input, plan.installments);
  if (installments >= 2) return { ...plan, installments };
  const single = content.installment_plans.find((p) => p.kind === 'single');
  if (asked === undefined && single !== undefined) return single;
  return {
    path: 'installment_plan',
    message: 'cannot be monthly: the term has one billing date, so it is paid at once (single)',
  };
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

/** The fixed part's breakdown, from the fixed premium made exactly. */
function fixedBreakdown(
  content: RateBookContent,
  factor: ExactDecimal,
  days: { termDays: number; yearDays: number },
  fixed: ReturnType<typeof fixedExact>,
  roundedPence: number,
): FixedBreakdown {
  return {
    base_pence: content.base_fixed_premium_pence,
    factor: factor.toString(),
    before_limits_pence: fixed.before.toString(),
    min_pence: content.min_fixed_premium_pence,
    max_pence: content.max_fixed_premium_pence,
    limit_applied: fixed.limit,
    after_limits_pence: fixed.held.toString(),
    term_days: days.termDays,
    year_days: days.yearDays,
    ipt_rate: content.ipt_rate,
    exact_pence: fixed.exact.toString(),
    rounded_pence: roundedPence,
  };
}

/** What a plan collects for the fixed premium, exactly (pence). */
interface Paid {
  readonly upfrontPence: ExactDecimal;
  readonly installmentPence: ExactDecimal;
  readonly installments: number;
  /** The fixed premium with the plan's loading. */
  readonly total: ExactDecimal;
}

const ZERO = new Exact(0);

function paidOn(plan: InstallmentPlan, loading: ExactDecimal, fixedExactPence: ExactDecimal): Paid {
  if (plan.kind === 'single')
    return {
      upfrontPence: round(fixedExactPence),
      installmentPence: ZERO,
      installments: 0,
      total: fixedExactPence,
    };
  const total = fixedExactPence.times(loading);
  return {
    upfrontPence: ZERO,
    installmentPence: round(total.dividedBy(plan.installments)),
    installments: plan.installments,
    total,
  };
}

/**
 * The installments of `plan`, with their APR. NOTE: a `deposit_fee` is paid only on the monthly plan, at
 * binding, for arranging it: it is a charge for the credit (the Consumer Credit (Total Charge for Credit)
 * rules; CONC App 1.1: every fee the consumer must pay in connection with the credit), so the APR is then
 * solved on the premium advanced less that fee, the installments repaying the rest.
 */
function installments(
  plan: InstallmentPlan,
  paid: Paid,
  fixedExactPence: ExactDecimal,
  depositFeePence: number,
): InstallmentsBreakdown {
  if (plan.kind === 'single')
    return {
      plan: 'single',
      loading_rate: '0',
      exact_total_pence: paid.total.toString(),
      upfront_pence: paid.upfrontPence.toNumber(),
      installment_pence: 0,
      installments: 0,
      apr_percent: '0.0',
    };
  return {
    plan: 'monthly',
    loading_rate: plan.loading_rate,
    exact_total_pence: paid.total.toString(),
    upfront_pence: 0,
    installment_pence: paid.installmentPence.toNumber(),
    installments: plan.installments,
    apr_percent:
      depositFeePence > 0
        ? installmentsApr(
            fixedExactPence.minus(depositFeePence),
            paid.total.dividedBy(plan.installments),
            plan.installments,
          )
        : installmentPlanApr(plan),
  };
}

/** The rate per unit with IPT, rounded to four places of a pound. */
function usageRateOf(content: RateBookContent, perUnit: ExactDecimal) {
  const book = compileBook(content);
  const exact = book.baseRatePerUnit.times(perUnit).times(book.withIpt);
  return { exact, rounded: round(exact, 4) };
}

/** Every amount of `pricing` that a policy bounds, made exactly: none is a number yet. */
interface ExactPricing {
  readonly days: { termDays: number; yearDays: number };
  readonly fixed: ReturnType<typeof fixedExact>;
  readonly basePence: ExactDecimal;
  readonly paid: Paid;
  readonly unitExact: ExactDecimal;
  /** Pounds per unit with IPT, to four places. */
  readonly usageRate: ExactDecimal;
  readonly termDistance: ExactDecimal;
  readonly usageExact: ExactDecimal;
  readonly usagePence: ExactDecimal;
  readonly yearlyPence: ExactDecimal;
  readonly excessPence: ExactDecimal;
}

function priceExactly(
  content: RateBookContent,
  input: QuoteInput,
  plan: InstallmentPlan,
  products: { readonly fixed: ExactDecimal; readonly perUnit: ExactDecimal },
  annualDistance: number,
): ExactPricing {
  const days = termDays(input);
  const fixed = fixedExact(content, products.fixed, days);
  const paid = paidOn(plan, compileBook(content).monthlyLoading, fixed.exact);
  const { exact: unitExact, rounded: usageRate } = usageRateOf(content, products.perUnit);
  const termDistance = round(ofTerm(new Exact(annualDistance), days));
  const usageExact = usageRate.times(termDistance).times(100);
  const usagePence = round(usageExact);
  const fixedPaidPence = paid.upfrontPence.plus(paid.installmentPence.times(paid.installments));
  // Pounds with at most two places each (the policy schema's rule): their sum in pence is exact.
  const excessPence = new Exact(toPence(input.policy.compulsory_excess ?? 0)).plus(
    toPence(input.policy.voluntary_excess ?? 0),
  );
  return {
    days,
    fixed,
    basePence: round(fixed.exact),
    paid,
    unitExact,
    usageRate,
    termDistance,
    usageExact,
    usagePence,
    // A year's estimate: what the term costs, scaled to a year when the term is not one.
    yearlyPence: yearlyExact(fixedPaidPence, usagePence, days),
    excessPence,
  };
}

const MONEY_MAX_PENCE = new Exact(MONEY_MAX).times(100);
const over = (value: ExactDecimal, max: ExactDecimal | number) => !value.isFinite() || value.greaterThan(max);
/** An amount as a message shows it: to `places`, or to six significant digits when it is vast. */
const figure = (value: ExactDecimal, places: number) =>
  value.lessThan(1e15) ? value.toFixed(places) : value.toSignificantDigits(6).toString();
const money = (pence: ExactDecimal) => `£${figure(pence.dividedBy(100), 2)}`;
const MORE_THAN_MONEY = `more than a policy takes (at most £${String(MONEY_MAX)})`;

/**
 * Why the price is one a policy could not hold (the limits of the policy schema's `pricing`), each
 * problem naming the field that drives it, one problem a field: the rate book for the rate per unit
 * (and fees), the term's length for the fixed premium and the term's distance, the estimated distance
 * for the usage premium and the yearly estimate, the excesses for the total excess. Empty when every
 * amount fits. Messages are made only for an amount over its limit.
 */
function limitProblems(content: RateBookContent, p: ExactPricing): RatingProblem[] {
  const unit = content.usage_unit;
  const problems: RatingProblem[] = [];
  const add = (path: string, message: () => string) => {
    if (!problems.some((problem) => problem.path === path)) problems.push({ path, message: message() });
  };
  const rateOver = over(p.usageRate, USAGE_RATE_MAX);
  if (rateOver)
    add(
      'policy.product_reference',
      () =>
        `has a rate book that prices usage at £${figure(p.usageRate, 4)} a ${unit} with IPT, more than a policy takes (usage_rate at most ${String(USAGE_RATE_MAX)})`,
    );
  const fees = Object.entries(content.fees) as [keyof RateBookContent['fees'], number][];
  for (const [field, pence] of fees)
    if (over(new Exact(pence), MONEY_MAX_PENCE))
      add(
        'policy.product_reference',
        () => `has a rate book whose ${field} is ${money(new Exact(pence))}, ${MORE_THAN_MONEY}`,
      );
  const term = `makes a term of ${String(p.days.termDays)} days`;
  if (over(p.termDistance, ESTIMATED_DISTANCE_MAX))
    add(
      'policy.end_date',
      () =>
        `${term} whose estimated distance is ${figure(p.termDistance, 0)} ${unit}s, more than a policy takes (estimated_distance at most ${String(ESTIMATED_DISTANCE_MAX)})`,
    );
  // The version's limits hold the fixed premium for a year: only a long term takes it further.
  const fixedAmounts = [
    ['base_premium', p.basePence],
    ['upfront_premium', p.paid.upfrontPence],
    ['subscription_premium', p.paid.installmentPence],
  ] as const;
  for (const [field, pence] of fixedAmounts)
    if (over(pence, MONEY_MAX_PENCE))
      add('policy.end_date', () => `${term} whose ${field} is ${money(pence)}, ${MORE_THAN_MONEY}`);
  // Over a rate the policy takes, the usage amounts are the rate book's doing, named above.
  if (!rateOver)
    for (const [field, pence] of [
      ['usage_premium', p.usagePence],
      ['yearly_premium_estimate', p.yearlyPence],
    ] as const)
      if (over(pence, MONEY_MAX_PENCE))
        add(
          'vehicle.estimated_yearly_mileage',
          () => `makes the ${field} ${money(pence)}, ${MORE_THAN_MONEY}`,
        );
  if (over(p.excessPence, MONEY_MAX_PENCE))
    add(
      'policy.voluntary_excess',
      () => `and compulsory_excess make a total_excess of ${money(p.excessPence)}, ${MORE_THAN_MONEY}`,
    );
  return problems;
}

/**
 * The two amounts re-rating a book compares, as `rate` makes them: `base_premium` in pence and
 * `usage_rate` in pounds; null exactly when `rate` is not ok (then `rate` says why: a price beyond
 * what a policy takes included). `values` are `deriveValues(input, onDate)`, derived once for
 * underwriting and rating alike. Throws where `rate` throws (an excess with more than two decimal
 * places).
 */
export function ratePremiums(
  content: RateBookContent,
  input: QuoteInput,
  values: DerivedValues,
): { readonly basePence: number; readonly usageRate: number } | null {
  const plan = planOf(content, input);
  if ('path' in plan || values.estimatedAnnualDistance === null) return null;
  const products = factorProducts(content, values);
  if (products === null) return null;
  const exact = priceExactly(content, input, plan, products, values.estimatedAnnualDistance);
  if (limitProblems(content, exact).length > 0) return null;
  return { basePence: exact.basePence.toNumber(), usageRate: exact.usageRate.toNumber() };
}

/**
 * Prices `input` on `content` at `onDate` (`YYYY-MM-DD`, the date ages and windows are counted to):
 * every field of `pricing` (pounds) and the breakdown; or every value the quote lacks that a factor
 * needs; or, when the price is one a policy could not hold, each field that drives an amount beyond
 * the policy's limits. Pure; integer pence and exact decimals inside, numbers only once they fit.
 */
export function rate(
  content: RateBookContent,
  input: QuoteInput,
  onDate: string,
  values: DerivedValues = deriveValues(input, onDate),
): RateResult {
  const plan = planOf(content, input);
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

  const exact = priceExactly(content, input, plan, applied.value, values.estimatedAnnualDistance);
  const beyond = limitProblems(content, exact);
  if (beyond.length > 0) return { ok: false, problems: beyond };
  // Every amount now fits the policy's limits: each becomes a number exactly.
  const { days, usageRate } = exact;
  const basePence = exact.basePence.toNumber();
  const fixed = fixedBreakdown(content, applied.value.fixed, days, exact.fixed, basePence);
  const paid = installments(plan, exact.paid, exact.fixed.exact, content.fees.deposit_fee_pence);
  const usagePence = exact.usagePence.toNumber();
  const pricing: RatedPricing = {
    upfront_rate: paid.plan === 'single' ? 1 : 0,
    subscription_rate: Number(paid.loading_rate),
    usage_rate: usageRate.toNumber(),
    usage_unit: content.usage_unit,
    subscription_installments: paid.installments,
    upfront_premium: pounds(paid.upfront_pence),
    subscription_premium: pounds(paid.installment_pence),
    usage_premium: pounds(usagePence),
    base_premium: pounds(basePence),
    yearly_premium_estimate: pounds(exact.yearlyPence.toNumber()),
    total_excess: pounds(exact.excessPence.toNumber()),
    estimated_distance: exact.termDistance.toNumber(),
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
    fixed,
    per_unit: {
      base_rate: content.base_rate_per_unit,
      factor: applied.value.perUnit.toString(),
      exact: exact.unitExact.toString(),
      rounded: usageRate.toFixed(4),
    },
    installments: paid,
    usage_estimate: {
      annual_distance: values.estimatedAnnualDistance,
      term_distance: exact.termDistance.toNumber(),
      rate: usageRate.toFixed(4),
      exact_pence: exact.usageExact.toString(),
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
