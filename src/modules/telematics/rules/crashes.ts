/** Which policy a device's crash belongs to: pure, the time passed in. */
import { CLOCK_SKEW_ALLOWANCE_SECONDS } from './positions.ts';

export interface CrashBinding {
  readonly policyId: string;
  readonly policyReference: string;
  readonly boundAt: Date;
  readonly unboundAt: Date | null;
}

export type CrashPlacement =
  | { readonly ok: true; readonly policyId: string; readonly policyReference: string }
  | { readonly ok: false; readonly reason: 'in_future' | 'outside_binding'; readonly message: string };

/**
 * The binding in force at the crash's instant (bound at or before it, not yet unbound): a crash belongs
 * to the policy the device was fitted to then. A time beyond the device clock's allowed lead on `now`
 * is refused, as a position's is.
 */
export function placeCrash(bindings: readonly CrashBinding[], at: Date, now: Date): CrashPlacement {
  if (at.getTime() > now.getTime() + CLOCK_SKEW_ALLOWANCE_SECONDS * 1000)
    return { ok: false, reason: 'in_future', message: 'is in the future' };
  const binding = bindings.find(
    (b) =>
      b.boundAt.getTime() <= at.getTime() && (b.unboundAt === null || at.getTime() < b.unboundAt.getTime()),
  );
  if (binding === undefined)
    return {
      ok: false,
      reason: 'outside_binding',
      message: 'is a time the device was bound to no policy',
    };
  return { ok: true, policyId: binding.policyId, policyReference: binding.policyReference };
}
