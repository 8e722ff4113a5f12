import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { migrations } from '../../../src/migrations/index.ts';
import { inTransaction, openDatabase } from '../../../src/platform/db/database.ts';
import { migrateToLatest } from '../../../src/platform/db/migrate.ts';
import { createJobs } from '../../../src/platform/jobs/jobs.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { onPostgres, TEST_DATABASE_URL } from '../../support/database.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp({ startJobs: true });
});
after(() => t.close());

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T | undefined> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined || Date.now() > until) return value;
    await sleep(100);
  }
}

test('migrations run from empty, and a re-run applies nothing', async () => {
  if (onPostgres) {
    // An empty database (not from the template) on the PostgreSQL server.
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    const name = `milepost_empty_${process.pid}`;
    await admin.query(`drop database if exists "${name}"`);
    await admin.query(`create database "${name}"`);
    const url = new URL(TEST_DATABASE_URL!);
    url.pathname = `/${name}`;
    const handle = await openDatabase({ connectionString: url.toString() });
    try {
      assert.deepEqual(await migrateToLatest(handle.db, migrations), Object.keys(migrations));
      assert.deepEqual(await migrateToLatest(handle.db, migrations), []);
    } finally {
      await handle.close();
      await admin.query(`drop database if exists "${name}" with (force)`);
      await admin.end();
    }
  } else {
    const handle = await openDatabase({});
    try {
      assert.deepEqual(await migrateToLatest(handle.db, migrations), Object.keys(migrations));
      assert.deepEqual(await migrateToLatest(handle.db, migrations), []);
    } finally {
      await handle.close();
    }
  }
});

test('a job enqueued in a rolled-back transaction never runs; a committed one does', async () => {
  const { database } = t.container;
  const ran: string[] = [];
  // Queues are defined before start in the service; here the test defines one on a second runner.
  const runner = createJobs({
    connectionString: database.connectionString,
    pglite: database.pglite,
    runWorkers: true,
    pollingIntervalSeconds: 0.5,
  });
  runner.define({ name: 'test.record' });
  await runner.start();
  try {
    await runner.work<{ label: string }>('test.record', async (data) => {
      ran.push(data.label);
    });
    await assert.rejects(
      inTransaction(database.db, async (trx) => {
        await runner.enqueue(trx, 'test.record', { label: 'rolled-back' });
        throw new Error('abort');
      }),
      /abort/,
    );
    await inTransaction(database.db, async (trx) => {
      await runner.enqueue(trx, 'test.record', { label: 'committed' });
    });
    await waitFor(async () => (ran.includes('committed') ? true : undefined), 10_000);
    await sleep(1_000); // give the rolled-back job every chance to (wrongly) appear
    assert.deepEqual(ran, ['committed']);
  } finally {
    await runner.stop(1_000);
  }
});

test('a job whose attempts are spent is counted as failed, for /metrics', async () => {
  const { database } = t.container;
  const runner = createJobs({
    connectionString: database.connectionString,
    pglite: database.pglite,
    runWorkers: true,
    pollingIntervalSeconds: 0.5,
    monitorIntervalSeconds: 1,
  });
  runner.define({ name: 'test.give-up', options: { retryLimit: 0 } });
  await runner.start();
  try {
    await runner.work('test.give-up', () => Promise.reject(new Error('never works')));
    await runner.send('test.give-up', {});
    const failed = await waitFor(async () => {
      const counts = await runner.counts();
      const row = counts.find((c) => c.queue === 'test.give-up' && c.state === 'failed');
      return row !== undefined && row.count > 0 ? row.count : undefined;
    }, 20_000);
    assert.equal(failed, 1);
  } finally {
    await runner.stop(1_000);
  }
});

test('cron: the scheduled housekeeping job runs on this driver', async () => {
  // The container started with a cron check every second; schedule every minute and wait.
  await t.container.jobs.schedule('platform.housekeeping', '* * * * *', {}, 'Europe/London');
  const run = await waitFor(
    async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from housekeeping_runs`.execute(
          t.container.database.db,
        )
      ).rows[0]?.n || undefined,
    20_000,
  );
  assert.ok(run !== undefined && run >= 1, 'a housekeeping run was recorded');
});
