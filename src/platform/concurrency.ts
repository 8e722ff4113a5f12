import { setImmediate } from 'node:timers/promises';

/** Runs `work` over `items` with at most `limit` in flight; results keep the items' order. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  await forEachConcurrent(items.entries(), Math.min(limit, items.length), async ([index, item]) => {
    results[index] = await work(item);
  });
  return results;
}

/**
 * Runs `work` over what `source` yields with at most `limit` in flight, each lane asking for the next
 * item when it is free (an async generator serves its callers one at a time), so a source that reads
 * pages as they are needed is never held whole.
 */
export async function forEachConcurrent<T>(
  source: Iterable<T> | AsyncIterable<T>,
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const items = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
  const lane = async (): Promise<void> => {
    for (let next = await items.next(); next.done !== true; next = await items.next()) await work(next.value);
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, lane));
}

/** Runs at most `limit` of the calls given to it at once; the others wait their turn, in order. */
export function createLimiter(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (work) => {
    // A finished call hands its slot straight to the next waiting one, so `active` counts slots in use.
    if (active < limit) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next === undefined) active--;
      else next();
    }
  };
}

/**
 * Turns of the event loop for a loop that makes a long run of output without waiting on I/O (a report
 * writing a batch's rows into a stream). Awaiting promises and writing to a stream that has room never
 * lets the event loop poll, so until such a loop ends or blocks, socket reads wait: the replies that
 * move the next batch's query along (its transaction's statements one round trip each) and every other
 * request the process serves. Call `due()` in the loop and, when it says so, await `take()`.
 */
export interface EventLoopTurns {
  /** True once `everyMs` of the loop's own time have passed since it last gave a turn. */
  due(): boolean;
  /** Gives the event loop one turn (timers, I/O, then this), and starts the next interval after it. */
  take(): Promise<void>;
}

export function eventLoopTurns(everyMs: number): EventLoopTurns {
  let since = performance.now();
  return {
    due: () => performance.now() - since >= everyMs,
    async take() {
      await setImmediate();
      since = performance.now();
    },
  };
}
