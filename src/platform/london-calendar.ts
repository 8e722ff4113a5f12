/**
 * The Europe/London calendar: the day and midnight of an instant, through the time-zone database.
 * Pure (time comes in as values). Billing days, statement periods, daily caps and monthly budgets all
 * count London days.
 */

const LONDON = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** Minutes Europe/London is ahead of UTC at the start of a UTC hour, through the time-zone database. */
function offsetAtHour(hour: number): number {
  const at = new Date(hour * HOUR_MS);
  const parts = Object.fromEntries(LONDON.formatToParts(at).map((p) => [p.type, p.value]));
  const asUtc = Date.UTC(
    Number(parts['year']),
    Number(parts['month']) - 1,
    Number(parts['day']),
    Number(parts['hour']),
    Number(parts['minute']),
    Number(parts['second']),
  );
  return Math.round((asUtc - at.getTime()) / 60_000);
}

const HOUR_MS = 3_600_000;
// London's clocks change only on the hour (01:00 UTC), so one answer serves a whole UTC hour. Asking
// Intl each time was most of a billing run's own CPU (bench/billing.ts: 0.9 s of 3.6 s for 20,000
// statements), and formatting each instant's date 6 % of a bordereau's; the memo is bounded, and a
// billing run or a month's report asks about a few hundred hours.
interface HourFacts {
  readonly offsetMinutes: number;
  /** The London date of every instant of the hour; null when the offset is not whole hours (before 1847). */
  readonly date: string | null;
}
const factsByHour = new Map<number, HourFacts>();
const MAX_MEMO = 10_000;

const dateAt = (at: number, offsetMinutes: number): string =>
  new Date(at + offsetMinutes * 60_000).toISOString().slice(0, 10);

function hourFacts(at: Date): HourFacts {
  const hour = Math.floor(at.getTime() / HOUR_MS);
  let facts = factsByHour.get(hour);
  if (facts === undefined) {
    if (factsByHour.size >= MAX_MEMO) factsByHour.clear();
    const offsetMinutes = offsetAtHour(hour);
    facts = { offsetMinutes, date: offsetMinutes % 60 === 0 ? dateAt(hour * HOUR_MS, offsetMinutes) : null };
    factsByHour.set(hour, facts);
  }
  return facts;
}

/** Minutes Europe/London is ahead of UTC at `at` (0 in winter, 60 in summer). */
function londonOffsetMinutes(at: Date): number {
  return hourFacts(at).offsetMinutes;
}

/** `YYYY-MM-DD` in Europe/London for an instant. */
export function londonDate(at: Date): string {
  const facts = hourFacts(at);
  return facts.date ?? dateAt(at.getTime(), facts.offsetMinutes);
}

/** The instant of 00:00 Europe/London on `date` (never in a clock-change gap: those are at 01:00). */
export function londonMidnight(date: string): Date {
  const [y, m, d] = date.split('-').map(Number);
  const guess = Date.UTC(y ?? 1970, (m ?? 1) - 1, d ?? 1);
  const first = guess - londonOffsetMinutes(new Date(guess)) * 60_000;
  return new Date(guess - londonOffsetMinutes(new Date(first)) * 60_000);
}

/** The calendar date `days` after `date` (`YYYY-MM-DD`). */
export function addDays(date: string, days: number): string {
  const at = new Date(`${date}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}

/**
 * Every calendar date from `from` to `to`, both included, in order; none when `to` is before `from`.
 * NOTE: it never steps past `to`: the day after 9999-12-31 has no `YYYY-MM-DD` form (`addDays` gives
 * `+010000-01`, which sorts before it), and a loop of `day <= to` on it never ended for a range to then.
 */
export function datesFromTo(from: string, to: string): string[] {
  const dates: string[] = [];
  for (let date = from; date <= to;) {
    dates.push(date);
    const next = addDays(date, 1);
    if (next <= date) break;
    date = next;
  }
  return dates;
}

/**
 * The instant of `hour`:00 Europe/London on `date` (0 ≤ hour ≤ 24), counting the hours the clocks show: on
 * the day the clocks go forward 04:00 comes three hours after midnight, on the day they go back five.
 */
export function londonHourOn(date: string, hour: number): Date {
  const midnight = londonMidnight(date);
  const guess = midnight.getTime() + hour * HOUR_MS;
  const shiftMinutes = londonOffsetMinutes(new Date(guess)) - londonOffsetMinutes(midnight);
  return new Date(guess - shiftMinutes * 60_000);
}
