import type { PGlite } from '@electric-sql/pglite';
import { PgBoss, fromKysely, fromPglite, type Db, type Job, type Queue, type SendOptions } from 'pg-boss';
import { currentTransaction } from '../db/database.ts';
import { SpanKind, contextFrom, currentTraceCarrier, inSpan } from '../tracing.ts';

/** A Kysely transaction (of any database type). */
export type TransactionLike = Parameters<typeof fromKysely>[0];

export type JobHandler<T> = (data: T, job: Job<T>) => Promise<void>;

export interface QueueDefinition {
  readonly name: string;
  /** pg-boss's queue options, its `policy` among them (`stately`: at most one queued and one active). */
  readonly options?: Omit<Queue, 'name'>;
}

/** The job port: enqueue inside the caller's transaction, work and schedule in the worker role. */
export interface Jobs {
  /** Registers a queue; every queue must be defined before `start`. */
  define(queue: QueueDefinition): void;
  /** Enqueues in `trx`, so the job exists exactly when the caller's transaction commits. */
  enqueue(trx: TransactionLike, name: string, data: object, options?: SendOptions): Promise<string | null>;
  /** Enqueues one job per item in `trx`, in one statement (a billing run queues thousands at once). */
  enqueueMany(trx: TransactionLike, name: string, items: readonly object[]): Promise<void>;
  /** Enqueues outside any transaction (for work that follows a commit). */
  send(name: string, data: object, options?: SendOptions): Promise<string | null>;
  work<T>(name: string, handler: JobHandler<T>, options?: { concurrency?: number }): Promise<void>;
  /** A cron schedule (minute granularity), evaluated in `tz`. */
  schedule(name: string, cron: string, data: object, tz: string): Promise<void>;
  /** Counts per queue, for /metrics. */
  counts(): Promise<Array<{ queue: string; state: string; count: number }>>;
  start(): Promise<void>;
  /**
   * Stops taking jobs and waits (up to `timeoutMs`) for those in flight; any still running then are
   * failed, for another worker to retry. Jobs can still be enqueued until `stop`.
   */
  stopWorking(timeoutMs: number): Promise<void>;
  /** `stopWorking`, then closes the job runner's connections. */
  stop(timeoutMs: number): Promise<void>;
}

export interface JobsOptions {
  readonly connectionString?: string | undefined;
  readonly pglite?: PGlite | undefined;
  /** Run workers and cron here (the worker role). The API role only enqueues. */
  readonly runWorkers: boolean;
  readonly pollingIntervalSeconds?: number | undefined;
  /** Seconds between cron checks; pg-boss's defaults (30 s / 5 s) are lowered in tests. */
  readonly cronIntervalSeconds?: number | undefined;
  /**
   * Seconds between the passes that count each queue's jobs for `counts` (pg-boss's default: 60) and
   * fail jobs whose worker stopped (10); lowered in tests.
   */
  readonly monitorIntervalSeconds?: number;
  readonly onError?: (error: Error) => void;
}

/**
 * The key of a job's data under which, with tracing on, the W3C trace context (`traceparent`,
 * `tracestate`) of the span that enqueued it travels, so that the worker's span continues that trace.
 * Handlers never see it.
 */
export const TRACE_CONTEXT_KEY = 'trace_context';

/** `data` with the active trace context (tracing on, inside a span); `data` itself otherwise. */
function withTraceContext(data: object, carrier: Record<string, string> | undefined): object {
  return carrier === undefined ? data : { ...data, [TRACE_CONTEXT_KEY]: carrier };
}

/**
 * Runs one job's handler, inside a CONSUMER span (`process <queue>`) continuing the trace stored with
 * the job when tracing is on.
 */
function runJob<T>(name: string, job: Job<T>, handler: JobHandler<T>): Promise<void> {
  const stored = job.data as Record<string, unknown> | null;
  if (stored === null || typeof stored !== 'object' || !Object.hasOwn(stored, TRACE_CONTEXT_KEY))
    return inSpan(`process ${name}`, jobSpan(name, job.id, undefined), () => handler(job.data, job));
  const { [TRACE_CONTEXT_KEY]: carrier, ...rest } = stored;
  const data = rest as T;
  return inSpan(
    `process ${name}`,
    jobSpan(name, job.id, typeof carrier === 'object' && carrier !== null ? carrier : undefined),
    () => handler(data, { ...job, data }),
  );
}

/** A job span's options: the messaging semantic conventions' attributes, parented on the stored context. */
function jobSpan(name: string, id: string, carrier: object | undefined) {
  const parent = carrier === undefined ? undefined : contextFrom(carrier as Record<string, unknown>);
  return {
    kind: SpanKind.CONSUMER,
    ...(parent === undefined ? {} : { parent }),
    attributes: {
      'messaging.system': 'pg-boss',
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.destination.name': name,
      'messaging.message.id': id,
    },
  };
}

