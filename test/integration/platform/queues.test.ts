import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { createContainer } from '../../../src/container.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { openDatabase, type DatabaseHandle } from '../../../src/platform/db/database.ts';
import { createLogger } from '../../../src/platform/logging.ts';
import type { Database } from '../../../src/schema.ts';
import { TEST_ADMIN_KEY } from '../../support/app.ts';
import { TEST_DATABASE_URL, onPostgres } from '../../support/database.ts';
import { make } from '../../support/factories.ts';
import { livePolicyInput } from '../../support/policy-arbitraries.ts';
import { call, createCompany, startService } from '../../reliability/service-processes.ts';

/** A database with nothing in it: no migrations, no job schema (not the suite's migrated template). */
async function emptyDatabase(): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  if (!onPostgres) return { url: undefined, drop: async () => undefined };
  const name = `milepost_empty_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const dropper = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await dropper.connect();
      await dropper.query(`drop database if exists "${name}" with (force)`).finally(() => dropper.end());
    },
  };
}

const queueNames = async (database: DatabaseHandle<Database>): Promise<string[]> =>
  (
    await (database.db as unknown as import('kysely').Kysely<Record<string, { name: string }>>)
      .selectFrom('pgboss.queue')
      .select('name')
      .execute()
  ).map((row) => row.name);

test('an API process on a new database serves its first POST /policys: queues exist before it serves', async () => {
  const empty = await emptyDatabase();
  const database = await openDatabase<Database>({ connectionString: empty.url });
  const config = loadConfig({ ROLE: 'api', ADMIN_API_KEY: TEST_ADMIN_KEY, LOG_LEVEL: 'silent' });
  // As main.ts does: the container (migrations, queues), the app, and nothing else before serving.
  const container = await createContainer(config, {
    database,
    clock: fixedClock('2025-09-20T12:00:00Z'),
    logger: createLogger('silent'),
  });
  const app = await buildApp(container);
  try {
    assert.ok((await queueNames(database)).includes('notifications.send-email'));
    const company = await app.inject({
      method: 'POST',
      url: '/admin/companies',
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
      payload: { name: 'First' },
    });
    const credentials = company.json<{ client_id: string; client_secret_sandbox: string }>();
    await make.policy(
      app,
      { client_id: credentials.client_id, client_secret: credentials.client_secret_sandbox },
      { proposer: { email: 'first.ever@example.com' } },
    );
  } finally {
    await app.close();
    await container.close();
    await empty.drop();
  }
});

test(
  'npm run cli -- migrate creates every queue the service uses',
  { skip: !onPostgres && 'PostgreSQL only (a CLI process cannot share an in-memory PGlite)' },
  async () => {
    const empty = await emptyDatabase();
    try {
      const result = await new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [path.resolve(import.meta.dirname, '../../../src/cli.ts'), 'migrate'],
          {
            env: {
              PATH: process.env['PATH'] ?? '',
              DATABASE_URL: empty.url,
              LOG_LEVEL: 'silent',
              ADMIN_API_KEY: TEST_ADMIN_KEY,
            },
          },
          (error, _stdout, stderr) => {
            resolve({ code: error === null ? 0 : Number(error.code ?? 1), stderr });
          },
        );
      });
      assert.equal(result.code, 0, result.stderr);
      const database = await openDatabase<Database>({ connectionString: empty.url });
      try {
        const names = await queueNames(database);
        for (const queue of [
          'notifications.send-email',
          'statements.bill-chunk',
          'payments.settle',
          'platform.housekeeping',
        ])
          assert.ok(names.includes(queue), `${queue} missing from ${names.join(', ')}`);
      } finally {
        await database.close();
      }
    } finally {
      await empty.drop();
    }
  },
);

test(
  'a ROLE=api process alone, started on a new database, answers its first POST /policys 201',
  { skip: !onPostgres && 'PostgreSQL only (a child process cannot share an in-memory PGlite)' },
  async () => {
    const empty = await emptyDatabase();
    // No worker anywhere and no migration beforehand: the API process's own start makes the queues.
    const service = await startService('api', empty.url!);
    try {
      const company = await createCompany(service.base, 'First API');
      const created = await call(
        service.base,
        'POST',
        '/policys',
        company,
        livePolicyInput({ proposer: { email: 'api.only@example.com' } }),
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
    } finally {
      await service.stop();
      await empty.drop();
    }
  },
);

test('a restart on a database whose queues exist starts (a queue policy stays as created)', async () => {
  const empty = await emptyDatabase();
  const database = await openDatabase<Database>({ connectionString: empty.url });
  const config = loadConfig({ ROLE: 'worker', ADMIN_API_KEY: TEST_ADMIN_KEY, LOG_LEVEL: 'silent' });
  const start = () =>
    createContainer(config, {
      database,
      clock: fixedClock('2025-09-20T12:00:00Z'),
      logger: createLogger('silent'),
    });
  try {
    const first = await start();
    await first.jobs.stop(1000);
    // pg-boss refuses to change a queue's policy: the second start must not ask it to.
    const second = await start();
    await second.jobs.stop(1000);
    const policies = await (
      database.db as unknown as import('kysely').Kysely<Record<string, { name: string; policy: string }>>
    )
      .selectFrom('pgboss.queue')
      .select(['name', 'policy'])
      .where('name', '=', 'telematics.silent-devices')
      .execute();
    assert.deepEqual(policies, [{ name: 'telematics.silent-devices', policy: 'stately' }]);
  } finally {
    await database.close();
    await empty.drop();
  }
});
