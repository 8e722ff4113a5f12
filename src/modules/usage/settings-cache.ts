import { BoundedCache } from '../../platform/bounded-cache.ts';

interface Entry<V> {
  readonly value: V;
  readonly readAtMs: number;
  refreshing: boolean;
}

/**
 * Values read from the database and trusted for `ttlMs`, for the ingestion path: a key seen before is
 * answered from memory, and once its value is older than `ttlMs` the next caller still gets it while one
 * read refreshes it in the background, so no request waits on a refresh (and the refreshes of many keys
 * read at the same moment do not all land on the requests of one later moment). Callers that must not
 * act on an old value ask for a fresh one. Concurrent first reads of a key share one read.
 */
export function createSettingsCache<V>(options: {
  capacity: number;
  ttlMs: number;
  /**
   * Background refreshes at once, at most: when traffic resumes after a pause every key is old at
   * the same moment, and unbounded refreshes would queue before the requests' own statements for the
   * pool's connections. Beyond it an old value is answered and a later caller refreshes it.
   */
  maxRefreshes: number;
  /** A background refresh failed (the old value is kept and the next caller tries again). */
  onRefreshError: (error: unknown) => void;
}) {
  const entries = new BoundedCache<string, Entry<V>>(options.capacity);
  const reads = new Map<string, Promise<V>>();
  let refreshes = 0;

  function read(key: string, load: () => Promise<V>): Promise<V> {
    const pending = reads.get(key);
    if (pending !== undefined) return pending;
    const started = Date.now();
    const promise: Promise<V> = load()
      .then((value) => {
        // Not when the key was forgotten meanwhile: the value may predate the change that forgot it.
        if (reads.get(key) === promise) entries.set(key, { value, readAtMs: started, refreshing: false });
        return value;
      })
      .finally(() => {
        if (reads.get(key) === promise) reads.delete(key);
      });
    reads.set(key, promise);
    return promise;
  }

  return {
    /** The value of `key`: from memory (refreshed behind when old), or read now (first time, or `fresh`). */
    async get(key: string, load: () => Promise<V>, fresh = false): Promise<V> {
      const entry = fresh ? undefined : entries.get(key);
      if (entry === undefined) return read(key, load);
      if (
        !entry.refreshing &&
        refreshes < options.maxRefreshes &&
        entry.readAtMs + options.ttlMs <= Date.now()
      ) {
        entry.refreshing = true;
        refreshes++;
        read(key, load)
          .catch((error: unknown) => {
            entry.refreshing = false;
            options.onRefreshError(error);
          })
          .finally(() => {
            refreshes--;
          });
      }
      return entry.value;
    },

    /** Forgets `key` (a change this process made): the next caller reads it. */
    delete(key: string): void {
      entries.delete(key);
      reads.delete(key);
    },
  };
}
