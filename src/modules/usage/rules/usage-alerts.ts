/**
 * Usage alerts: which of a policy's alerts a journey makes due, from its sums and limits. Pure: no I/O,
 * time comes in as values. Distances are whole metres; limits set in miles or kilometres become whole
 * metres through exact decimals, never binary floats.
 */
import { addDays, londonDate, londonMidnight } from '../../../platform/london-calendar.ts';

/** A product's unit of distance. */
export type { DistanceUnit as UsageUnit } from '../../products/rules/index.ts';
export type UsageAlertKind = 'budget_exceeded' | 'daily_cap_reached' | 'annual_cap_reached';

/** A policy's limits for the periods of one journey; null where no such limit applies. */
export interface AlertLimits {
  /** The monthly mileage budget, or null when there is none or the product turns its alerts off. */
  readonly budgetMetres: number | null;
  readonly dailyCapMetres: number | null;
  readonly annualCapMetres: number | null;
}

/** Non-void distance in the journey's London day, London month and policy year (null: not counted). */
export interface AlertSums {
  readonly dayMetres: number;
  readonly monthMetres: number;
  /** Each London day counted at most at its daily cap; null when the year is not checked. */
  readonly yearMetres: number | null;
}

/**
 * The alerts due: each limit the sums now exceed (strictly) whose alert for the period was not
 * recorded yet. Condition-based, so a journey whose alert was lost (a crash after it was stored) is
 * made good by the next journey in the same period.
 */
export function dueAlerts(
  limits: AlertLimits,
  sums: AlertSums,
  recorded: ReadonlySet<UsageAlertKind>,
): UsageAlertKind[] {
  const due: UsageAlertKind[] = [];
  const over = (metres: number | null, limit: number | null) =>
    metres !== null && limit !== null && metres > limit;
  if (over(sums.monthMetres, limits.budgetMetres) && !recorded.has('budget_exceeded'))
    due.push('budget_exceeded');
  if (over(sums.dayMetres, limits.dailyCapMetres) && !recorded.has('daily_cap_reached'))
    due.push('daily_cap_reached');
  if (over(sums.yearMetres, limits.annualCapMetres) && !recorded.has('annual_cap_reached'))
    due.push('annual_cap_reached');
  return due;
}

/**
 * A policy year's distance with each London day counted at most at its daily cap: the year's total
 * less what days over their cap drove beyond it. `busyDays` needs only the days over the smallest cap
 * any product version has (the others give nothing back), which keeps the database's answer short.
 */
export function yearCountedMetres(
  totalMetres: number,
  busyDays: ReadonlyArray<{ readonly date: string; readonly metres: number }>,
  dailyCapOn: (date: string) => number | null,
): number {
  let counted = totalMetres;
  for (const day of busyDays) {
    const cap = dailyCapOn(day.date);
    if (cap !== null && day.metres > cap) counted -= day.metres - cap;
  }
  return counted;
}

/** The London periods an instant falls in, as half-open `[start, end)` instants. */
export interface LondonPeriods {
  /** `YYYY-MM-DD` */
  readonly date: string;
  /** `YYYY-MM` */
  readonly month: string;
  readonly dayStartAt: Date;
  readonly dayEndAt: Date;
  readonly monthStartAt: Date;
  readonly monthEndAt: Date;
}

/** The London day and month of `at`. */
export function londonPeriodsOf(at: Date): LondonPeriods {
  const date = londonDate(at);
  const month = date.slice(0, 7);
  const [y, m] = month.split('-').map(Number);
  const next = new Date(Date.UTC(y ?? 1970, m ?? 1, 1)).toISOString().slice(0, 10);
  return {
    date,
    month,
    dayStartAt: londonMidnight(date),
    dayEndAt: londonMidnight(addDays(date, 1)),
    monthStartAt: londonMidnight(`${month}-01`),
    monthEndAt: londonMidnight(next),
  };
}
