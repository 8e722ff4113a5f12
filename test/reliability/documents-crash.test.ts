import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { onPostgres } from '../support/database.ts';
import { make } from '../support/factories.ts';
import { startService, type Service } from './service-processes.ts';

/**
 * Documents across a crash: changes commit (new policies, each owing four documents) while no worker
 * runs; a worker process starts making them and is killed (SIGKILL) once some are stored, so that
 * others are leased, half made or not yet begun. A second worker then makes the rest: every document
 * owed exists exactly once (one per event and kind), nothing stays owed. The dead worker's leases end
 * after 60 s, so the second finishes within about 75 s.
 */
const POLICIES = Number(process.env['RELIABILITY_DOCUMENT_POLICIES'] ?? 12);

let t: TestApp;
const services: Service[] = [];

before(async () => {
  if (!onPostgres) return;
  // The API alone: what changes commit owes documents, and nothing in this process makes them.
  t = await createTestApp();
  const company = await createCompany(t.app, 'Crash Documents Mutual');
  for (let i = 0; i < POLICIES; i++)
    await make.livePolicy(t.app, company.sandbox, {
      proposer: { email: `doc-crash${String(i)}@example.com` },
    });
});

after(async () => {
  for (const service of services) service.child.kill('SIGKILL');
  if (onPostgres) await t.close();
});

async function tally() {
  const rows = await sql<{ documents: number; owed: number; pending: number; twice: number }>`
    select (select count(*)::int from documents) as documents,
      (select count(*)::int from documents_owed) as owed,
      (select count(*)::int from document_pending_events) as pending,
      (select count(*)::int from (
        select 1 from documents where source_event_id is not null
        group by source_event_id, kind having count(*) > 1) d) as twice`.execute(t.container.database.db);
  return rows.rows[0]!;
}

test(
  'kill -9 while documents are made: after a restart each document owed exists once',
  { skip: !onPostgres && 'PostgreSQL only: the worker runs in a process of its own', timeout: 240_000 },
  async (context) => {
    const expected = POLICIES * 4;
    assert.deepEqual(await tally(), { documents: 0, owed: 0, pending: POLICIES, twice: 0 });
    const url = t.container.database.connectionString ?? '';
    const first = await startService('worker', url);
    services.push(first);
    for (let waited = 0; (await tally()).documents === 0; waited += 20) {
      assert.ok(waited < 90_000, 'the first worker made no document');
      await sleep(20);
    }
    first.child.kill('SIGKILL');
    const killed = await tally();
    context.diagnostic(`killed with ${String(killed.documents)} of ${String(expected)} documents stored`);
    assert.ok(killed.documents < expected, 'killed before it had made them all');

    const started = Date.now();
    services.push(await startService('worker', url));
    for (;;) {
      const now = await tally();
      if (now.owed === 0 && now.pending === 0 && now.documents >= expected) break;
      assert.ok(Date.now() - started < 150_000, `not all made after the restart: ${JSON.stringify(now)}`);
      await sleep(250);
    }
    context.diagnostic(
      `the rest made ${String(Math.round((Date.now() - started) / 1000))} s after the restart`,
    );
    assert.deepEqual(await tally(), { documents: expected, owed: 0, pending: 0, twice: 0 });
  },
);
