/**
 * Working days in England and Wales: Monday to Friday, less the bank holidays of England and Wales (the
 * days Bacs does not process). Pure: London dates (`YYYY-MM-DD`) in, London dates out; no clock.
 *
 * The bank holidays come from `date-holidays` (region GB, state ENG: the Banking and Financial Dealings
 * Act 1971 days, their substitutes when they fall at a weekend, and the one-off days proclaimed for
 * 2020's VE Day, 2022's Platinum Jubilee and State Funeral, and 2023's Coronation). Years a release of
 * the package does not yet know a proclamation for are computed from the regular rules; the test
 * (`working-days.test.ts`) holds each year gov.uk publishes to gov.uk's own list.
 */
import { createRequire } from 'node:module';
import type HolidaysType from 'date-holidays';
import { addDays } from './london-calendar.ts';

const require = createRequire(import.meta.url);

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function checkDate(on: string): number {
  const match = DATE.exec(on);
  const year = Number(match?.[1]);
  if (match === null || addDays(on, 0) !== on)
    throw new RangeError(`not a calendar date (YYYY-MM-DD): ${on}`);
  return year;
}

/*
 * NOTE: loaded on the first date asked about, not with the module: the package holds every country's
 * rules and time zones (about 8 MB of heap and 9 MB of a process's RSS), and only direct debits and
 * Bacs dates need them, which a process rendering documents or serving most requests never computes.
 */
let englandAndWales: HolidaysType | undefined;
function englandAndWalesHolidays(): HolidaysType {
  if (englandAndWales === undefined) {
    const Holidays = require('date-holidays') as typeof HolidaysType;
    englandAndWales = new Holidays('GB', 'ENG');
  }
  return englandAndWales;
}

const holidaysByYear = new Map<number, ReadonlySet<string>>();

/** The bank holidays of England and Wales in `year`, as London dates (`YYYY-MM-DD`), in date order. */
export function bankHolidays(year: number): readonly string[] {
  return [...bankHolidaySet(year)].sort();
}

function bankHolidaySet(year: number): ReadonlySet<string> {
  let days = holidaysByYear.get(year);
  if (days === undefined) {
    // NOTE: 'public' is the package's type for a bank holiday in GB; 'observance' days (Mothering
    // Sunday, Father's Day) are not days off. The package also lists a holiday that falls at a weekend
    // beside its weekday substitute; as on gov.uk's list, only the substitute is a bank holiday.
    // `date` is the local date and time ('2023-05-08 00:00:00').
    days = new Set(
      englandAndWalesHolidays()
        .getHolidays(year)
        .filter((h) => h.type === 'public')
        .map((h) => h.date.slice(0, 10))
        .filter((on) => !isWeekend(on)),
    );
    holidaysByYear.set(year, days);
  }
  return days;
}

/** Whether `on` is a bank holiday in England and Wales. */
export function isBankHoliday(on: string): boolean {
  return bankHolidaySet(checkDate(on)).has(on);
}

function isWeekend(on: string): boolean {
  const weekday = new Date(`${on}T00:00:00Z`).getUTCDay();
  return weekday === 0 || weekday === 6;
}

/** Whether `on` (`YYYY-MM-DD`) is a working day: Monday to Friday and not an England and Wales bank holiday. */
export function isWorkingDay(on: string): boolean {
  const year = checkDate(on);
  return !isWeekend(on) && !bankHolidaySet(year).has(on);
}

/**
 * The working day `n` working days after `on` (before it when `n` is negative); `on` itself need not be
 * a working day, and `n = 0` gives `on` unchanged. Invariant: `workingDaysBetween(on, addWorkingDays(on, n)) === n`
 * for `n ≥ 0`, and for `n < 0` when `on` is a working day.
 */
export function addWorkingDays(on: string, n: number): string {
  if (!Number.isSafeInteger(n)) throw new RangeError(`not a whole number of working days: ${String(n)}`);
  checkDate(on);
  const step = n < 0 ? -1 : 1;
  let day = on;
  for (let left = Math.abs(n); left > 0;) {
    day = addDays(day, step);
    if (isWorkingDay(day)) left -= 1;
  }
  return day;
}

/** `on` when it is a working day, else the first working day after it. */
export function firstWorkingDayFrom(on: string): string {
  let day = on;
  while (!isWorkingDay(day)) day = addDays(day, 1);
  return day;
}

/**
 * The working days after `from` up to and including `to` (`from` itself not counted): how many working
 * days of notice a debit on `to` gives from a notice on `from`; minus the same count when `to` is before
 * `from`. Antisymmetric and additive: a difference of positions in the sequence of working days.
 */
export function workingDaysBetween(from: string, to: string): number {
  checkDate(from);
  checkDate(to);
  if (to < from) return 0 - workingDaysBetween(to, from); // never -0
  let count = 0;
  for (let day = addDays(from, 1); day <= to; day = addDays(day, 1)) if (isWorkingDay(day)) count += 1;
  return count;
}
