/**
 * The billing run: every policy whose billing date is a day, billed in chunks of a thousand (by the
 * admin route at once, or fanned out to the workers as jobs), and the final statements of ended
 * policies, issued by a job after the transaction that ended them.
 */
import { Counter } from 'prom-client';
import { forEachConcurrent, mapConcurrent } from '../../platform/concurrency.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import type { Executor } from '../../schema.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import { countDueForBilling, dueForBilling } from './billing-day-repository.ts';
import { automaticPeriodEnd, billingDateIn, londonDate, londonMidnight } from './rules/statement-period.ts';
import {
  collect,
  writeOne,
  writeStatements,
  type StatementDeps,
  type StatementOutcome,
  type Written,
} from './statement-writer.ts';

export const BILL_CHUNK_QUEUE = 'statements.bill-chunk';
export const BILLING_RUN_QUEUE = 'statements.billing-run';
export const FINAL_STATEMENT_QUEUE = 'statements.final';
/**
 * Policies billed in one transaction. Each chunk costs a fixed number of statements, so bigger chunks
 * amortise round trips; past about a thousand the gain is small and a failed chunk retries more work.
 */
const CHUNK_SIZE = 1000;
/**
 * Chunks billed at once by one process. NOTE: more than the cores: a chunk's connection spends much of
 * its time waiting (on this process, on WAL writes, on the commit), and at 20,000 policies on a busy
 * 2-core machine four chunks at once billed 3,540–3,900 policies/s where two billed 2,540–2,600
 * (eight: 3,190); the pool keeps the rest of its connections for everything else.
 */
const BILLING_CONCURRENCY = 4;
/** Due policies read at a time: twenty chunks, a few megabytes. */
const DUE_PAGE_SIZE = 20 * CHUNK_SIZE;

export interface BillingRunCounts {
  date: string;
  due: number;
  billed: number;
  already_billed: number;
  failed: number;
}

/** A policy a billing run could not bill, and why (its error's message). */
export interface BillingFailure {
  readonly policy_reference: string;
  readonly reason: string;
}

type BilledCounter = Counter<'outcome'>;
type ChunkCounts = Omit<BillingRunCounts, 'date' | 'due'>;

/** The billing days of the policies due on `date` (`YYYY-MM-DD`, Europe/London), and its instant. */
function dueDays(date: string) {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const lastDay = billingDateIn(y, m, 31) === date;
  return {
    days: lastDay ? Array.from({ length: 32 - d }, (_, i) => d + i) : [d],
    instant: londonMidnight(date),
  };
}

/**
 * The policies due on `date` not billed for it yet, in chunks of CHUNK_SIZE, read a page at a time
 * (a million-policy day is not held whole); `seen` hears each page's size and how many of it were
 * billed already.
 */
async function* dueChunks(
  db: Executor,
  date: string,
  seen: (page: { due: number; billed: number }) => void,
): AsyncGenerator<Array<{ id: string; reference: string }>> {
  const { days, instant } = dueDays(date);
  const pages = dueForBilling(db, {
    billingDays: days,
    billingInstant: instant,
    date,
    pageSize: DUE_PAGE_SIZE,
  });
  for await (const page of pages) {
    const todo = page.filter((item) => !item.billed);
    seen({ due: page.length, billed: page.length - todo.length });
    for (let i = 0; i < todo.length; i += CHUNK_SIZE) yield todo.slice(i, i + CHUNK_SIZE);
  }
}

/** A chunk's policies one at a time, after the chunk as a whole failed. */
async function billOneByOne(
  deps: StatementDeps,
  billed: BilledCounter,
  items: ReadonlyArray<{ id: string; reference: string }>,
  date: string,
  failures: BillingFailure[] | undefined,
): Promise<ChunkCounts> {
  const counts = { billed: 0, already_billed: 0, failed: 0 };
  for (const one of await mapConcurrent(items, 2, (item) =>
    billChunk(deps, billed, [item], date, failures),
  )) {
    counts.billed += one.billed;
    counts.already_billed += one.already_billed;
    counts.failed += one.failed;
  }
  return counts;
}

