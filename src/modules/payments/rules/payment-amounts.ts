import { addDays, londonDate } from '../../../platform/london-calendar.ts';
import { Decimal, roundPenceHalfEven } from '../../../platform/money.ts';

const DAY_SECONDS = 86_400;

/**
 * The share of a term still to run at `effectiveSeconds`, counted in whole days (DESIGN: "the share
 * counts days"): remaining days ÷ term days, as an exact fraction, clamped to [0, 1].
 */
export function remainingShare(
  term: { startSeconds: number; endSeconds: number },
  effectiveSeconds: number,
): Decimal {
  const termDays = Math.max(1, Math.round((term.endSeconds - term.startSeconds) / DAY_SECONDS));
  const clamped = Math.min(Math.max(effectiveSeconds, term.startSeconds), term.endSeconds);
  const remainingDays = Math.min(
    termDays,
    Math.max(0, Math.round((term.endSeconds - clamped) / DAY_SECONDS)),
  );
  return new Decimal(remainingDays).dividedBy(termDays);
}

/**
 * An adjustment's amount in pence: (new − old upfront premium) × remaining share + MTA fee, rounded
 * once, half to even. Positive is a charge; negative a refund.
 */
export function adjustmentAmountPence(input: {
  oldUpfrontPence: number;
  newUpfrontPence: number;
  mtaFeePence: number;
  share: Decimal;
}): number {
  const prorated = new Decimal(input.newUpfrontPence - input.oldUpfrontPence).times(input.share);
  return roundPenceHalfEven(prorated.plus(input.mtaFeePence));
}

/** The consumer's right to cancel a contract of non-life insurance, in calendar days (ICOBS 7.1.1R). */
export const COOLING_OFF_DAYS = 14;

/**
 * Whether a cancellation asked for at `notifiedAt` is within the term's cooling-off period: until the
 * end of the London day 14 days after the later of the contract's conclusion (`concludedAt`, when the
 * new business or renewal was written and its documents issued) and the start of cover (`startAt`), as
 * the IPID and the renewal notice tell the policyholder (ICOBS 7.1.1R, 7.1.3R: the period runs from
 * the conclusion or the receipt of the terms, if later).
 */
export function inCoolingOff(term: { concludedAt: Date; startAt: Date }, notifiedAt: Date): boolean {
  const from = term.concludedAt.getTime() > term.startAt.getTime() ? term.concludedAt : term.startAt;
  return londonDate(notifiedAt) <= addDays(londonDate(from), COOLING_OFF_DAYS);
}

/**
 * A cancellation's amount in pence: old upfront premium × remaining share − cancel fee − admin fee,
 * rounded once, half to even. Positive is owed back to the policyholder (a refund, never more than
 * `refundablePence`, what was paid and not yet refunded); negative is owed by them (a charge). In the
 * cooling-off period no fee is deducted: the policyholder pays only for the cover provided (ICOBS
 * 7.2.1R, no more than in proportion to it and nothing that could be read as a penalty).
 */
export function cancellationAmountPence(input: {
  upfrontPence: number;
  cancelFeePence: number;
  adminFeePence: number;
  share: Decimal;
  refundablePence: number;
  coolingOff: boolean;
}): number {
  const feesPence = input.coolingOff ? 0 : input.cancelFeePence + input.adminFeePence;
  const owed = roundPenceHalfEven(new Decimal(input.upfrontPence).times(input.share).minus(feesPence));
  return owed > 0 ? Math.min(owed, Math.max(0, input.refundablePence)) : owed;
}

/**
 * The smallest amount Stripe charges, in minor units, by currency (Stripe's documented minimums;
 * a smaller charge is refused outright). Unknown currencies take the strictest listed.
 */
export const MINIMUM_CHARGE_MINOR_UNITS: Readonly<Record<string, number>> = {
  GBP: 30,
  EUR: 50,
  USD: 50,
  CHF: 50,
  AUD: 50,
  CAD: 50,
};

/** The smallest charge the processor takes in `currency`, in minor units. */
export const minimumChargeMinorUnits = (currency: string): number =>
  MINIMUM_CHARGE_MINOR_UNITS[currency.toUpperCase()] ?? 50;

/** Of an amount billed, what cannot be charged now and is carried to the next statement: all or nothing. */
export function carriedForward(amountPence: number, currency: string): number {
  return amountPence > 0 && amountPence < minimumChargeMinorUnits(currency) ? amountPence : 0;
}
