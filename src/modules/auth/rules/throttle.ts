/*
 * Failure throttling as a pure rule: a number of free failures, then a delay that doubles with each
 * further failure, capped. The count is kept atomically in the database (auth_throttles), which also
 * forgets failures older than `forgetAfterSeconds`; a success clears it.
 */

export interface ThrottlePolicy {
  /** Failures allowed without delay: the last of them starts the first delay. */
  readonly freeFailures: number;
  /** Delay after the `freeFailures`-th failure; doubles with each further failure. */
  readonly firstDelaySeconds: number;
  readonly maxDelaySeconds: number;
  /** Failures older than this (counted from the last one) are forgotten. */
  readonly forgetAfterSeconds: number;
}

export interface ThrottleState {
  readonly failures: number;
  readonly lastFailureAt: Date;
  readonly blockedUntil: Date | null;
}

/** Per account (its username and email alike; a login naming no account as typed, so it behaves alike). */
export const ACCOUNT_THROTTLE: ThrottlePolicy = {
  freeFailures: 5,
  firstDelaySeconds: 1,
  maxDelaySeconds: 15 * 60,
  forgetAfterSeconds: 24 * 3600,
};

/** Per client address: more free failures, since many people can share one address (CGNAT, offices). */
export const ADDRESS_THROTTLE: ThrottlePolicy = {
  freeFailures: 20,
  firstDelaySeconds: 1,
  maxDelaySeconds: 15 * 60,
  forgetAfterSeconds: 3600,
};

/**
 * What an address throttle counts a client address as: an IPv4 address whole, an IPv6 address by its
 * /64 (`2001:db8:1:2::/64`), and an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) as the IPv4 address.
 * NOTE: one subscriber, home or cloud server is given a whole /64 (often a /56 or /48), so counting
 * IPv6 addresses one by one let a single client take 2^64 fresh allowances. Text that is no IPv6
 * address is counted as it is.
 */
export function addressBlock(address: string): string {
  const text = address.trim().toLowerCase();
  if (!text.includes(':')) return text;
  let canonical: string;
  try {
    // The WHATWG URL parser writes an IPv6 address one way: hex groups, the longest zero run as `::`.
    const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
    canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return text;
  }
  const [head = '', tail] = canonical.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill('0');
  const groups = [...headGroups, ...zeros, ...tailGroups].map((g) => parseInt(g, 16));
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff)
    return [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff].join('.');
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** Emails a login may trigger (reset codes, new temporary passwords): 5, then doubling gaps. */
export const EMAIL_THROTTLE: ThrottlePolicy = {
  freeFailures: 5,
  firstDelaySeconds: 60,
  maxDelaySeconds: 3600,
  forgetAfterSeconds: 24 * 3600,
};

/** Seconds left to wait at `now`, or 0 when an attempt may go ahead. */
export function secondsBlocked(state: ThrottleState | undefined, now: Date): number {
  if (state?.blockedUntil == null) return 0;
  return Math.max(0, Math.ceil((state.blockedUntil.getTime() - now.getTime()) / 1000));
}

/**
 * The delay after the `failures`-th failure: none before the `freeFailures`-th, then 1×, 2×, 4×… the
 * first delay, capped. With 5 free failures and 1 s: attempts 1–5 go ahead, the 6th waits 1 s, then 2 s…
 */
export function delayAfter(policy: ThrottlePolicy, failures: number): number {
  const beyond = failures - policy.freeFailures;
  if (beyond < 0) return 0;
  // 2 ** 30 is far past any cap, and keeps the arithmetic in safe integers.
  return Math.min(policy.maxDelaySeconds, policy.firstDelaySeconds * 2 ** Math.min(beyond, 30));
}
