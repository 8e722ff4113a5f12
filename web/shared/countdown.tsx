import { useEffect, useState } from 'react';
import { formatWait } from './format.ts';

/** A wait before trying again, after the service throttled an attempt (429 with Retry-After). */
export interface RetryWait {
  /** True until the wait is over. */
  readonly waiting: boolean;
  /** Seconds left (zero or less once over); undefined when there has been no wait. */
  readonly secondsLeft: number | undefined;
  /** Starts a wait of `seconds` from now. */
  readonly start: (seconds: number) => void;
}

/** The wait, and a clock that ticks each second while one has been started (for the countdown). */
export function useRetryWait(): RetryWait {
  const [waitUntil, setWaitUntil] = useState<number | undefined>();
  const [clock, setClock] = useState(Date.now());
  useEffect(() => {
    if (waitUntil === undefined) return;
    const timer = setInterval(() => {
      setClock(Date.now());
    }, 1000);
    return () => {
      clearInterval(timer);
    };
  }, [waitUntil]);
  return {
    waiting: waitUntil !== undefined && waitUntil > clock,
    secondsLeft: waitUntil === undefined ? undefined : (waitUntil - clock) / 1000,
    start(seconds) {
      setClock(Date.now());
      setWaitUntil(Date.now() + seconds * 1000);
    },
  };
}

/** When the form can be tried again, once a wait has started. */
export function RetryCountdown({ wait }: { readonly wait: RetryWait }) {
  if (wait.secondsLeft === undefined) return null;
  return (
    // Not a live region: a countdown read out every second would drown everything else.
    <p className="hint" aria-live="off">
      {wait.waiting ? `You can try again in ${formatWait(wait.secondsLeft)}.` : 'You can try again now.'}
    </p>
  );
}
