import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { CLIENT_CHECK_INTERVAL_MS, openDatabase } from '../../../src/platform/db/database.ts';
import type { Database } from '../../../src/schema.ts';
import { createTestDatabase, onPostgres } from '../../support/database.ts';

// A statement the service gives up on (DATABASE_QUERY_TIMEOUT_MS) stops in PostgreSQL too, rather than
// running on for a client that has gone: the session checks its client while it works.
test(
  'a statement past the query timeout stops in PostgreSQL within the client check interval',
  { skip: !onPostgres && 'PostgreSQL only: the embedded database runs in the process' },
  async () => {
    const template = await createTestDatabase();
    const url = template.connectionString!;
    const database = await openDatabase<Database>({ connectionString: url, queryTimeoutMs: 300 });
    const observer = new pg.Client({ connectionString: url });
    await observer.connect();
    try {
      await assert.rejects(sql`select pg_sleep(60) as abandoned`.execute(database.db));
      const running = async () =>
        (
          await observer.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
             where datname = current_database() and state = 'active' and query like '%pg_sleep(60) as abandoned%'
               and pid <> pg_backend_pid()`,
          )
        ).rows[0]?.n ?? 0;
      const deadline = Date.now() + CLIENT_CHECK_INTERVAL_MS * 4;
      while ((await running()) > 0 && Date.now() < deadline) await sleep(100);
      assert.equal(await running(), 0, 'the abandoned statement still runs in PostgreSQL');
      // The pool serves the next statement on a fresh connection.
      assert.equal((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows[0]?.one, 1);
    } finally {
      await observer.end();
      await database.close();
      await template.close();
    }
  },
);

test(
  'PGOPTIONS still reaches the sessions beside the client check',
  { skip: !onPostgres && 'PostgreSQL only: the embedded database takes no startup options' },
  async () => {
    const template = await createTestDatabase();
    const before = process.env['PGOPTIONS'];
    process.env['PGOPTIONS'] = '-c lock_timeout=1234';
    const database = await openDatabase<Database>({ connectionString: template.connectionString! });
    try {
      const shown = await sql<{ lock_timeout: string; client_connection_check_interval: string }>`
        select current_setting('lock_timeout') as lock_timeout,
          current_setting('client_connection_check_interval') as client_connection_check_interval`.execute(
        database.db,
      );
      assert.deepEqual(shown.rows[0], { lock_timeout: '1234ms', client_connection_check_interval: '2s' });
    } finally {
      if (before === undefined) delete process.env['PGOPTIONS'];
      else process.env['PGOPTIONS'] = before;
      await database.close();
      await template.close();
    }
  },
);
