/**
 * Statement periods and billing days on the Europe/London calendar. Pure: time comes in as values.
 * Periods are inclusive of both ends at one-second resolution, as the interface shows them: a
 * period's start is the previous end + 1 s, and the first starts at the policy's `start_date`.
 */

import { londonDate, londonMidnight } from '../../../platform/london-calendar.ts';

export { londonDate, londonMidnight };

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** The billing date of a month: days 29–31 fall on the last day of shorter months. */
export function billingDateIn(year: number, month: number, billingDay: number): string {
  const day = Math.min(billingDay, daysInMonth(year, month));
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** True when `date` (`YYYY-MM-DD`) is the billing date of its month for `billingDay`. */
export function isBillingDate(date: string, billingDay: number): boolean {
  const [y, m] = date.split('-').map(Number);
  return billingDateIn(y ?? 1970, m ?? 1, billingDay) === date;
}

/** The automatic statement of billing date `date` ends at the last second of the day before it. */
export function automaticPeriodEnd(date: string): Date {
  return new Date(londonMidnight(date).getTime() - 1000);
}

/** The next period: from the previous end + 1 s (or the policy start), to `end` inclusive. */
export function nextPeriod(
  previousEnd: Date | null,
  policyStart: Date,
  end: Date,
): { ok: true; start: Date; end: Date } | { ok: false; reason: 'NOT_AFTER_PREVIOUS' } {
  const start = previousEnd === null ? policyStart : new Date(previousEnd.getTime() + 1000);
  if (end.getTime() < start.getTime()) return { ok: false, reason: 'NOT_AFTER_PREVIOUS' };
  return { ok: true, start, end };
}

/**
 * Subscription installments fall due at 00:00 Europe/London on each billing date from the policy's
 * start, at most `count` of them. Returns those due within [start, end], oldest first, as due instants.
 */
export function installmentsDue(input: {
  policyStart: Date;
  billingDay: number;
  count: number;
  periodStart: Date;
  periodEnd: Date;
}): Date[] {
  const due: Date[] = [];
  const startDate = londonDate(input.policyStart);
  let [year, month] = startDate.split('-').map(Number) as [number, number];
  const startMs = input.policyStart.getTime();
  for (let n = 0; n < input.count;) {
    const at = londonMidnight(billingDateIn(year, month, input.billingDay));
    // The first installment falls on the first billing date on or after the start (its day, at the start itself).
    const instant = at.getTime() < startMs && londonDate(at) === startDate ? input.policyStart : at;
    if (instant.getTime() >= startMs) {
      if (instant.getTime() > input.periodEnd.getTime()) break;
      if (instant.getTime() >= input.periodStart.getTime()) due.push(instant);
      n++;
    }
    month++;
    if (month > 12) {
      month = 1;
      year++;
    }
  }
  return due;
}
