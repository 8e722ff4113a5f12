/**
 * A worker's loop over work found in tables rather than enqueued by callers: webhooks (events queued by a
 * trigger, deliveries due by `next_attempt_at` on the service clock) and telematics (devices with
 * positions not yet cut into trips, devices gone silent). No module has to know the loop's owner exists,
 * and a retry is one column, not a job. Several workers may run a loop at once; SKIP LOCKED and leases
 * keep them apart.
 */

/** How long a pass, once its requests are aborted, may take to record them before shutdown goes on. */
const STOP_GRACE_MS = 2_000;

export interface Poller {
  /**
   * Runs a pass now rather than at the next interval (work was just committed): at once when idle,
   * else as soon as the pass in flight ends. Wakes while a pass runs fold into that one next pass.
   */
  wake(): void;
  /** Stops polling; waits up to `timeoutMs` for the pass in flight, then aborts its requests and waits for it to record them. */
  stop(timeoutMs: number): Promise<void>;
}

export function startPolling(options: {
  intervalMs: number;
  run: (signal: AbortSignal) => Promise<void>;
  onError: (error: unknown) => void;
}): Poller {
  const abort = new AbortController();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> | undefined;
  // A wake during a pass: what woke it may have committed after the pass looked, so look again.
  let woken = false;

  const loop = (): void => {
    timer = undefined;
    woken = false;
    pass = options
      .run(abort.signal)
      .catch(options.onError)
      .finally(() => {
        pass = undefined;
        if (!stopped) timer = setTimeout(loop, woken ? 0 : options.intervalMs);
      });
  };
  loop();

  return {
    wake() {
      if (stopped) return;
      if (pass !== undefined) {
        woken = true;
        return;
      }
      if (timer !== undefined) clearTimeout(timer);
      loop();
    },
    async stop(timeoutMs) {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      const running = pass;
      if (running === undefined) return;
      let waited: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        running.then(() => true),
        new Promise<boolean>((resolve) => {
          waited = setTimeout(resolve, timeoutMs, false);
        }),
      ]);
      clearTimeout(waited);
      if (!finished) {
        // Attempts cut short are recorded as failures and retried later, by this or another worker;
        // one that cannot record in time keeps its lease and is taken up again when the lease ends.
        abort.abort();
        await Promise.race([running, new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())]);
      }
    },
  };
}