/**
 * One chunk of a billing day in one transaction, then its charges. Should the chunk fail as a whole
 * (one policy's data breaks a rule the database holds), its policies are billed one at a time so the
 * rest are not held back by it.
 */
async function billChunk(
  deps: StatementDeps,
  billed: BilledCounter,
  items: ReadonlyArray<{ id: string; reference: string }>,
  date: string,
  failures?: BillingFailure[],
): Promise<ChunkCounts> {
  const counts = { billed: 0, already_billed: 0, failed: 0 };
  let outcomes: Map<string, StatementOutcome>;
  try {
    outcomes = await inTransaction(deps.db, (trx) =>
      writeStatements(
        deps,
        trx,
        items.map((item) => ({ policyId: item.id, endAt: automaticPeriodEnd(date), billingDate: date })),
      ),
    );
  } catch (error) {
    if (items.length === 1) {
      deps.logger.error({ err: error, policy: items[0]?.reference, date }, 'billing a policy failed');
      failures?.push({
        policy_reference: items[0]?.reference ?? '',
        reason: error instanceof Error ? error.message : String(error),
      });
      billed.inc({ outcome: 'failed' });
      return { ...counts, failed: 1 };
    }
    deps.logger.warn(
      { err: error, date, policies: items.length },
      'billing chunk failed; billing its policies one by one',
    );
    return billOneByOne(deps, billed, items, date, failures);
  }
  const written: Written[] = [];
  for (const outcome of outcomes.values()) {
    if (outcome.kind === 'written') written.push(outcome);
    else counts.already_billed++;
  }
  counts.billed = written.length;
  billed.inc({ outcome: 'billed' }, counts.billed);
  billed.inc({ outcome: 'already_billed' }, counts.already_billed);
  await collect(deps, written);
  return counts;
}

/**
 * Bills every policy whose billing date is `date`; each (policy, date) at most once however often it
 * runs. `onProgress` hears the counts after each chunk (the console's live progress).
 */
async function runBillingDay(
  deps: StatementDeps,
  billed: BilledCounter,
  date: string,
  onProgress?: (counts: BillingRunCounts) => void,
): Promise<BillingRunCounts & { failures: BillingFailure[] }> {
  // NOTE: a day that has not begun in London has usage still to come: billing it would close
  // periods early and charge installments before they fall due.
  const today = londonDate(deps.clock.now());
  if (date > today)
    throw new AppError(
      'BILLING_DATE_IN_FUTURE',
      `A billing run can be for today (${today}, Europe/London) or an earlier day, not ${date}`,
      { errors: [{ path: '/body/date', message: `must not be after ${today}` }] },
    );
  const { days, instant } = dueDays(date);
  // Counted first for the progress shown meanwhile; the result counts the policies the pages held.
  const counts: BillingRunCounts = {
    date,
    due: await countDueForBilling(deps.db, days, instant),
    billed: 0,
    already_billed: 0,
    failed: 0,
  };
  onProgress?.({ ...counts });
  let due = 0;
  const chunks = dueChunks(deps.db, date, (page) => {
    due += page.due;
    counts.already_billed += page.billed;
    billed.inc({ outcome: 'already_billed' }, page.billed);
  });
  const failures: BillingFailure[] = [];
  // Chunks hold disjoint policies (locked in id order), so they run side by side.
  await forEachConcurrent(chunks, BILLING_CONCURRENCY, async (c) => {
    const chunk = await billChunk(deps, billed, c, date, failures);
    counts.billed += chunk.billed;
    counts.already_billed += chunk.already_billed;
    counts.failed += chunk.failed;
    onProgress?.({ ...counts });
  });
  counts.due = due;
  deps.logger.info(counts, 'billing run finished');
  return { ...counts, failures };
}

