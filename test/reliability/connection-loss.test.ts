import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import type { DatabaseHandle } from '../../src/platform/db/database.ts';
import type { Database } from '../../src/schema.ts';
import { TEST_ADMIN_KEY } from '../support/app.ts';
import { createTestDatabase, onPostgres } from '../support/database.ts';
import { livePolicyInput } from '../support/policy-arbitraries.ts';
import { startService as startProcess, waitForWelcome } from './service-processes.ts';

/**
 * R2, the database's side: every connection the service holds is terminated (as a failover, an idle
 * timeout or a PgBouncer restart would) three times under load. The process stays up, no request
 * answers 5xx other than 503 or hangs, /readyz says 503 while the database is unreachable and 200
 * after, and a change made afterwards is read back (the change feed listens again).
 */
const skip = !onPostgres && 'PostgreSQL only: it terminates the service’s PostgreSQL backends';

let database: DatabaseHandle<Database>;
const services: ChildProcess[] = [];

async function startService(role: 'all' | 'api') {
  const service = await startProcess(role, database.connectionString!);
  services.push(service.child);
  return service;
}

before(async () => {
  if (onPostgres) database = await createTestDatabase();
});
after(async () => {
  for (const child of services) child.kill('SIGKILL');
  if (onPostgres) await database.close();
});

async function terminateBackends(): Promise<number> {
  const admin = new pg.Client({ connectionString: database.connectionString });
  await admin.connect();
  try {
    const result = await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    return result.rowCount ?? 0;
  } finally {
    await admin.end();
  }
}

for (const role of ['all', 'api'] as const) {
  test(
    `ROLE=${role}: every backend terminated three times under load; the process stays up and answers`,
    { skip },
    async () => {
      const service = await startService(role);
      const json = async (method: string, url: string, headers: Record<string, string>, body?: unknown) => {
        const response = await fetch(`${service.base}${url}`, {
          method,
          headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(20_000),
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      const company = await json(
        'POST',
        '/admin/companies',
        { authorization: `Bearer ${TEST_ADMIN_KEY}` },
        { name: `Cut ${role}` },
      );
      assert.equal(company.status, 201);
      const client = {
        client_id: company.body['client_id'] as string,
        client_secret: company.body['client_secret_sandbox'] as string,
      };
      const input = livePolicyInput({ proposer: { email: `cut.${role}@example.com` } });
      const created = await json('POST', '/policys', client, input);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const reference = created.body['policy_reference'] as string;

      const statuses = new Map<number, number>();
      let writes = 0;
      let stop = false;
      let slowest = 0;
      const load = Array.from({ length: 10 }, async (_, worker) => {
        while (!stop) {
          const started = Date.now();
          const url = [
            `/policys/${reference}`,
            `/statements?policy_reference=${reference}`,
            `/journeys?policy_reference=${reference}`,
            `/payments?policy_reference=${reference}`,
            '/policys',
          ][worker % 5]!;
          try {
            // Writes too: a new policy (a transaction that enqueues its welcome email).
            const r =
              url === '/policys'
                ? await json(
                    'POST',
                    url,
                    client,
                    livePolicyInput({
                      proposer: { email: `cut.${role}.${String(++writes)}@example.com` },
                    }),
                  )
                : await json('GET', url, client);
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          } catch (error) {
            assert.fail(`a request failed without an answer (hung or reset): ${String(error)}`);
          }
          slowest = Math.max(slowest, Date.now() - started);
        }
      });
      await sleep(500);
      for (let cut = 0; cut < 3; cut++) {
        const terminated = await terminateBackends();
        assert.ok(terminated > 0, 'the service had connections to terminate');
        await sleep(1_500);
        assert.equal(service.exited(), false, `the process died after cut ${String(cut + 1)}`);
      }
      stop = true;
      await Promise.all(load);
      assert.equal(service.exited(), false, 'the process stays up');
      const errors = [...statuses.entries()].filter(([status]) => status >= 500 && status !== 503);
      assert.deepEqual(errors, [], `answers: ${JSON.stringify([...statuses.entries()])}`);
      assert.ok((statuses.get(200) ?? 0) > 0);
      assert.ok(slowest < 15_000, `a request took ${String(slowest)} ms`);

      for (let i = 0; ; i++) {
        const ready = await fetch(`${service.base}/readyz`);
        if (ready.status === 200) break;
        assert.ok(i < 100, '/readyz did not recover');
        await sleep(100);
      }
      // A change made now is read back after this process's own-write shadow (1 s), when only a
      // notification can have dropped the cached row: the change feed listens again.
      for (let i = 0; i < 3; i++)
        assert.equal((await json('GET', `/policys/${reference}`, client)).status, 200);
      const adjusted = await json('POST', '/policys', client, {
        ...input,
        policy: { ...input.policy, policy_reference: reference },
        vehicle: { ...input.vehicle, colour: 'Green' },
      });
      assert.ok(adjusted.status < 300, JSON.stringify(adjusted.body));
      await sleep(1_500);
      const read = await json('GET', `/policys/${reference}`, client);
      assert.equal((read.body['vehicle'] as { colour: string }).colour, 'Green');
      if (role === 'all') {
        // pg-boss works on after its connections were cut: a policy made now gets its welcome email.
        const email = `after.cuts.${role}@example.com`;
        const created = await json('POST', '/policys', client, livePolicyInput({ proposer: { email } }));
        assert.equal(created.status, 201, JSON.stringify(created.body));
        await waitForWelcome(service.base, email);
      }
      service.child.kill('SIGTERM');
      await once(service.child, 'exit');
    },
  );
}
