/**
 * A journey's usage premium and the distances shown beside it. Pure: no I/O, no clock.
 *
 * DESIGN (Money): usage_premium = the rate in force at the journey's start × the distance in the product's
 * unit, computed exactly and rounded half-even to pence once. The distance rated is the integer
 * `distance_in_metres` the journey shows, so anyone can recompute a premium from what the API returns.
 */
import { Decimal, roundPenceHalfEven } from '../../../platform/money.ts';
import type { UsageUnit } from '../../policies/rules/index.ts';

/** The international mile, exactly. */
export const METRES_PER_MILE = '1609.344';
const METRES_PER_KILOMETRE = '1000';

/**
 * Decimal arithmetic wide enough that the quotient is exact where it matters: with a rate of at most 6
 * decimals, a premium in pence is N / 16,093,440 for an integer N, so a result that is not exactly
 * halfway lies at least 3.1e-8 pence from halfway, far above the 1e-35 this precision can lose (the
 * default 20 digits could lose 1e-6 on a large premium and round the wrong way).
 */
const Exact = Decimal.clone({ precision: 50 });

const metresPer = (unit: UsageUnit): string => (unit === 'km' ? METRES_PER_KILOMETRE : METRES_PER_MILE);

/**
 * The usage premium in integer pence: `ratePerUnit` (money per mile or kilometre, as exact decimal text
 * or a number of pounds) × `distanceMetres` / metres per unit, rounded once, half to even.
 */
export function usagePremiumPence(
  ratePerUnit: string | number,
  distanceMetres: number,
  unit: UsageUnit,
): number {
  if (!Number.isSafeInteger(distanceMetres) || distanceMetres < 0) {
    throw new RangeError(`distance ${distanceMetres} m is not a whole number of metres`);
  }
  const rate = new Exact(typeof ratePerUnit === 'number' ? String(ratePerUnit) : ratePerUnit);
  if (!rate.isFinite() || rate.isNegative())
    throw new RangeError(`usage rate ${String(ratePerUnit)} is not a rate`);
  return roundPenceHalfEven(rate.times(distanceMetres).times(100).dividedBy(metresPer(unit)));
}

/**
 * n / d rounded half to even, for non-negative safe integers whose quotient is exact in integers: the
 * floating-point quotient only guesses, and the remainder (exact below 2^53) corrects the guess.
 */
function divideHalfEven(n: number, d: number): number {
  let q = Math.floor(n / d);
  let r = n - q * d;
  if (r < 0) {
    q -= 1;
    r += d;
  } else if (r >= d) {
    q += 1;
    r -= d;
  }
  return 2 * r > d || (2 * r === d && q % 2 === 1) ? q + 1 : q;
}

/** Hundredths of a unit in whole metres, half-even: integers while they are exact, decimals beyond. */
function hundredths(distanceMetres: number, metresPerUnitTimes1000: number, metresPerUnit: string): number {
  const numerator = distanceMetres * 100_000;
  if (Number.isSafeInteger(numerator)) return divideHalfEven(numerator, metresPerUnitTimes1000) / 100;
  return new Exact(distanceMetres)
    .dividedBy(metresPerUnit)
    .toDecimalPlaces(2, Decimal.ROUND_HALF_EVEN)
    .toNumber();
}

/** Whole metres as miles, rounded half-even to 2 decimals (what `total_miles` shows). */
export function totalMiles(distanceMetres: number): number {
  return hundredths(distanceMetres, 1_609_344, METRES_PER_MILE);
}

/** Whole metres as kilometres, rounded half-even to 2 decimals (what `total_kms` shows). */
export function totalKilometres(distanceMetres: number): number {
  return hundredths(distanceMetres, 1_000_000, METRES_PER_KILOMETRE);
}

/** The interface's `distance_units` for a product unit: `miles` (as the original service shows) or `kms`. */
export const distanceUnitsLabel = (unit: UsageUnit): 'miles' | 'kms' => (unit === 'km' ? 'kms' : 'miles');
