import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { hashToken } from '../../platform/crypto.ts';
import { AppError } from '../../platform/errors.ts';
import { clearThrottle, countFailure, findThrottles, setBlockedUntil } from './auth-repository.ts';
import {
  ADDRESS_THROTTLE,
  addressBlock,
  delayAfter,
  secondsBlocked,
  type ThrottlePolicy,
} from './rules/throttle.ts';

/** One counter of failures: a key (hashed, so no login or address is stored) and its policy. */
export interface Throttle {
  readonly key: Buffer;
  readonly policy: ThrottlePolicy;
}

/** A throttle keyed by its parts (a kind, a tenant, a login or an address). */
export const throttleOf = (policy: ThrottlePolicy, ...parts: string[]): Throttle => ({
  key: hashToken(parts.join('\u0000')),
  policy,
});

/**
 * The address throttle of `scope` (a kind, a tenant) for a client address, counted by the block one
 * client holds (`addressBlock`: an IPv6 address by its /64), so that a client cannot step past it by
 * changing addresses within its own block.
 */
export const addressThrottleOf = (scope: readonly string[], address: string): Throttle =>
  throttleOf(ADDRESS_THROTTLE, ...scope, addressBlock(address));

/**
 * Failure throttling against the database, shared by every sign-in (policyholders and staff): the
 * counts are atomic there, so every process sees the same delays.
 */
export function createThrottles(db: Executor, clock: Clock) {
  return {
    /**
     * 429 with Retry-After when any of the throttles is in its delay. Answers whether the first has
     * failures on record: a success then clears them (else there is nothing to write).
     */
    ensureNotThrottled: async (...throttles: Throttle[]): Promise<boolean> => {
      const now = clock.now();
      const states = await findThrottles(
        db,
        throttles.map((t) => t.key),
      );
      const wait = Math.max(0, ...states.map((state) => secondsBlocked(state, now)));
      if (wait > 0)
        throw new AppError('RATE_LIMITED', `Too many attempts: try again in ${wait} s`, {
          retryAfterSeconds: wait,
        });
      return states[0] !== undefined;
    },

    countAgainst: async (...throttles: Throttle[]): Promise<void> => {
      const now = clock.now();
      for (const t of throttles) {
        const failures = await countFailure(db, t.key, now, t.policy.forgetAfterSeconds);
        const delaySeconds = delayAfter(t.policy, failures);
        if (delaySeconds > 0) await setBlockedUntil(db, t.key, new Date(now.getTime() + delaySeconds * 1000));
      }
    },

    clear: (throttle: Throttle): Promise<void> => clearThrottle(db, throttle.key),
  };
}

export type Throttles = ReturnType<typeof createThrottles>;
