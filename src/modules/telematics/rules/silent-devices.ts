/**
 * Devices that go silent. Pure: `now` is a parameter.
 *
 * A bound device is silent from its last position, or from its binding if it sent none since (a device
 * just plugged in has time to report). It goes offline once silent for the product's
 * `device_offline.after_hours` (DEVICE_OFFLINE_AFTER_SECONDS without that rule), and online again when it
 * reports. While offline under the rule, each whole Europe/London day after the day of its last data and
 * `grace_days` more gets an estimated journey, once the day has ended.
 */
import { addDays, londonDate } from '../../../platform/london-calendar.ts';

/** A bound device without the product rule is offline once it has sent nothing for this long. */
export const DEVICE_OFFLINE_AFTER_SECONDS = 24 * 3600;
/** Days estimated for one device in one pass: a long silence is caught up over a few passes. */
export const MAX_ESTIMATED_DAYS_PER_PASS = 62;

export type DeviceStatus = 'online' | 'offline' | 'unbound';

/** What the view shows: `unbound` without an open binding, else whether the worker found it offline. */
export function deviceStatus(openBoundAt: Date | undefined, offlineSince: Date | null): DeviceStatus {
  if (openBoundAt === undefined) return 'unbound';
  return offlineSince === null ? 'online' : 'offline';
}

/**
 * Whether positions just stored can end an offline device's silence under the rule it was found offline
 * by: the time since its open binding or its last position, whichever is later, is now shorter than
 * `afterSeconds` (unknown: it may). Without an open binding it cannot come online. The transaction that
 * brings a device online applies the product's rule as in force then, which a new product version may
 * have changed; a device passed over here is brought online by the minute's check.
 */
export function mayEndSilence(input: {
  readonly openBoundAt: Date | undefined;
  readonly lastSeenAt: Date;
  readonly afterSeconds: number | null;
  readonly now: Date;
}): boolean {
  if (input.openBoundAt === undefined) return false;
  if (input.afterSeconds === null) return true;
  const silentSinceMs = Math.max(input.openBoundAt.getTime(), input.lastSeenAt.getTime());
  return input.now.getTime() - silentSinceMs < input.afterSeconds * 1000;
}

export interface OfflineRule {
  readonly afterHours: number;
  readonly graceDays: number;
}

export interface SilentDevicePlan {
  /** A change of status to record (with its event), or null. */
  readonly transition: 'offline' | 'online' | null;
  /** London days (`YYYY-MM-DD`) to estimate now, oldest first. */
  readonly estimateDates: readonly string[];
}

export function planSilentDevice(input: {
  readonly boundAt: Date;
  readonly lastSeenAt: Date | null;
  readonly offlineSince: Date | null;
  /** The last London day estimated already, or null. */
  readonly estimatedThrough: string | null;
  readonly rule: OfflineRule | null;
  readonly now: Date;
}): SilentDevicePlan {
  const silentSince = new Date(Math.max(input.boundAt.getTime(), input.lastSeenAt?.getTime() ?? 0));
  const afterMs = (input.rule === null ? DEVICE_OFFLINE_AFTER_SECONDS : input.rule.afterHours * 3600) * 1000;
  const silent = input.now.getTime() - silentSince.getTime() >= afterMs;
  const transition = silent
    ? input.offlineSince === null
      ? 'offline'
      : null
    : input.offlineSince === null
      ? null
      : 'online';
  if (!silent || input.rule === null) return { transition, estimateDates: [] };

  const first = addDays(londonDate(silentSince), 1 + input.rule.graceDays);
  const from =
    input.estimatedThrough !== null && input.estimatedThrough >= first
      ? addDays(input.estimatedThrough, 1)
      : first;
  const lastEnded = addDays(londonDate(input.now), -1);
  const estimateDates: string[] = [];
  for (let date = from; date <= lastEnded; date = addDays(date, 1)) {
    if (estimateDates.length === MAX_ESTIMATED_DAYS_PER_PASS) break;
    estimateDates.push(date);
  }
  return { transition, estimateDates };
}
