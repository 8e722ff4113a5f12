/** The only source of "now" for services; tests pass a fixed clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until moved: for tests and scenario runs. */
export function fixedClock(
  start: Date | string,
): Clock & { set(at: Date | string): void; advance(ms: number): void } {
  let current = new Date(start);
  return {
    now: () => new Date(current),
    set: (at) => {
      current = new Date(at);
    },
    advance: (ms) => {
      current = new Date(current.getTime() + ms);
    },
  };
}

/**
 * A clock that runs at the real pace from `start`: time passes (leases expire, retries fall due) but
 * on a calendar of the caller's choosing, such as inside a fixed example policy's term.
 */
export function shiftedClock(start: Date | string): Clock {
  const offsetMs = new Date(start).getTime() - Date.now();
  return { now: () => new Date(Date.now() + offsetMs) };
}

export const unixSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);
export const fromUnixSeconds = (seconds: number): Date => new Date(seconds * 1000);
