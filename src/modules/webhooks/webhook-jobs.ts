/**
 * The webhook worker's loop. It polls instead of running as pg-boss jobs because its work is found
 * in tables (events queued by a trigger, deliveries due by `next_attempt_at` on the service clock),
 * not enqueued by callers: no module has to know webhooks exist, and a retry is one column, not a job.
 * Several workers may run it at once; SKIP LOCKED and delivery leases keep them apart.
 */

/** How long a pass, once its requests are aborted, may take to record them before shutdown goes on. */
const STOP_GRACE_MS = 2_000;

export interface Poller {
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

  const loop = (): void => {
    timer = undefined;
    pass = options
      .run(abort.signal)
      .catch(options.onError)
      .finally(() => {
        pass = undefined;
        if (!stopped) timer = setTimeout(loop, options.intervalMs);
      });
  };
  loop();

  return {
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
