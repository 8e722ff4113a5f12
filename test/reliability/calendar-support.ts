/**
 * The billing calendar as the promise states it (R4), written out independently of the service: the
 * billing dates of a billing day, the automatic statement periods, the terms of a policy that renews
 * on its anniversary, and the instants its subscription installments fall due. The suite compares the
 * service's calendar functions and its stored statements with this model.
 */

import { addDays, londonDate, londonMidnight } from '../../src/platform/london-calendar.ts';

export const SECOND_MS = 1000;

const LONDON_TIME = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  hourCycle: 'h23',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** `HH:MM:SS` on the London wall clock at `at`. */
export const londonTime = (at: Date): string => LONDON_TIME.format(at);

export const daysInMonth = (year: number, month: number): number =>
  new Date(Date.UTC(year, month, 0)).getUTCDate();

export const isoDate = (year: number, month: number, day: number): string =>
  `${String(year)}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;

/** Every calendar date from `from` to `to`, both included. */
export function datesBetween(from: string, to: string): string[] {
  const dates: string[] = [];
  for (let date = from; date <= to; date = addDays(date, 1)) dates.push(date);
  return dates;
}

/** The months from (year, month) for `count` months, as [year, month] pairs. */
export function monthsFrom(year: number, month: number, count: number): Array<[number, number]> {
  return Array.from({ length: count }, (_, i) => {
    const index = year * 12 + month - 1 + i;
    return [Math.floor(index / 12), (index % 12) + 1];
  });
}

/** The date one year after `date` (29 February becomes 28 February). */
export function anniversaryOf(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return isoDate(y + 1, m, Math.min(d, daysInMonth(y + 1, m)));
}

/** The billing date of a month as the promise states it: the billing day, or the month's last day. */
export const expectedBillingDate = (year: number, month: number, billingDay: number): string =>
  isoDate(year, month, Math.min(billingDay, daysInMonth(year, month)));

export interface Term {
  readonly startAt: Date;
  /** The last second of cover (inclusive). */
  readonly endAt: Date;
}

/** `count` consecutive yearly terms from 00:00 London on `startOn`, each to its anniversary − 1 s. */
export function yearlyTerms(startOn: string, count: number): Term[] {
  const terms: Term[] = [];
  let on = startOn;
  for (let i = 0; i < count; i++) {
    const next = anniversaryOf(on);
    terms.push({ startAt: londonMidnight(on), endAt: new Date(londonMidnight(next).getTime() - SECOND_MS) });
    on = next;
  }
  return terms;
}

export interface ModelPeriod {
  /** The billing date that closed the period, or null for the final statement at the end of cover. */
  readonly billingDate: string | null;
  readonly startAt: Date;
  readonly endAt: Date;
}

/**
 * The automatic statements of a policy with these terms: one on each billing date after cover began
 * and up to the end of cover, each from the previous end + 1 s to the last second of the day before
 * its billing date; then the final statement to the end of cover.
 */
export function modelPeriods(terms: readonly Term[], billingDay: number): ModelPeriod[] {
  const first = terms[0];
  const last = terms.at(-1);
  if (first === undefined || last === undefined) return [];
  const periods: ModelPeriod[] = [];
  let startAt = first.startAt;
  const [y, m] = londonDate(first.startAt).split('-').map(Number) as [number, number];
  for (const [year, month] of monthsFrom(y, m, terms.length * 12 + 2)) {
    const billingDate = expectedBillingDate(year, month, billingDay);
    const midnight = londonMidnight(billingDate);
    if (midnight.getTime() <= first.startAt.getTime()) continue;
    if (midnight.getTime() > last.endAt.getTime()) break;
    const endAt = new Date(midnight.getTime() - SECOND_MS);
    periods.push({ billingDate, startAt, endAt });
    startAt = midnight;
  }
  if (startAt.getTime() <= last.endAt.getTime())
    periods.push({ billingDate: null, startAt, endAt: last.endAt });
  return periods;
}

/**
 * The instants a term's installments fall due: 00:00 London on each of its first `count` billing
 * dates on or after its start (the start itself when cover begins during a billing date).
 */
export function termInstallmentInstants(term: Term, billingDay: number, count: number): Date[] {
  const startOn = londonDate(term.startAt);
  const [y, m] = startOn.split('-').map(Number) as [number, number];
  const due: Date[] = [];
  for (const [year, month] of monthsFrom(y, m, 14)) {
    if (due.length === count) break;
    const date = expectedBillingDate(year, month, billingDay);
    if (date < startOn) continue;
    const at = date === startOn ? term.startAt : londonMidnight(date);
    if (at.getTime() > term.endAt.getTime()) break;
    due.push(at);
  }
  return due;
}

/** Whether `at` lies in [startAt, endAt], both inclusive. */
export const within = (at: Date, startAt: Date, endAt: Date): boolean =>
  at.getTime() >= startAt.getTime() && at.getTime() <= endAt.getTime();
