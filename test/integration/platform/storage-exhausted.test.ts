import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../../support/app.ts';

/**
 * A database out of disk, memory or connections refuses the statement with SQLSTATE class 53. Here a
 * trigger in this test's own database raises each code on inserting a company, so the error takes the
 * driver's real path (pg on PostgreSQL, PGlite in process) to the error handler.
 */

let t: TestApp;

before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

async function failCompanyInsertsWith(sqlstate: string | undefined): Promise<void> {
  const { db } = t.container.database;
  if (sqlstate === undefined) {
    await sql`drop trigger if exists test_resource_exhausted on companies`.execute(db);
    return;
  }
  assert.match(sqlstate, /^53[0-9]{3}$/);
  await sql`
    create or replace function test_resource_exhausted() returns trigger language plpgsql as $$
    begin
      raise exception 'could not extend file: No space left on device' using errcode = '${sql.raw(sqlstate)}';
    end $$`.execute(db);
  await sql`drop trigger if exists test_resource_exhausted on companies`.execute(db);
  await sql`
    create trigger test_resource_exhausted before insert on companies
    for each row execute function test_resource_exhausted()`.execute(db);
}

const createCompany = () =>
  t.app.inject({
    method: 'POST',
    url: '/admin/companies',
    headers: t.adminHeaders,
    payload: { name: 'Full' },
  });

test('disk full, out of memory, too many connections, a limit reached: 503 problem+json with Retry-After', async () => {
  const cases = [
    { sqlstate: '53100', retryAfter: '60' }, // disk_full
    { sqlstate: '53200', retryAfter: '10' }, // out_of_memory
    { sqlstate: '53300', retryAfter: '5' }, // too_many_connections
    { sqlstate: '53400', retryAfter: '30' }, // configuration_limit_exceeded
  ];
  try {
    for (const { sqlstate, retryAfter } of cases) {
      await failCompanyInsertsWith(sqlstate);
      const r = await createCompany();
      assert.equal(r.statusCode, 503, `${sqlstate}: ${r.body}`);
      assert.equal(r.headers['retry-after'], retryAfter, sqlstate);
      assert.match(String(r.headers['content-type']), /application\/problem\+json/);
      const problem = r.json<{ status: number; code: string; request_id: string }>();
      assert.equal(problem.status, 503);
      assert.equal(problem.code, 'SERVICE_UNAVAILABLE');
      assert.equal(problem.request_id, r.headers['x-request-id']);
    }
  } finally {
    await failCompanyInsertsWith(undefined);
  }
  // Once space is freed the same request works.
  assert.equal((await createCompany()).statusCode, 201);
});
