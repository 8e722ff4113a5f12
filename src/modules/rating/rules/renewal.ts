import { poundsText, toPence } from '../../../platform/money.ts';
import { Exact } from './factor-lookup.ts';
import type { RatingProblem } from './factor-lookup.ts';
import type { QuoteInput, RateBookContent } from './rate-book.ts';
import { rate, yearlyEstimatePence, type RatedPricing, type RatedQuote } from './rate.ts';

/*
 * Renewal pricing that is fair by rule (issue 36, item 5): the FCA's pricing practices rules, ICOBS
 * 6B.2 (PS21/5), forbid offering a renewing consumer a price above the equivalent new-business price
 * (ENBP): what the same risk would be quoted as new business through the same channel. A renewal is
 * rated on the version in force at the renewal's start, and so is the same risk as new business
 * (`policy.policy_year` 1: a tenure factor cannot load a renewal); the offer takes, part by part, the
 * lower of the two. Capping each part (the fixed premium and the rate per unit) keeps the offer at or
 * below the ENBP whatever distance the customer then drives. Pure.
 */

/** The previous term's prices, as its `pricing` block holds them (pounds). */
export type LastYearPricing = Partial<RatedPricing>;

export interface RenewalPrice {
  /** The renewal rated as it is (its policy year, its history). */
  readonly renewal: RatedQuote;
  /** The equivalent new-business price: the same risk rated as new business on the same version. */
  readonly new_business: RatedQuote;
  /** What may be offered: never above `new_business`, part by part. */
  readonly offered: RatedPricing;
  readonly last_year: LastYearPricing | null;
  /** Whether the new-business price held the offer down. */
  readonly cap_applied: boolean;
  /** Which parts it held down. */
  readonly capped: readonly ('fixed' | 'per_unit')[];
}

export type RenewalResult =
  | { readonly ok: true; readonly value: RenewalPrice }
  | { readonly ok: false; readonly problems: readonly RatingProblem[] };

/** The same risk as a new customer would bring it: policy year 1. */
export function asNewBusiness(input: QuoteInput): QuoteInput {
  return { ...input, policy: { ...input.policy, policy_year: 1 } };
}

/**
 * The renewal price of `input` (the next term, with its policy year) on `content`, the version in
 * force at the renewal's start, rated at `onDate`: the renewal, the ENBP, and the offer, never above
 * the ENBP; `lastYear` (the current term's pricing) is returned with them for staff to compare.
 */
export function renewalPrice(
  content: RateBookContent,
  input: QuoteInput,
  onDate: string,
  lastYear: LastYearPricing | null,
): RenewalResult {
  const renewal = rate(content, input, onDate);
  const newBusiness = rate(content, asNewBusiness(input), onDate);
  if (!renewal.ok) return renewal;
  if (!newBusiness.ok) return newBusiness;
  const ours = renewal.value;
  const theirs = newBusiness.value;
  const fixedCapped = new Exact(ours.breakdown.fixed.exact_pence).greaterThan(
    theirs.breakdown.fixed.exact_pence,
  );
  const unitCapped = new Exact(ours.breakdown.per_unit.exact).greaterThan(theirs.breakdown.per_unit.exact);
  const fixedFrom = fixedCapped ? theirs : ours;
  const unitFrom = unitCapped ? theirs : ours;
  const paid = fixedFrom.breakdown.installments;
  const fixedPaidPence = paid.upfront_pence + paid.installment_pence * paid.installments;
  const { term_days: termDays, year_days: yearDays } = ours.breakdown.fixed;
  const offered: RatedPricing = {
    ...ours.pricing,
    upfront_rate: fixedFrom.pricing.upfront_rate,
    subscription_rate: fixedFrom.pricing.subscription_rate,
    subscription_installments: fixedFrom.pricing.subscription_installments,
    upfront_premium: fixedFrom.pricing.upfront_premium,
    subscription_premium: fixedFrom.pricing.subscription_premium,
    base_premium: fixedFrom.pricing.base_premium,
    usage_rate: unitFrom.pricing.usage_rate,
    usage_premium: unitFrom.pricing.usage_premium,
    yearly_premium_estimate: Number(
      poundsText(
        yearlyEstimatePence(
          fixedPaidPence,
          unitFrom.breakdown.usage_estimate.rounded_pence,
          termDays,
          yearDays,
        ),
      ),
    ),
  };
  const capped = [...(fixedCapped ? ['fixed' as const] : []), ...(unitCapped ? ['per_unit' as const] : [])];
  return {
    ok: true,
    value: {
      renewal: ours,
      new_business: theirs,
      offered,
      last_year: lastYear,
      cap_applied: capped.length > 0,
      capped,
    },
  };
}

