import { type Generated, type Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Jobs } from './jobs.ts';

export interface HousekeepingTables {
  housekeeping_runs: { id: Generated<number>; ran_at: Date; deleted_rows: number };
}

/** A purge task a module contributes: deletes what has expired before `now`, returns rows deleted. */
export type PurgeTask = (now: Date) => Promise<number>;

export const HOUSEKEEPING_QUEUE = 'platform.housekeeping';
const RETENTION_DAYS = 30;

/**
 * The hourly housekeeping job: runs each module's purge task and records the run, so an operator
 * (and the test for cron on both drivers) can see that scheduled work happens.
 */
export function registerHousekeeping(
  jobs: Jobs,
  db: Kysely<HousekeepingTables>,
  clock: Clock,
  tasks: readonly PurgeTask[],
  cron = '17 * * * *',
): { register(): Promise<void>; runOnce(): Promise<number> } {
  const runOnce = async (): Promise<number> => {
    const now = clock.now();
    let deleted = 0;
    for (const task of tasks) deleted += await task(now);
    const cutoff = new Date(now.getTime() - RETENTION_DAYS * 86_400_000);
    const old = await db.deleteFrom('housekeeping_runs').where('ran_at', '<', cutoff).executeTakeFirst();
    deleted += Number(old.numDeletedRows);
    await db.insertInto('housekeeping_runs').values({ ran_at: now, deleted_rows: deleted }).execute();
    return deleted;
  };
  jobs.define({ name: HOUSEKEEPING_QUEUE, options: { retryLimit: 2, expireInSeconds: 600 } });
  return {
    runOnce,
    async register() {
      await jobs.work(HOUSEKEEPING_QUEUE, async () => {
        await runOnce();
      });
      await jobs.schedule(HOUSEKEEPING_QUEUE, cron, {}, 'Europe/London');
    },
  };
}
