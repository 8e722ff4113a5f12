import type { Clock } from '../../../platform/clock.ts';
import { noSuch } from './errors.ts';
import type { ChargeObject, CustomerObject, PaymentIntentObject } from './objects.ts';
import type { SandboxObject, SandboxStore } from './store.ts';

/** Who is calling: a secret key (full access), or a browser holding only a client secret. */
export type Caller = { readonly kind: 'secret' } | { readonly kind: 'publishable' };

/** The request an event came from, as Stripe reports it in `event.request`. */
export interface RequestInfo {
  /** Null for what the sandbox does on its own (a Bacs payment settling, a test clock advancing). */
  readonly id: string | null;
  readonly idempotencyKey: string | null;
}

export type Emit = (type: string, object: SandboxObject, request: RequestInfo) => Promise<void>;

/** What every use case of the engine works with: the store, the clock, events, and per-object locks. */
export interface EngineContext {
  readonly store: SandboxStore;
  readonly clock: Clock;
  readonly emit: Emit;
  /** Runs `work` after every earlier call with the same key has finished: read-modify-write per object. */
  withLock<T>(key: string, work: () => Promise<T>): Promise<T>;
  /** Now in Unix seconds, as Stripe's `created`. */
  now(): number;
  /** The object of this type, or Stripe's `No such …` (404 for the path's resource, 400 naming `param`). */
  load<T extends SandboxObject>(id: string, object: T['object'], kind: string, param?: string): Promise<T>;
  loadCustomer(id: string, param?: string): Promise<CustomerObject>;
  loadIntent(id: string, param?: string): Promise<PaymentIntentObject>;
  loadCharge(id: string): Promise<ChargeObject>;
}

function createLocks() {
  const tails = new Map<string, Promise<void>>();
  return async <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const previous = tails.get(key) ?? Promise.resolve();
    let release = (): void => undefined;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => current);
    tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

export function createEngineContext(deps: { store: SandboxStore; clock: Clock; emit: Emit }): EngineContext {
  const { store, clock } = deps;
  async function load<T extends SandboxObject>(
    id: string,
    object: T['object'],
    kind: string,
    param?: string,
  ): Promise<T> {
    const found = await store.get(id);
    if (found?.object !== object) throw noSuch(kind, id, param);
    return found as T;
  }
  return {
    ...deps,
    withLock: createLocks(),
    now: () => Math.floor(clock.now().getTime() / 1000),
    load,
    loadCustomer: (id, param) => load<CustomerObject>(id, 'customer', 'customer', param),
    loadIntent: (id, param) => load<PaymentIntentObject>(id, 'payment_intent', 'payment_intent', param),
    loadCharge: (id) => load<ChargeObject>(id, 'charge', 'charge', 'charge'),
  };
}

/** An amount as Stripe writes it in its messages: `0.30 GBP`. */
export const money = (amount: number, currency: string): string =>
  `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;
