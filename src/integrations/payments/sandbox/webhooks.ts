import { createHmac } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import type { EventObject } from './objects.ts';

/** Where the sandbox posts its events, and the `whsec_…` secret both sides share. */
export interface SandboxWebhookTarget {
  /** A function when the URL is known only once the service listens (port 0 in tests). */
  readonly url: string | (() => string | undefined);
  readonly secret: string;
}

/**
 * The `Stripe-Signature` header exactly as Stripe makes it: `t=<unix seconds>,v1=<hex HMAC-SHA256>`
 * over `"<t>.<payload>"`, keyed with the whole secret string.
 */
export function stripeSignatureHeader(payload: string, secret: string, timestampSeconds: number): string {
  const signature = createHmac('sha256', secret)
    .update(`${timestampSeconds}.${payload}`, 'utf8')
    .digest('hex');
  return `t=${timestampSeconds},v1=${signature}`;
}

export interface WebhookDelivererOptions {
  readonly target: SandboxWebhookTarget | undefined;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  /** Waits before the 2nd, 3rd, … attempt; deliveries stop after the last. */
  readonly retryDelaysMs?: readonly number[];
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

export interface WebhookDeliverer {
  /** Queues a delivery and returns at once: the API answer never waits for webhooks. */
  enqueue(event: EventObject): void;
  /** Resolves when nothing is queued, in flight or waiting for a retry. */
  idle(): Promise<void>;
  /** Cancels retries and in-flight deliveries. */
  close(): Promise<void>;
}

export function createWebhookDeliverer(options: WebhookDelivererOptions): WebhookDeliverer {
  const { target, clock, log, retryDelaysMs = [1_000, 5_000, 25_000], timeoutMs = 10_000 } = options;
  const doFetch = options.fetch ?? fetch;
  const timers = new Set<NodeJS.Timeout>();
  const controllers = new Set<AbortController>();
  let pending = 0;
  let closed = false;
  // Read through a function: `close()` flips it while a delivery awaits.
  const isClosed = (): boolean => closed;
  let waiters: (() => void)[] = [];

  const settle = (): void => {
    pending -= 1;
    if (pending === 0) {
      const done = waiters;
      waiters = [];
      for (const resolve of done) resolve();
    }
  };

  const url = (): string | undefined => (typeof target?.url === 'function' ? target.url() : target?.url);

  /** One attempt; the failure reason, or undefined when the endpoint answered 2xx. */
  async function post(event: EventObject, destination: string, secret: string): Promise<string | undefined> {
    const payload = JSON.stringify(event, null, 2);
    const controller = new AbortController();
    controllers.add(controller);
    const timer = setTimeout(() => {
      controller.abort();
    }, timeoutMs);
    try {
      const response = await doFetch(destination, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          'stripe-signature': stripeSignatureHeader(
            payload,
            secret,
            Math.floor(clock.now().getTime() / 1000),
          ),
        },
        body: payload,
        signal: controller.signal,
      });
      await response.body?.cancel();
      return response.status >= 200 && response.status < 300 ? undefined : `answered ${response.status}`;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    } finally {
      clearTimeout(timer);
      controllers.delete(controller);
    }
  }

  async function deliver(event: EventObject, attempt: number): Promise<void> {
    if (isClosed() || target === undefined) {
      settle();
      return;
    }
    const destination = url();
    const failure =
      destination === undefined ? 'no webhook URL yet' : await post(event, destination, target.secret);
    const delay = retryDelaysMs[attempt];
    if (failure === undefined || isClosed() || delay === undefined) {
      if (failure !== undefined && delay === undefined) {
        log.warn(
          { eventId: event.id, type: event.type, attempts: attempt + 1, reason: failure },
          'stripe sandbox: webhook delivery abandoned',
        );
      }
      settle();
      return;
    }
    log.debug(
      { eventId: event.id, reason: failure, retryInMs: delay },
      'stripe sandbox: webhook delivery failed; will retry',
    );
    const timer = setTimeout(() => {
      timers.delete(timer);
      void deliver(event, attempt + 1);
    }, delay);
    // A pending retry must not keep the process alive on its own.
    timer.unref();
    timers.add(timer);
  }

  const idle = (): Promise<void> =>
    pending === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));

  return {
    enqueue(event) {
      if (target === undefined || closed) return;
      pending += 1;
      setImmediate(() => void deliver(event, 0));
    },
    idle,
    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      const waiting = timers.size;
      timers.clear();
      for (let i = 0; i < waiting; i++) settle();
      for (const controller of controllers) controller.abort();
      await idle();
    },
  };
}