/** A part of the price the notice held the renewal to. */
export type NoticePart = 'fixed' | 'per_unit';

type FixedPayments = Pick<
  RatedPricing,
  'upfront_premium' | 'subscription_premium' | 'subscription_installments'
>;

/** The term's fixed payments, when the pricing states them all. */
const fixedPaymentsOf = (pricing: LastYearPricing): FixedPayments | null =>
  pricing.upfront_premium === undefined ||
  pricing.subscription_premium === undefined ||
  pricing.subscription_installments === undefined
    ? null
    : {
        upfront_premium: pricing.upfront_premium,
        subscription_premium: pricing.subscription_premium,
        subscription_installments: pricing.subscription_installments,
      };

/** What the term's fixed premium comes to: the upfront payment and every installment (pence). */
const fixedPaidPence = (p: FixedPayments): number =>
  toPence(p.upfront_premium) + toPence(p.subscription_premium) * p.subscription_installments;

/**
 * The renewal made at the term's end, held to the price its notice stated. The notice is priced when
 * the renewal is stored, weeks before the term ends; rated again at the end, the renewal may cost more
 * (an at-fault claim settled in between steps the no-claims years back, a version approved since loads a
 * factor). ICOBS 6.5 wants the renewal premium in the notice and PRIN 2A.5 no price the customer was
 * not told, so a renewal that rated higher takes, part by part (the fixed premium, the rate per unit,
 * as the ENBP cap does), the notice's part; one that rated lower keeps its own. `days`: the new term's
 * and its year's days, for the yearly estimate. Pure.
 */
export function heldToNotice(
  offered: RatedPricing,
  notice: LastYearPricing,
  days: { termDays: number; yearDays: number },
): { pricing: RatedPricing; held: NoticePart[] } {
  const theirFixed = fixedPaymentsOf(notice);
  const fixedHeld = theirFixed !== null && fixedPaidPence(theirFixed) < fixedPaidPence(offered);
  const theirUnit =
    notice.usage_rate === undefined || notice.usage_premium === undefined
      ? null
      : { usage_rate: notice.usage_rate, usage_premium: notice.usage_premium };
  const unitHeld = theirUnit !== null && new Exact(theirUnit.usage_rate).lessThan(offered.usage_rate);
  if (!fixedHeld && !unitHeld) return { pricing: offered, held: [] };
  const fixed: Partial<RatedPricing> = fixedHeld
    ? {
        ...theirFixed,
        upfront_rate: notice.upfront_rate ?? offered.upfront_rate,
        subscription_rate: notice.subscription_rate ?? offered.subscription_rate,
        base_premium: notice.base_premium ?? offered.base_premium,
      }
    : {};
  const unit: Partial<RatedPricing> = unitHeld ? theirUnit : {};
  const pricing: RatedPricing = { ...offered, ...fixed, ...unit };
  const yearlyPence = yearlyEstimatePence(
    fixedPaidPence(pricing),
    toPence(pricing.usage_premium),
    days.termDays,
    days.yearDays,
  );
  return {
    pricing: { ...pricing, yearly_premium_estimate: Number(poundsText(yearlyPence)) },
    held: [...(fixedHeld ? ['fixed' as const] : []), ...(unitHeld ? ['per_unit' as const] : [])],
  };
}