/** Billing days and final statements: the admin's run, the worker's jobs and their schedule. */
export function createBillingRunService(deps: StatementDeps) {
  const { clock, jobs, logger } = deps;
  const billed: BilledCounter = new Counter({
    name: 'billing_run_policies_total',
    help: 'Policies handled by billing runs, by outcome (billed, already_billed, failed)',
    labelNames: ['outcome'],
    registers: deps.metrics === undefined ? [] : [deps.metrics],
  });
  // NOTE: heartbeats, so that a run or chunk whose worker died (kill -9, a lost machine) is retried
  // within seconds, not when its hour of expiry is up; a retried chunk bills nobody twice.
  jobs.define({
    name: BILLING_RUN_QUEUE,
    options: { retryLimit: 2, expireInSeconds: 3600, heartbeatSeconds: 10 },
  });
  jobs.define({
    name: BILL_CHUNK_QUEUE,
    options: { retryLimit: 5, retryDelay: 5, expireInSeconds: 3600, heartbeatSeconds: 10 },
  });
  jobs.define({
    name: FINAL_STATEMENT_QUEUE,
    options: { retryLimit: 5, retryDelay: 60, retryBackoff: true },
  });

  const service = {
    /** Bills every policy whose billing date is `date`, each at most once; `onProgress` hears each chunk. */
    runBillingDay: (date: string, onProgress?: (counts: BillingRunCounts) => void) =>
      runBillingDay(deps, billed, date, onProgress),

    /** The worker's daily run: fans the due policies out in chunks, so several workers share the day. */
    async enqueueBillingDay(date: string): Promise<number> {
      let chunkCount = 0;
      let due = 0;
      for await (const policies of dueChunks(deps.db, date, () => undefined)) {
        await jobs.send(
          BILL_CHUNK_QUEUE,
          { date, policies: policies.map(({ id, reference }) => ({ id, reference })) },
          { singletonKey: `${date}:${String(chunkCount)}` },
        );
        chunkCount++;
        due += policies.length;
      }
      logger.info({ date, due, chunks: chunkCount }, 'billing run enqueued');
      return due;
    },

    /** In the transaction that ends a policy: its final statement is issued by a job after commit. */
    async scheduleFinal(
      trx: Executor,
      tenant: Tenant,
      ended: { policyReference: string; endAt: Date },
    ): Promise<void> {
      await jobs.enqueue(trx, FINAL_STATEMENT_QUEUE, {
        companyId: tenant.companyId,
        environment: tenant.environment,
        policyReference: ended.policyReference,
        endAt: ended.endAt.toISOString(),
      });
    },

    /** The final statement of a cancelled or lapsed policy, up to the end of cover. */
    async issueFinal(tenant: Tenant, reference: string, endAt: Date): Promise<void> {
      const written = await writeOne(deps, tenant, reference, { endAt, final: true, allowEnded: true });
      if (written !== undefined) await collect(deps, [written]);
    },

    async registerWorkers(): Promise<void> {
      await jobs.work<{ date?: string }>(BILLING_RUN_QUEUE, async (data) => {
        await service.enqueueBillingDay(data.date ?? londonDate(clock.now()));
      });
      await jobs.work<{ date: string; policies: Array<{ id: string; reference: string }> }>(
        BILL_CHUNK_QUEUE,
        async (data) => {
          await billChunk(deps, billed, data.policies, data.date);
        },
      );
      await jobs.work<{
        companyId: string;
        environment: DataEnvironment;
        policyReference: string;
        endAt: string;
      }>(FINAL_STATEMENT_QUEUE, async (data) => {
        await service.issueFinal(
          asTenant(data.companyId, data.environment),
          data.policyReference,
          new Date(data.endAt),
        );
      });
      const [hour, minute] = deps.billingRunAt.split(':');
      await jobs.schedule(
        BILLING_RUN_QUEUE,
        `${String(Number(minute))} ${String(Number(hour))} * * *`,
        {},
        'Europe/London',
      );
    },
  };
  return service;
}
