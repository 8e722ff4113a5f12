// en-GB formats for money, dates and distances: one place, so every page reads the same.
const money = new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP' });
const rate = new Intl.NumberFormat('en-GB', {
  style: 'currency',
  currency: 'GBP',
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});
const date = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone: 'Europe/London' });
const dateTime = new Intl.DateTimeFormat('en-GB', {
  dateStyle: 'medium',
  timeStyle: 'short',
  timeZone: 'Europe/London',
});
const number = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 1 });

/** Pounds (the API's major units) as £1,234.50. */
export const formatMoney = (pounds: number): string => money.format(pounds);
/** A rate per unit, e.g. £0.045 a mile. */
export const formatRate = (pounds: number, unit: 'mile' | 'km'): string =>
  `${rate.format(pounds)} a ${unit === 'km' ? 'kilometre' : 'mile'}`;
export const formatDistance = (value: number, unit: 'mile' | 'km'): string =>
  `${number.format(value)} ${unit === 'km' ? (value === 1 ? 'kilometre' : 'kilometres') : value === 1 ? 'mile' : 'miles'}`;

const asDate = (value: number | string): Date =>
  typeof value === 'number' ? new Date(value * 1000) : new Date(value);
/** UNIX seconds or an ISO string, as 1 June 2025 (London). */
export const formatDate = (value: number | string): string => date.format(asDate(value));
export const formatDateTime = (value: number | string): string => dateTime.format(asDate(value));

/** A wait in seconds as words: "45 seconds", "2 minutes 5 seconds". */
export function formatWait(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  const minutes = Math.floor(s / 60);
  const rest = s % 60;
  const part = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (minutes === 0) return part(rest, 'second');
  return rest === 0 ? part(minutes, 'minute') : `${part(minutes, 'minute')} ${part(rest, 'second')}`;
}
