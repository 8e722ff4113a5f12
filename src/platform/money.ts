import { Decimal } from 'decimal.js';
import { AppError } from './errors.ts';

/**
 * The one currency Milepost bills in: pounds sterling. It insures UK motor policies (IPT, the certificate
 * of motor insurance, Bacs Direct Debit are British), so statements, charges, emails, reports and the web
 * apps all speak GBP, and every amount inside is integer pence.
 */
export const BILLING_CURRENCY = 'GBP';

/**
 * Money in the API is a number of pounds with at most 2 decimals; inside it is integer pence.
 * Conversions go through the number's shortest decimal string, never through binary arithmetic.
 */
export function toPence(pounds: number): number {
  const pence = new Decimal(String(pounds)).times(100);
  if (!pence.isInteger()) throw new RangeError(`${String(pounds)} has more than 2 decimal places`);
  return pence.toNumber();
}

/** Whether `pounds` is a whole number of pence: at most 2 decimals in its shortest decimal form. */
export function isWholePence(pounds: number): boolean {
  return Number.isFinite(pounds) && new Decimal(String(pounds)).times(100).isInteger();
}

/**
 * A money field of a body, in pounds, as sent: at most 2 decimals read from its decimal form, else 422
 * naming `path` (JSON Schema's `multipleOf: 0.01` divides in binary floats, and refused 1.15).
 */
export function requireWholePence(pounds: number, path: string): number {
  if (isWholePence(pounds)) return pounds;
  const message = 'must have at most 2 decimal places';
  throw new AppError('VALIDATION_FAILED', `The request is invalid: ${path} ${message}`, {
    errors: [{ path, message }],
  });
}

/** Integer pence → pounds as a JS number (exactly the decimal the pence denote, e.g. 1234 → 12.34). */
export function fromPence(pence: number): number {
  return new Decimal(pence).dividedBy(100).toNumber();
}

/**
 * Integer pence → pounds with 2 decimals as text, by integer arithmetic (reports write millions):
 * `-1234` → `-12.34`. The same text is a JSON number and a CSV cell.
 */
export function poundsText(pence: number): string {
  const magnitude = Math.abs(pence);
  const whole = Math.floor(magnitude / 100);
  const cents = magnitude - whole * 100;
  return `${pence < 0 ? '-' : ''}${String(whole)}.${cents < 10 ? '0' : ''}${String(cents)}`;
}

/** Rounds an exact decimal amount of pence once, half to even (banker's rounding). */
export function roundPenceHalfEven(pence: Decimal): number {
  return pence.toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).toNumber();
}

export { Decimal };
