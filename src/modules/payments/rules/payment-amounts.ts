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

/**
 * A cancellation's amount in pence: old upfront premium × remaining share − cancel fee − admin fee,
 * rounded once, half to even. Positive is owed back to the policyholder (a refund, never more than
 * `refundablePence`, what was paid and not yet refunded); negative is owed by them (a charge).
 */
export function cancellationAmountPence(input: {
  upfrontPence: number;
  cancelFeePence: number;
  adminFeePence: number;
  share: Decimal;
  refundablePence: number;
}): number {
  const owed = roundPenceHalfEven(
    new Decimal(input.upfrontPence).times(input.share).minus(input.cancelFeePence).minus(input.adminFeePence),
  );
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
