/** When a failed webhook delivery is tried again, and when a failing endpoint is switched off. Pure. */

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * Delays after the 1st, 2nd, … failed attempt: 8 attempts over about 27.6 hours, so a receiver that is
 * down overnight still gets the event. Operators may replace it (`WEBHOOKS_RETRY_SCHEDULE`).
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  5 * SECOND_MS,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
  5 * HOUR_MS,
  10 * HOUR_MS,
  10 * HOUR_MS,
];

/** An endpoint whose every attempt has failed for this long is disabled and its company emailed. */
export const DISABLE_AFTER_FAILING_MS = 72 * HOUR_MS;

/**
 * The time of the next attempt after attempt number `attemptsMade` (1-based) failed at `failedAt`,
 * or null when the schedule is used up and the delivery has failed for good.
 */
export function nextAttemptAt(
  attemptsMade: number,
  failedAt: Date,
  scheduleMs: readonly number[],
): Date | null {
  const delayMs = scheduleMs[attemptsMade - 1];
  return delayMs === undefined ? null : new Date(failedAt.getTime() + delayMs);
}

/** Whether an endpoint failing since `failingSince` (null: its last attempt succeeded) is to be disabled at `now`. */
export function shouldDisableEndpoint(failingSince: Date | null, now: Date): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= DISABLE_AFTER_FAILING_MS;
}

/** A 2xx answer is a delivery; anything else, redirects included (they are not followed), is a failure. */
export function isDelivered(statusCode: number): boolean {
  return statusCode >= 200 && statusCode <= 299;
}
