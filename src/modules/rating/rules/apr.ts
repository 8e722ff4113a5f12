import { Decimal } from '../../../platform/money.ts';
import type { MonthlyPlan } from './rate-book.ts';

/*
 * The APR of paying the fixed premium monthly, as the Consumer Credit (Agreements) Regulations 2010
 * and CONC App 1.1 define it: the annual rate X at which the present value of the credit advanced
 * equals the present value of the repayments, Σ Aₖ (1 + X)^(−tₖ) = Σ Bₗ (1 + X)^(−sₗ), times in years
 * from the start, a month being a twelfth of a year (the rules' "equal months"), and X rounded to one
 * decimal place, a figure of 5 or more in the second place rounding the first up.
 *
 * A monthly plan advances the premium (the cash price) at the start and is repaid by n equal
 * installments, the first at the start and then one a month, together the premium × (1 + loading).
 * The plan's APR does not depend on the premium: it is computed on a premium of 1, exactly.
 */

const Precise = Decimal.clone({ precision: 40 });
const ONE = new Precise(1);

/** Σ installment × vᵏ for k from 0 to count − 1: the repayments' present value, v = (1 + X)^(−1/12). */
function presentValue(installment: Decimal, count: number, v: Decimal): Decimal {
  let sum = new Precise(0);
  let power = ONE;
  for (let k = 0; k < count; k++) {
    sum = sum.plus(power);
    power = power.times(v);
  }
  return sum.times(installment);
}

/**
 * The APR (a percentage, one decimal, e.g. `"12.7"`) of `cashPrice` repaid by `count` monthly
 * installments of `installment`, the first at the start. `"0.0"` when the repayments total no more
 * than the cash price. Amounts in any one unit (pence, pounds); decimals for exactness.
 */
export function installmentsApr(cashPrice: Decimal.Value, installment: Decimal.Value, count: number): string {
  const price = new Precise(cashPrice);
  const each = new Precise(installment);
  if (count < 2 || !price.greaterThan(0) || !each.times(count).greaterThan(price)) return '0.0';
  if (!each.lessThan(price)) return 'Infinity';
  // NOTE: solved for the monthly discount factor v rather than X, so only whole powers are taken: the
  // present value rises with v, is below the price at v = 0 (one installment) and above it at v = 1.
  let low = new Precise(0);
  let high = ONE;
  for (let step = 0; step < 100; step++) {
    const middle = low.plus(high).dividedBy(2);
    if (presentValue(each, count, middle).lessThan(price)) low = middle;
    else high = middle;
  }
  const x = ONE.dividedBy(low.plus(high).dividedBy(2).pow(12)).minus(ONE);
  return x.times(100).toDecimalPlaces(1, Decimal.ROUND_HALF_UP).toFixed(1);
}

const planAprs = new Map<string, string>();

/** The APR of a monthly plan (percent, one decimal), from its loading and installments alone. */
export function installmentPlanApr(plan: MonthlyPlan): string {
  const key = `${plan.installments}:${plan.loading_rate}`;
  let apr = planAprs.get(key);
  if (apr === undefined) {
    const total = ONE.plus(plan.loading_rate);
    apr = installmentsApr(ONE, total.dividedBy(plan.installments), plan.installments);
    if (planAprs.size > 1_000) planAprs.clear();
    planAprs.set(key, apr);
  }
  return apr;
}
