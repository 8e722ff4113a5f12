/**
 * What a payment at binding pays of a monthly plan. Pure: amounts in, a count out.
 *
 * NOTE: a monthly plan's installments are billed by the statement run, the first on the term's start.
 * A policy bought with its first installment paid by card (the web app's quote and buy) must not be
 * billed it again, so the payment at binding says how many of the first term's installments it paid:
 * what it pays beyond the upfront premium and the deposit fee, in whole installments.
 */
import { toPence as pence } from '../../../platform/money.ts';

/** The pricing fields the rule reads (pounds, at most two decimals, as the policy object holds them). */
export interface PlanPricing {
  readonly upfront_premium: number;
  readonly subscription_premium: number;
  readonly subscription_installments?: number | undefined;
  readonly deposit_fee?: number | undefined;
}

/** The amount (pence) that pays the first `count` installments at binding: upfront, deposit, installments. */
export function firstPaymentPence(pricing: PlanPricing, count: number): number {
  const monthly = (pricing.subscription_installments ?? 0) > 0;
  if (!monthly) return pence(pricing.upfront_premium);
  return (
    pence(pricing.upfront_premium) +
    pence(pricing.deposit_fee ?? 0) +
    pence(pricing.subscription_premium) * count
  );
}

/**
 * How many of the first term's installments `paymentAmount` (pounds; undefined: the upfront premium
 * alone) pays: on a monthly plan, a payment of the upfront premium, the deposit fee and 1 to all of the
 * plan's installments pays that many; any other payment pays none, as before the rule, so a client that
 * collects another amount at binding (a fee of its own) is billed its plan in full as it always was.
 */
export function prepaidInstallments(pricing: PlanPricing, paymentAmount: number | undefined): number {
  const installments = pricing.subscription_installments ?? 0;
  const installmentPence = pence(pricing.subscription_premium);
  if (paymentAmount === undefined || installments <= 0 || installmentPence <= 0) return 0;
  const beyondPence = pence(paymentAmount) - firstPaymentPence(pricing, 0);
  if (beyondPence <= 0 || beyondPence % installmentPence !== 0) return 0;
  const count = beyondPence / installmentPence;
  return count <= installments ? count : 0;
}
