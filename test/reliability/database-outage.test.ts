import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import type { DatabaseHandle } from '../../src/platform/db/database.ts';
import type { Database } from '../../src/schema.ts';
import { createTestDatabase, onPostgres } from '../support/database.ts';
import { livePolicyInput } from '../support/policy-arbitraries.ts';
import {
  call,
  createCompany,
  policyholder,
  startFaultProxy,
  startService,
  waitForWelcome,
  type Answer,
  type Service,
} from './service-processes.ts';

/**
 * The database becomes unreachable, twice: first it refuses connections (a restart), then it goes
 * silent with the service's connections open (a failover, a partition). Under load, every request
 * gets an answer within a bound (503 problem+json while the database is away, never 500, never a
 * hang), /readyz says 503 and then 200, /metrics answers within a scrape's timeout, and afterwards
 * the pool, pg-boss and the change feed work on fresh connections: a job runs, and a change is read
 * back once the own-write shadow has passed.
 */
const skip = !onPostgres && 'PostgreSQL only: it cuts the network between the service and PostgreSQL';
// The service is started with a short query timeout so that a silent database is noticed quickly.
const QUERY_TIMEOUT_MS = 2_000;
// Connection timeout (5 s) + a statement and its rollback on a dead connection + slack.
const ANSWER_BOUND_MS = 15_000;

let database: DatabaseHandle<Database>;
let proxy: Awaited<ReturnType<typeof startFaultProxy>>;
let service: Service | undefined;

before(async () => {
  if (!onPostgres) return;
  database = await createTestDatabase();
  const url = new URL(database.connectionString!);
  proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port || 5432) });
});
after(async () => {
  if (!onPostgres) return;
  service?.child.kill('SIGKILL');
  await proxy.close();
  await database.close();
});

async function waitReady(base: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ready = await call(base, 'GET', '/readyz', {}, undefined, ANSWER_BOUND_MS);
    if (ready.status === 200) return;
    assert.ok(Date.now() < deadline, `/readyz did not recover: ${JSON.stringify(ready.body)}`);
    await sleep(200);
  }
}

function assertUnavailable(answer: Answer, what: string): void {
  assert.equal(answer.status, 503, `${what}: ${JSON.stringify(answer.body)}`);
  assert.match(answer.contentType, /^application\/problem\+json/, what);
  assert.equal(answer.body['code'], 'SERVICE_UNAVAILABLE', what);
}

test(
  'the database refuses, then goes silent, under load: answers stay bounded, /readyz follows, and everything recovers',
  { skip, timeout: 240_000 },
  async () => {
    const url = new URL(database.connectionString!);
    url.host = `127.0.0.1:${String(proxy.port)}`;
    service = await startService('all', url.toString(), {
      DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
    });
    const base = service.base;
    const company = await createCompany(base, 'Outage');
    const holder = await policyholder(base, company, 'outage.holder@example.com');
    const bearer = { ...company, authorization: `Bearer ${holder.accessToken}` };

    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let slowest = 0;
    let stop = false;
    let written = 0;
    const load = Array.from({ length: 6 }, async (_, worker) => {
      while (!stop) {
        const request: [string, string, Record<string, string>, unknown] =
          worker % 3 === 0
            ? ['GET', '/policys/details', bearer, undefined]
            : worker % 3 === 1
              ? ['GET', `/policys/${holder.reference}`, company, undefined]
              : [
                  'POST',
                  '/policys',
                  company,
                  livePolicyInput({
                    proposer: { email: `outage.${String(worker)}.${String(++written)}@example.com` },
                  }),
                ];
        try {
          const answer = await call(base, ...request, ANSWER_BOUND_MS);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          slowest = Math.max(slowest, answer.durationMs);
          if (answer.status >= 500 && answer.status !== 503)
            failures.push(
              `${request[0]} ${request[1]}: ${String(answer.status)} ${JSON.stringify(answer.body)}`,
            );
          if (answer.status === 503) assertUnavailable(answer, `${request[0]} ${request[1]}`);
        } catch (error) {
          failures.push(
            `${request[0]} ${request[1]}: no answer within ${String(ANSWER_BOUND_MS)} ms (${String(error)})`,
          );
        }
        if (statuses.get(503) !== undefined) await sleep(50);
      }
    });

    try {
      await sleep(500);
      // 1. Refused: connections dropped, new ones refused.
      proxy.set('refuse');
      await sleep(1_000);
      assertUnavailable(
        await call(base, 'GET', '/readyz', {}, undefined, ANSWER_BOUND_MS),
        '/readyz while refused',
      );
      await sleep(2_000);
      assert.equal(service.exited(), false, 'the process died while the database refused');
      proxy.set('pass');
      await waitReady(base, 20_000);

      // 2. Silent: the open connections carry nothing, new ones are accepted and never answered.
      await sleep(1_000);
      proxy.set('blackhole');
      await sleep(1_000);
      assertUnavailable(
        await call(base, 'GET', '/readyz', {}, undefined, ANSWER_BOUND_MS),
        '/readyz while silent',
      );
      // /metrics answers within a scrape's timeout (Prometheus's default: 10 s), without the job counts.
      const metrics = await call(base, 'GET', '/metrics', {}, undefined, ANSWER_BOUND_MS);
      assert.equal(metrics.status, 200);
      assert.ok(metrics.durationMs < 5_000, `/metrics took ${String(metrics.durationMs)} ms`);
      assert.match(String(metrics.body['text']), /^http_request_duration_seconds_bucket/m);
      await sleep(QUERY_TIMEOUT_MS * 3);
      assert.equal(service.exited(), false, 'the process died while the database was silent');
      proxy.set('pass');
      await waitReady(base, 30_000);
      await sleep(1_000);
    } finally {
      stop = true;
      await Promise.all(load);
    }
    assert.equal(service.exited(), false, 'the process stays up');
    assert.deepEqual(failures, [], `answers: ${JSON.stringify([...statuses.entries()])}`);
    assert.ok((statuses.get(503) ?? 0) > 0, 'some requests met the outage');
    assert.ok(slowest < ANSWER_BOUND_MS, `a request took ${String(slowest)} ms`);

    // Fresh connections serve reads and writes again.
    const details = await call(base, 'GET', '/policys/details', bearer);
    assert.equal(details.status, 200, JSON.stringify(details.body));
    // pg-boss works again: a new policyholder's welcome email is sent by the worker.
    const email = 'after.outage@example.com';
    const created = await call(base, 'POST', '/policys', company, livePolicyInput({ proposer: { email } }));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await waitForWelcome(base, email, 40_000);
    // The change feed listens again: a change is read back after this process's own-write shadow
    // (1 s), when only the notification can have dropped the cached row.
    for (let i = 0; i < 3; i++)
      assert.equal((await call(base, 'GET', '/policys/details', bearer)).status, 200);
    const adjusted = await call(base, 'POST', '/policys', company, {
      ...holder.input,
      policy: { ...holder.input.policy, policy_reference: holder.reference },
      vehicle: { ...holder.input.vehicle, colour: 'Green' },
    });
    assert.ok(adjusted.status < 300, JSON.stringify(adjusted.body));
    await sleep(1_500);
    const read = await call(base, 'GET', '/policys/details', bearer);
    assert.equal((read.body['vehicle'] as { colour: string }).colour, 'Green', JSON.stringify(read.body));
    await service.stop();
  },
);
