// en-GB formats for money, dates and distances: one place, so every page reads the same.
/**
 * Each formatter made on its first use, not when this module loads: ICU's first construction is the
 * costly one and a first page uses a few of them, so a first render does not pay for the others.
 */
const once = <T>(make: () => T): (() => T) => {
  let made: T | undefined;
  return () => (made ??= make());
};
const money = once(() => new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP' }));
const rate = once(
  () =>
    new Intl.NumberFormat('en-GB', {
      style: 'currency',
      currency: 'GBP',
      minimumFractionDigits: 2,
      maximumFractionDigits: 4,
    }),
);
// NOTE: one date style for the whole app, "28 November 2026": dates alone, with a weekday, with a time and
// times alone are all written by the helpers below, so a card never mixes "28 Nov" with "28 November".
const LONDON = 'Europe/London';
const date = once(
  () =>
    new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: LONDON }),
);
const day = once(
  () =>
    new Intl.DateTimeFormat('en-GB', {
      weekday: 'long',
      day: 'numeric',
      month: 'long',
      year: 'numeric',
      timeZone: LONDON,
    }),
);
const time = once(
  () =>
    new Intl.DateTimeFormat('en-GB', {
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZone: LONDON,
    }),
);
const number = once(() => new Intl.NumberFormat('en-GB', { maximumFractionDigits: 1 }));

/**
 * Loads the engine's date and number formatting data (ICU) by making and using one throwaway formatter
 * of each kind, so that the first page's formatters cost a fraction of a millisecond instead of 15–50 ms.
 * The first construction of a date formatter is the costly one, whatever its options; the app's start
 * script runs this while the entry script downloads and the main thread would otherwise wait.
 */
export function loadFormattingData(): void {
  new Intl.DateTimeFormat('en-GB', { timeZone: LONDON }).format(0);
  new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP' }).format(0);
}

/** Pounds (the API's major units) as £1,234.50. */
export const formatMoney = (pounds: number): string => money().format(pounds);
/** A rate per unit, e.g. £0.045 a mile. */
export const formatRate = (pounds: number, unit: 'mile' | 'km'): string =>
  `${rate().format(pounds)} a ${unit === 'km' ? 'kilometre' : 'mile'}`;
export const formatDistance = (value: number, unit: 'mile' | 'km'): string =>
  `${number().format(value)} ${unit === 'km' ? (value === 1 ? 'kilometre' : 'kilometres') : value === 1 ? 'mile' : 'miles'}`;

const asDate = (value: number | string | Date): Date =>
  value instanceof Date ? value : typeof value === 'number' ? new Date(value * 1000) : new Date(value);
/** UNIX seconds, an ISO string or a date (`YYYY-MM-DD`), as the date in London: 1 June 2025. */
export const formatDate = (value: number | string | Date): string => date().format(asDate(value));
/** The same with its weekday, for a day's heading: Sunday 1 June 2025. */
export const formatDay = (value: number | string | Date): string => day().format(asDate(value));
/** The time of day in London, 24-hour: 17:05. */
export const formatTime = (value: number | string | Date): string => time().format(asDate(value));
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
