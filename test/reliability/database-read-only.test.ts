import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createTestApp, type TestApp } from '../support/app.ts';
import { onPostgres, TEST_DATABASE_URL } from '../support/database.ts';

/**
 * The database stops taking writes while the service runs (a failover that leaves it on a standby, a
 * provider setting it read-only as its disk fills): a write answers 503 with Retry-After, as for a
 * database that cannot be reached, never 500; reads go on.
 */
const skip = !onPostgres && 'PostgreSQL only: the embedded database is never read-only';

let t: TestApp;
let name: string;

/** A statement on the server's default database, outside the one made read-only. */
async function onServer(text: string): Promise<void> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(text);
  } finally {
    await admin.end();
  }
}

before(async () => {
  if (!onPostgres) return;
  t = await createTestApp();
  name = new URL(t.container.database.connectionString!).pathname.slice(1);
});
after(async () => {
  if (!onPostgres) return;
  await onServer(`alter database "${name}" reset default_transaction_read_only`);
  await t.close();
});

test(
  'a database that turns read-only: writes answer 503 with Retry-After, never 500; reads answer',
  { skip },
  async () => {
    await onServer(`alter database "${name}" set default_transaction_read_only = on`);
    // Its sessions end, as at a failover; those the pool opens next are read-only.
    await onServer(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and pid <> pg_backend_pid()`,
    );
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const answer = await t.app.inject({
        method: 'POST',
        url: '/admin/companies',
        headers: t.adminHeaders,
        payload: { name: `Read-only ${String(i)}` },
      });
      statuses.push(answer.statusCode);
      if (answer.statusCode === 503) {
        assert.equal(answer.json<{ code: string }>().code, 'SERVICE_UNAVAILABLE');
        assert.ok(answer.headers['retry-after'] !== undefined, 'a Retry-After');
      }
    }
    assert.deepEqual(
      statuses,
      statuses.map(() => 503),
    );
    assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  },
);
