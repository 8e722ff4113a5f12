// en-GB formats for money, dates and distances: one place, so every page reads the same.
/*
 * Written without Intl where they can be: a page's first use of Intl loads ICU's data, which took 30–90
 * ms of the main thread on a first visit (a new renderer process) in Chromium on the 2-core machine, and
 * the policy page spent it before it could show the policy. The text is Intl's en-GB, character for
 * character (test/web/format.test.ts checks every function against ICU over random values); a value
 * outside what is written here (a date outside 1996–2099, a number JavaScript writes with an exponent)
 * goes to Intl as before.
 */

/** Each Intl formatter made on its first use, not when this module loads (see above). */
const once = <T>(make: () => T): (() => T) => {
  let made: T | undefined;
  return () => (made ??= make());
};
const LONDON = 'Europe/London';
const intl = {
  money: once(() => new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP' })),
  rate: once(
    () =>
      new Intl.NumberFormat('en-GB', {
        style: 'currency',
        currency: 'GBP',
        minimumFractionDigits: 2,
        maximumFractionDigits: 4,
      }),
  ),
  number: once(() => new Intl.NumberFormat('en-GB', { maximumFractionDigits: 1 })),
  // NOTE: one date style for the whole app, "28 November 2026": dates alone, with a weekday, with a time
  // and times alone are all written by the helpers below, so a card never mixes "28 Nov" with "28 November".
  date: once(
    () =>
      new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: LONDON }),
  ),
  day: once(
    () =>
      new Intl.DateTimeFormat('en-GB', {
        weekday: 'long',
        day: 'numeric',
        month: 'long',
        year: 'numeric',
        timeZone: LONDON,
      }),
  ),
  time: once(
    () =>
      new Intl.DateTimeFormat('en-GB', {
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
        timeZone: LONDON,
      }),
  ),
};

/**
 * Loads the engine's date and number formatting data (ICU) by making and using one throwaway formatter
 * of each kind, so that a later page's own Intl formatters (charts, months) cost a fraction of a
 * millisecond instead of 15–90 ms; when the browser is next idle, so that it never stands between a
 * render and its paint (Preact's useEffect can run before the frame that paints: a 188-ms load of it
 * did, in a traced cold load). Returns a function that cancels it.
 */
export function loadFormattingDataWhenIdle(): () => void {
  const load = () => {
    new Intl.DateTimeFormat('en-GB', { timeZone: LONDON }).format(0);
    new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP' }).format(0);
  };
  // Typed here rather than from the DOM library: the tests compile this file without it.
  const page = globalThis as {
    requestIdleCallback?: (callback: () => void, options: { timeout: number }) => number;
    cancelIdleCallback?: (handle: number) => void;
  };
  // Safari has no idle callbacks: a timer well after the first paint instead.
  if (page.requestIdleCallback === undefined || page.cancelIdleCallback === undefined) {
    const timer = setTimeout(load, 500);
    return () => {
      clearTimeout(timer);
    };
  }
  const idle = page.requestIdleCallback(load, { timeout: 2000 });
  return () => {
    page.cancelIdleCallback?.(idle);
  };
}

/**
 * `value` in en-GB digits (1,234.5): rounded half away from zero to at most `maxFraction` decimals, as
 * Intl rounds the shortest decimal that reads back as the number, with at least `minFraction`; the sign
 * apart. Undefined where JavaScript writes the number with an exponent (or not at all), left to Intl.
 */
function digits(value: number, minFraction: number, maxFraction: number): string | undefined {
  const shortest = String(Math.abs(value));
  const match = /^(\d+)(?:\.(\d+))?$/.exec(shortest);
  if (match === null) return undefined;
  const fraction = match[2] ?? '';
  let scaled = BigInt(`${match[1] ?? '0'}${fraction.slice(0, maxFraction).padEnd(maxFraction, '0')}`);
  if ((fraction[maxFraction] ?? '0') >= '5') scaled += 1n;
  const text = scaled.toString().padStart(maxFraction + 1, '0');
  const whole = text.slice(0, text.length - maxFraction);
  let decimals = text.slice(text.length - maxFraction);
  while (decimals.length > minFraction && decimals.endsWith('0')) decimals = decimals.slice(0, -1);
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  return decimals === '' ? grouped : `${grouped}.${decimals}`;
}

