import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Clock } from '../../platform/clock.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { countInForce, readInForceTerms, type InForceTerms } from '../policies/index.ts';
import type { ImpactBatch, ImpactBatchResult } from './impact-worker.ts';
import { createRateBookContext } from './rate-book-context.ts';
import {
  emptyTally,
  impactReport,
  mergeTally,
  type ImpactReport,
  type RateBookContent,
} from './rules/index.ts';

/** Policies read and handed to a thread at a time: a few MB of terms, so memory stays flat. */
export const IMPACT_BATCH_POLICIES = 1000;

/** The counts so far, after each batch (the console's live progress). */
export interface ImpactProgress {
  /** Policies in force when the test began (counted first; the result counts those it read). */
  readonly in_force: number;
  readonly done: number;
  readonly rated: number;
  readonly declined: number;
  readonly unrated: number;
}

export type ImpactResult = {
  readonly rate_book_reference: string;
  readonly version_number: number;
  readonly version_status: 'draft' | 'approved';
  readonly product_reference: string;
  /** The instant the policies in force were taken at. */
  readonly as_at: string;
  readonly threads: number;
} & ImpactReport;

// NOTE: beside this file under its own extension: `.ts` from src/, `.js` from the built dist/ (src/build.ts).
const WORKER_URL = new URL(
  `./impact-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
);

/** A fixed set of rating threads, each holding one batch at a time. */
function startPool(content: RateBookContent, threads: number, onResult: (r: ImpactBatchResult) => void) {
  const idle: Worker[] = [];
  const waiting: ((worker: Worker) => void)[] = [];
  const inFlight = new Map<Worker, number>();
  let failure: Error | undefined;
  let settle: (() => void) | undefined;
  const release = (worker: Worker) => {
    inFlight.delete(worker);
    const next = waiting.shift();
    if (next === undefined) idle.push(worker);
    else next(worker);
    if (inFlight.size === 0) settle?.();
  };
  const workers = Array.from({ length: threads }, () => {
    const worker = new Worker(WORKER_URL, { workerData: { content } });
    worker.on('message', (result: ImpactBatchResult) => {
      onResult(result);
      release(worker);
    });
    worker.on('error', (error) => {
      failure ??= error;
      release(worker);
    });
    idle.push(worker);
    return worker;
  });
  return {
    /** Hands `batch` to the next free thread (waiting for one). */
    async submit(batch: ImpactBatch): Promise<void> {
      if (failure !== undefined) throw failure;
      const worker = idle.pop() ?? (await new Promise<Worker>((resolve) => waiting.push(resolve)));
      inFlight.set(worker, batch.batch);
      worker.postMessage(batch);
    },
    /** Resolves when every batch handed out is tallied; throws a thread's failure. */
    async drain(): Promise<void> {
      if (inFlight.size > 0) await new Promise<void>((resolve) => (settle = resolve));
      if (failure !== undefined) throw failure;
    },
    close: () => Promise.all(workers.map((w) => w.terminate())),
  };
}

/** Impact testing: a rate book version re-rating a product's whole book in force. */
export function createImpactService(deps: {
  db: Executor;
  clock: Clock;
  /** Rating threads; default one a core. */
  threads?: number;
}) {
  const { db, clock } = deps;
  const context = createRateBookContext({ db, clock });
  const threads = Math.max(1, deps.threads ?? availableParallelism());

  return {
    /**
     * Re-rates every policy of the rate book's product in force now on version `number` and reports
     * the change (bands, totals, the largest movers, what the version declines or cannot rate);
     * 404 for another tenant's rate book. `onProgress` hears the counts after each batch.
     */
    async run(
      tenant: Tenant,
      reference: string,
      number: number,
      onProgress?: (progress: ImpactProgress) => void,
    ): Promise<ImpactResult> {
      const at = clock.now();
      const located = await context.locate(db, tenant, reference, number);
      const content = located.version.content;
      const scope = { productReference: located.product.reference, at };
      const inForce = await countInForce(db, tenant, scope.productReference, at);
      const tally = emptyTally();
      const progress = (): ImpactProgress => ({
        in_force: inForce,
        done: tally.policies,
        rated: tally.rated,
        declined: tally.declined,
        unrated: tally.unrated,
      });
      onProgress?.(progress());
      const pool = startPool(content, threads, (result) => {
        mergeTally(tally, result.tally);
        onProgress?.(progress());
      });
      let next: Promise<InForceTerms[]> | null = null;
      try {
        const read = (after: string | null): Promise<InForceTerms[]> =>
          readInForceTerms(db, tenant, scope, after, IMPACT_BATCH_POLICIES);
        // NOTE: the next batch is read while this one waits for a free thread, so the database never
        // waits for rating nor rating for the database; at most one batch more is held.
        next = read(null);
        for (let batch = 0; next !== null; batch++) {
          const rows: InForceTerms[] = await next;
          const last = rows.at(-1);
          next = rows.length < IMPACT_BATCH_POLICIES || last === undefined ? null : read(last.policyId);
          if (rows.length > 0)
            await pool.submit({
              batch,
              policies: rows.map((r) => [r.policyReference, r.termsJson] as const),
            });
        }
        await pool.drain();
      } finally {
        // A thread's failure leaves the batch read ahead unawaited: its own failure is beside the point.
        next?.catch(() => undefined);
        await pool.close();
      }
      return {
        rate_book_reference: located.book.reference,
        version_number: located.version.number,
        version_status: located.version.status,
        product_reference: located.product.reference,
        as_at: at.toISOString(),
        threads,
        ...impactReport(tally),
      };
    },
  };
}

export type ImpactService = ReturnType<typeof createImpactService>;
