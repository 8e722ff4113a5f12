import type { components, PolicyDetails } from '../../../sdk/src/index.ts';

/*
 * The usage page's arithmetic: London calendar days and months, and journeys summed by them in whole
 * metres and pence. Pure: no clock (the time is passed in), no I/O.
 */

type Journey = components['schemas']['Journey'];
export type Unit = 'mile' | 'km';

export const METRES_PER: Readonly<Record<Unit, number>> = { mile: 1609.344, km: 1000 };

// ── London calendar ───────────────────────────────────────────────────────────────────────────────

const londonParts = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});
/** The Europe/London calendar day of an instant, `YYYY-MM-DD` (journeys count on the day they start). */
export function londonDay(unixSeconds: number): string {
  const parts = Object.fromEntries(
    londonParts.formatToParts(new Date(unixSeconds * 1000)).map((p) => [p.type, p.value]),
  );
  return `${parts['year']}-${parts['month']}-${parts['day']}`;
}
export const monthOf = (day: string): string => day.slice(0, 7);
/** Calendar arithmetic on `YYYY-MM-DD` through UTC dates, where no day is 23 or 25 hours long. */
export const utcOf = (day: string): Date => new Date(`${day}T00:00:00Z`);
const dayOf = (date: Date): string => date.toISOString().slice(0, 10);

export function daysBetween(first: string, last: string): string[] {
  const days: string[] = [];
  for (let d = utcOf(first); dayOf(d) <= last; d = new Date(d.getTime() + 86_400_000)) days.push(dayOf(d));
  return days;
}
export function monthsBetween(first: string, last: string): string[] {
  const months: string[] = [];
  for (let d = utcOf(`${first}-01`); monthOf(dayOf(d)) <= last; d.setUTCMonth(d.getUTCMonth() + 1))
    months.push(monthOf(dayOf(d)));
  return months;
}
export const daysInMonth = (month: string): number => {
  const d = utcOf(`${month}-01`);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
};
export const shortMonth = new Intl.DateTimeFormat('en-GB', { month: 'short', timeZone: 'UTC' });
export const longMonth = new Intl.DateTimeFormat('en-GB', {
  month: 'long',
  year: 'numeric',
  timeZone: 'UTC',
});

// ── Sums ──────────────────────────────────────────────────────────────────────────────────────────

/** Distance and money of a set of journeys, in whole units: metres and pence (never summed pounds). */
export interface Totals {
  distanceMetres: number;
  premiumPence: number;
  journeys: number;
  estimated: number;
}
const emptyTotals = (): Totals => ({ distanceMetres: 0, premiumPence: 0, journeys: 0, estimated: 0 });
function add(totals: Totals, journey: Journey): void {
  totals.distanceMetres += journey.distance_in_metres;
  // Each journey's premium is whole pence in pounds; rounding it back to pence keeps the sum exact.
  totals.premiumPence += Math.round(journey.usage_premium * 100);
  totals.journeys += 1;
  if (journey.is_estimated) totals.estimated += 1;
}
/** Non-void journeys summed by a key of their start (a London day or month). */
export function sumBy(
  journeys: readonly Journey[],
  keyOf: (journey: Journey) => string,
): Map<string, Totals> {
  const sums = new Map<string, Totals>();
  for (const journey of journeys) {
    if (journey.is_void) continue;
    const key = keyOf(journey);
    const totals = sums.get(key) ?? emptyTotals();
    add(totals, journey);
    sums.set(key, totals);
  }
  return sums;
}
export function total(sums: Map<string, Totals>, keys: readonly string[]): Totals {
  const all = emptyTotals();
  for (const key of keys) {
    const part = sums.get(key);
    if (part === undefined) continue;
    all.distanceMetres += part.distanceMetres;
    all.premiumPence += part.premiumPence;
    all.journeys += part.journeys;
    all.estimated += part.estimated;
  }
  return all;
}

/** The current statement period: from the end of the last statement (or the term's start) to now. */
export function periodOf(policy: PolicyDetails, nowS: number) {
  const ends = policy.versions
    .filter((v) => v.version_type === 'st' && !v.superseded && v.statement_end_date !== null)
    .map((v) => Date.parse(v.statement_end_date ?? ''));
  const lastEndMs = ends.length === 0 ? undefined : Math.max(...ends);
  // A statement's end is its last second (inclusive): the next period starts a second later.
  const startS = lastEndMs === undefined ? policy.policy.start_date : Math.floor(lastEndMs / 1000) + 1;
  const endS = Math.min(nowS, policy.policy.end_date);
  return { startS, endS, billedBefore: lastEndMs !== undefined };
}