/**
 * PGlite serialises all statements; a pg-boss statement issued inside an open Kysely transaction must
 * run through that transaction or it waits for it for ever (STACK-NOTES: the deadlock on PGlite).
 */
function pgliteBossDb(pglite: PGlite): Db {
  const direct = fromPglite(pglite);
  return {
    ...direct,
    executeSql: (text, values) => {
      const trx = currentTransaction();
      return trx === undefined ? direct.executeSql(text, values) : fromKysely(trx).executeSql(text, values);
    },
  };
}

export function createJobs(options: JobsOptions): Jobs {
  const cronSeconds = options.cronIntervalSeconds ?? 30;
  const common = {
    schema: 'pgboss',
    schedule: options.runWorkers,
    supervise: options.runWorkers,
    cronMonitorIntervalSeconds: cronSeconds,
    // How often jobs whose worker stopped sending heartbeats are failed and retried.
    superviseIntervalSeconds: Math.min(10, options.monitorIntervalSeconds ?? 10),
    ...(options.monitorIntervalSeconds === undefined
      ? {}
      : { monitorIntervalSeconds: options.monitorIntervalSeconds }),
    cronWorkerIntervalSeconds: Math.min(5, cronSeconds),
  };
  const boss =
    options.pglite !== undefined
      ? new PgBoss({ ...common, db: pgliteBossDb(options.pglite), backend: 'pglite' })
      : new PgBoss({ ...common, connectionString: options.connectionString ?? '', max: 4 });
  boss.on('error', (error: Error) => options.onError?.(error));
  const queues = new Map<string, QueueDefinition>();
  const polling = options.pollingIntervalSeconds ?? 1;
  let started = false;

  return {
    define(queue) {
      if (started) throw new Error(`queue ${queue.name} defined after start`);
      queues.set(queue.name, queue);
    },
    enqueue(trx, name, data, sendOptions = {}) {
      return boss.send(name, withTraceContext(data, currentTraceCarrier()), {
        ...sendOptions,
        db: fromKysely(trx),
      });
    },
    async enqueueMany(trx, name, items) {
      if (items.length === 0) return;
      const carrier = currentTraceCarrier();
      await boss.insert(
        name,
        items.map((data) => ({ data: withTraceContext(data, carrier) })),
        { db: fromKysely(trx) },
      );
    },
    send(name, data, sendOptions = {}) {
      return boss.send(name, withTraceContext(data, currentTraceCarrier()), sendOptions);
    },
    async work(name, handler, workOptions = {}) {
      if (!options.runWorkers) return;
      await boss.work<Parameters<typeof handler>[0]>(
        name,
        { pollingIntervalSeconds: polling, batchSize: 1, localConcurrency: workOptions.concurrency ?? 1 },
        async (batch) => {
          for (const job of batch) await runJob(name, job, handler);
        },
      );
    },
    async schedule(name, cron, data, tz) {
      if (!options.runWorkers) return;
      await boss.schedule(name, cron, data, { tz });
    },
    async counts() {
      const result = await boss.getQueues([...queues.keys()]);
      return result.flatMap((q) => [
        { queue: q.name, state: 'queued', count: q.queuedCount },
        { queue: q.name, state: 'active', count: q.activeCount },
        { queue: q.name, state: 'deferred', count: q.deferredCount },
        // Jobs whose attempts are spent (an email given up on, a billing chunk that kept failing),
        // as long as the queue keeps them.
        { queue: q.name, state: 'failed', count: q.failedCount },
        { queue: q.name, state: 'total', count: q.totalCount },
      ]);
    },
    async start() {
      await boss.start();
      const existing = new Set((await boss.getQueues()).map((q) => q.name));
      for (const queue of queues.values()) {
        // An existing queue takes the options of this release (an upgrade may change them), except its
        // policy: pg-boss fixes that when the queue is created and refuses to change it.
        if (!existing.has(queue.name)) {
          await boss.createQueue(queue.name, queue.options ?? {});
          continue;
        }
        const { policy: _fixed, ...changeable } = queue.options ?? {};
        if (Object.keys(changeable).length > 0) await boss.updateQueue(queue.name, changeable);
      }
      started = true;
    },
    async stopWorking(timeoutMs) {
      if (!started) return;
      started = false;
      await boss.stop({ graceful: true, timeout: Math.max(timeoutMs, 1), close: false });
    },
    async stop(timeoutMs) {
      await this.stopWorking(timeoutMs);
      // A second stop only closes the pool the first left open.
      await boss.stop({ graceful: false, close: true });
    },
  };
}
