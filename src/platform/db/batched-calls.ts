/**
 * Calls of one database function that arrive while earlier ones are on their way, sent together as one
 * statement: `select f($1 … $n) as c0, f($n+1 … $2n) as c1, …`. A statement outside a transaction is a
 * transaction of its own, so the lot costs one round trip, one parse and one commit (one WAL flush)
 * where each call alone costs its own; a call sent while fewer than `maxInFlight` statements are on
 * their way leaves at once, so a quiet service waits for nothing.
 *
 * Each call is still its own unit of work: the function decides it and reports the outcome as its
 * value, and calls later in a statement see what earlier ones wrote (a volatile function's statements
 * each take a new snapshot), so two calls for one policy are decided one after the other as they would
 * be in two transactions. What changes is that they commit together. The calls of a statement are put in
 * the order of their `lockOrder` key (the row each locks first), so that two statements never lock two
 * rows in opposite orders. A statement that fails (a value one call's insert refuses, a row held by
 * other work) is sent again as one statement a call, so that each call gets its own answer or its own
 * error; a lost database fails every call of it at once.
 *
 * NOTE: a statement of several calls waits at most LOCK_WAIT_MS for any row lock (`lock_timeout`, set
 * for its transaction alone before the first call runs). A policy held by a billing chunk's transaction
 * for a few hundred milliseconds would otherwise hold up the journeys of every other policy in the
 * statement, and both statements in flight could stall the process's ingestion behind it; instead the
 * statement gives up, and its calls go again one by one, so only the held call waits, on its own
 * connection, as it would have without batching.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { auditing } from './audit-context.ts';
import { isDatabaseUnavailable, type Prepared } from './database.ts';

export interface BatchedCallsOptions {
  /** The function's name, a fixed identifier of ours (it is written into the statement). */
  readonly fn: string;
  /** How many arguments it takes. */
  readonly arity: number;
  /** Statements on their way at once; a call that finds this many waits for the next one. */
  readonly maxInFlight?: number;
  /** Calls in one statement at most. */
  readonly maxBatch?: number;
}

/**
 * Two statements on their way: one being run while the next gathers the calls that arrive meanwhile.
 * Measured with 1, 2 and 4 (`npm run bench -- journeys` and `quotes`, docs/benchmarks.md): fewer in
 * flight makes larger statements and spends less CPU a call; one alone leaves a process's calls waiting
 * on any statement that stalls on a row lock (quotes, which wait on none, take one).
 */
const STATEMENTS_IN_FLIGHT = 2;
/** 32 calls of `store_journey` are 992 parameters: well within a statement's 65,535. */
const CALLS_A_STATEMENT = 32;
/** How long a statement of several calls waits for a row lock before its calls go one by one. */
const LOCK_WAIT_MS = 50;

/** Calls the function with `values` (in its parameter order) and answers its value. */
export type BatchedCall = (values: readonly unknown[], lockOrder: string) => Promise<unknown>;

interface Pending {
  readonly values: readonly unknown[];
  readonly lockOrder: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** Runs in the caller's async context (its trace, its logger): what a statement sent for it belongs to. */
  readonly inContext: <R>(fn: () => R) => R;
}

export function batchedCalls(send: Prepared, options: BatchedCallsOptions): BatchedCall {
  const { fn, arity, maxInFlight = STATEMENTS_IN_FLIGHT, maxBatch = CALLS_A_STATEMENT } = options;
  if (!/^[a-z_][a-z0-9_]*$/.test(fn)) throw new Error(`not a function name: ${fn}`);
  const texts = new Map<number, string>();
  const textFor = (calls: number): string => {
    let text = texts.get(calls);
    if (text === undefined) {
      const call = (k: number) =>
        `${fn}(${Array.from({ length: arity }, (_, i) => `$${String(k * arity + i + 1)}`).join(', ')}) as c${String(k)}`;
      // The FROM subquery's one row, with the setting, is made before the select list's calls run
      // (`offset 0` keeps the planner from folding it away).
      const lockWait =
        calls === 1
          ? ''
          : ` from (select set_config('lock_timeout', '${String(LOCK_WAIT_MS)}ms', true) offset 0) as lock_wait`;
      text = `select ${Array.from({ length: calls }, (_, k) => call(k)).join(', ')}${lockWait}`;
      texts.set(calls, text);
    }
    return text;
  };

  const one = async (values: readonly unknown[]): Promise<unknown> => {
    const [row] = await send<Record<string, unknown>>(textFor(1), values);
    return row?.['c0'];
  };

  const queue: Pending[] = [];
  let inFlight = 0;

  async function sendBatch(batch: Pending[]): Promise<void> {
    const alone = (call: Pending) => call.inContext(() => one(call.values)).then(call.resolve, call.reject);
    if (batch.length === 1) {
      await alone(batch[0] as Pending);
      return;
    }
    batch.sort((a, b) => (a.lockOrder < b.lockOrder ? -1 : a.lockOrder > b.lockOrder ? 1 : 0));
    let row: Record<string, unknown> | undefined;
    try {
      [row] = await send<Record<string, unknown>>(
        textFor(batch.length),
        batch.flatMap((call) => call.values),
      );
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        for (const call of batch) call.reject(error);
        return;
      }
      // Nothing of the statement was committed: each call again on its own, for its own answer.
      await Promise.all(batch.map(alone));
      return;
    }
    batch.forEach((call, k) => {
      call.resolve(row?.[`c${String(k)}`]);
    });
  }

  function pump(): void {
    while (inFlight < maxInFlight && queue.length > 0) {
      inFlight++;
      const batch = queue.splice(0, maxBatch);
      // Sent in the context of its first call, which waits for it: not in that of whichever call
      // happened to end the statement before (its request may be long answered).
      void (batch[0] as Pending)
        .inContext(() => sendBatch(batch))
        .finally(() => {
          inFlight--;
          pump();
        });
    }
  }

  return (values, lockOrder) => {
    if (values.length !== arity)
      throw new Error(`${fn} takes ${String(arity)} arguments, not ${String(values.length)}`);
    // An audited request's statements carry who acts (the send goes through Kysely's attributing
    // driver in its context): never mixed with other requests' calls.
    if (auditing()) return one(values);
    return new Promise((resolve, reject) => {
      queue.push({ values, lockOrder, resolve, reject, inContext: AsyncLocalStorage.snapshot() });
      pump();
    });
  };
}