/** Intl's sign: a minus for any negative value, zero included (-0, or one that rounds to 0). */
const sign = (value: number): string => (value < 0 || Object.is(value, -0) ? '-' : '');

/** Pounds (the API's major units) as £1,234.50. */
export const formatMoney = (pounds: number): string => {
  const text = digits(pounds, 2, 2);
  return text === undefined ? intl.money().format(pounds) : `${sign(pounds)}£${text}`;
};
/** A rate per unit, e.g. £0.045 a mile. */
export const formatRate = (pounds: number, unit: 'mile' | 'km'): string => {
  const text = digits(pounds, 2, 4);
  const rate = text === undefined ? intl.rate().format(pounds) : `${sign(pounds)}£${text}`;
  return `${rate} a ${unit === 'km' ? 'kilometre' : 'mile'}`;
};
export const formatDistance = (value: number, unit: 'mile' | 'km'): string => {
  const text = digits(value, 0, 1);
  const shown = text === undefined ? intl.number().format(value) : `${sign(value)}${text}`;
  return `${shown} ${unit === 'km' ? (value === 1 ? 'kilometre' : 'kilometres') : value === 1 ? 'mile' : 'miles'}`;
};

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** 01:00 UTC on the last Sunday of `month` (0-based) of `year`: when the UK's clocks change. */
function lastSundayOneAm(year: number, month: number): number {
  const lastDay = Date.UTC(year, month + 1, 0, 1);
  return lastDay - new Date(lastDay).getUTCDay() * DAY_MS;
}
/**
 * The instant's wall clock in London, as a Date whose UTC fields read it; undefined outside 1996–2099.
 * British Summer Time (UTC+1) runs from 01:00 GMT on the last Sunday of March to 01:00 GMT on the last
 * Sunday of October: the Summer Time Order 2002, the same dates since 1996. Intl's time-zone database
 * answers for any other year.
 */
function londonWallClock(at: Date): Date | undefined {
  const ms = at.getTime();
  const year = at.getUTCFullYear();
  if (!(year >= 1996 && year <= 2099)) return undefined;
  const summer = ms >= lastSundayOneAm(year, 2) && ms < lastSundayOneAm(year, 9);
  return new Date(summer ? ms + HOUR_MS : ms);
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
const dateOf = (wall: Date): string =>
  `${String(wall.getUTCDate())} ${MONTHS[wall.getUTCMonth()] ?? ''} ${String(wall.getUTCFullYear())}`;
const twoDigits = (n: number): string => String(n).padStart(2, '0');

const asDate = (value: number | string | Date): Date =>
  value instanceof Date ? value : typeof value === 'number' ? new Date(value * 1000) : new Date(value);
/** `value` as London's wall clock reads it, written by `write`; by Intl's `fallback` outside 1996–2099. */
const inLondon = (
  value: number | string | Date,
  fallback: () => Intl.DateTimeFormat,
  write: (wall: Date) => string,
): string => {
  const at = asDate(value);
  const wall = londonWallClock(at);
  return wall === undefined ? fallback().format(at) : write(wall);
};
/** UNIX seconds, an ISO string or a date (`YYYY-MM-DD`), as the date in London: 1 June 2025. */
export const formatDate = (value: number | string | Date): string => inLondon(value, intl.date, dateOf);
/** The same with its weekday, for a day's heading: Sunday, 1 June 2025. */
export const formatDay = (value: number | string | Date): string =>
  inLondon(value, intl.day, (wall) => `${WEEKDAYS[wall.getUTCDay()] ?? ''}, ${dateOf(wall)}`);
/** The time of day in London, 24-hour: 17:05. */
export const formatTime = (value: number | string | Date): string =>
  inLondon(value, intl.time, (wall) => `${twoDigits(wall.getUTCHours())}:${twoDigits(wall.getUTCMinutes())}`);
/** An instant as its London date and time: 1 June 2025 at 17:05. */
export const formatDateTime = (value: number | string | Date): string =>
  `${formatDate(value)} at ${formatTime(value)}`;

/** A wait in seconds as words: "45 seconds", "2 minutes 5 seconds". */
export function formatWait(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  const minutes = Math.floor(s / 60);
  const rest = s % 60;
  const part = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (minutes === 0) return part(rest, 'second');
  return rest === 0 ? part(minutes, 'minute') : `${part(minutes, 'minute')} ${part(rest, 'second')}`;
}
