import { addDays, londonDate, londonMidnight } from '../../../platform/london-calendar.ts';

/** Days after the first failure on which a failed statement payment is tried again (DESIGN: 1, 3, 5, 7). */
export const DEFAULT_RETRY_DAYS: readonly number[] = [1, 3, 5, 7];

/**
 * Declines that another try with the same card cannot fix: they wait for a new card
 * (ADD_NEW_PAYMENT_METHOD), which retries what is outstanding at once.
 */
const HARD_DECLINES = new Set([
  'expired_card',
  'incorrect_number',
  'invalid_account',
  'lost_card',
  'stolen_card',
  'pickup_card',
  'restricted_card',
  'card_not_supported',
  'currency_not_supported',
  'do_not_honor',
  'authentication_required',
]);

export function isHardDecline(code: string | null, declineCode: string | null): boolean {
  return (
    (declineCode !== null && HARD_DECLINES.has(declineCode)) || (code !== null && HARD_DECLINES.has(code))
  );
}

/**
 * When to try again after failed attempt number `attempt` (1-based) of a payment that first failed at
 * `firstFailedAt`: the next scheduled day, or null when the schedule is spent or the decline is hard.
 */
export function nextAttemptAt(
  firstFailedAt: Date,
  attempt: number,
  hard: boolean,
  retryDays: readonly number[] = DEFAULT_RETRY_DAYS,
): Date | null {
  if (hard) return null;
  const days = retryDays[attempt - 1];
  if (days === undefined) return null;
  // NOTE: London calendar days, at the first failure's time into its day: 24-hour steps across a clock
  // change land an hour off, on the day before or after for a failure near midnight. A time past the
  // end of a shorter day (the spring change) is the last second of that day.
  const firstOn = londonDate(firstFailedAt);
  const sinceMidnightMs = firstFailedAt.getTime() - londonMidnight(firstOn).getTime();
  const dayEnd = londonMidnight(addDays(firstOn, days + 1)).getTime() - 1000;
  return new Date(Math.min(londonMidnight(addDays(firstOn, days)).getTime() + sinceMidnightMs, dayEnd));
}
