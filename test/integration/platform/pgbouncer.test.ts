import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { CHANGE_FEED_APPLICATION_NAME } from '../../../src/platform/db/change-feed.ts';
import { openDatabase, type DatabaseHandle } from '../../../src/platform/db/database.ts';
import { migrateToLatest } from '../../../src/platform/db/migrate.ts';
import { encodePolyline } from '../../../src/platform/geo/index.ts';
import type { Database } from '../../../src/schema.ts';
import { createTestDatabase, onPostgres } from '../../support/database.ts';
import { freePort } from '../../support/free-port.ts';
import { livePolicyInput } from '../../support/policy-arbitraries.ts';
import {
  call,
  createCompany,
  policyholder,
  startService,
  type Service,
} from '../../reliability/service-processes.ts';

/**
 * The service through PgBouncer in transaction pooling (Debian's 1.18, which cannot keep named prepared
 * statements). Two processes share one PgBouncer started here, with the change feed's LISTEN straight
 * to PostgreSQL (DATABASE_LISTEN_URL) and nothing else set for it: every answer is as expected, a change
 * made through one is read at once through the other, pg-boss's jobs run, and migrations exclude each
 * other. Single and batch journeys at once through two API processes answer no 5xx: with `store_journey`
 * sent as a named statement, 113 of 280 met `prepared statement "store_journey" already exists` /
 * `does not exist` (a server session other than the one that prepared it).
 */
const PGBOUNCER = '/usr/sbin/pgbouncer';
const skip = !onPostgres
  ? 'PostgreSQL only: PgBouncer pools connections to a PostgreSQL server'
  : !existsSync(PGBOUNCER)
    ? `${PGBOUNCER} is absent (Debian's pgbouncer package; .ci/run installs it)`
    : false;

const ROUTE = encodePolyline([51.5074, -0.1278, 51.5101, -0.134, 51.5155, -0.1419], 5);
const JOURNEYS = 120;
const CONCURRENCY = 16;

let database: DatabaseHandle<Database>;
let bouncer: Awaited<ReturnType<typeof startPgBouncer>>;
const services: Service[] = [];

/** DATABASE_URL with its host and port replaced: the same database, reached through PgBouncer. */
function through(port: number, direct: string): string {
  const url = new URL(direct);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

/**
 * PgBouncer in the foreground on a free port, configured in a directory of its own. Its server pool
 * (default_pool_size 8) is smaller than the clients' (two services × 10 + pg-boss's), so client
 * connections change server sessions all the time, as in production.
 */
async function startPgBouncer(direct: string) {
  const target = new URL(direct);
  const user = decodeURIComponent(target.username) || os.userInfo().username;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-pgbouncer-'));
  const port = await freePort();
  const ini = path.join(dir, 'pgbouncer.ini');
  await fs.writeFile(path.join(dir, 'userlist.txt'), `"${user}" ""\n`);
  await fs.writeFile(
    ini,
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${String(port)}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      'default_pool_size = 8',
      'max_client_conn = 200',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      'pidfile =',
      // The service sends `options` (its sessions' client check; docs/operations.md), as psql's PGOPTIONS and
      // JDBC's extra_float_digits do; PgBouncer refuses a startup parameter it does not know.
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: as root (CI's container), it switches to nobody, who must write its log.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await fs.chmod(dir, 0o777);
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'nobody'] : []), ini], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-10_000);
  });
  const url = through(port, direct);
  for (let attempt = 0; ; attempt++) {
    const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await probe.connect();
      await probe.query('select 1');
      break;
    } catch (error) {
      if (attempt >= 100 || child.exitCode !== null) {
        child.kill('SIGKILL');
        assert.fail(`PgBouncer did not start: ${String(error)}\n${stderr}`);
      }
      await sleep(100);
    } finally {
      await probe.end().catch(() => undefined);
    }
  }
  return {
    url,
    /** PgBouncer's console (SHOW CLIENTS, …): simple queries on the database `pgbouncer`. */
    async show(what: string): Promise<Array<Record<string, unknown>>> {
      const consoleUrl = new URL(url);
      consoleUrl.pathname = '/pgbouncer';
      const admin = new pg.Client({ connectionString: consoleUrl.toString() });
      await admin.connect();
      try {
        return (await admin.query(`show ${what}`)).rows as Array<Record<string, unknown>>;
      } finally {
        await admin.end();
      }
    },
    async stop(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

before(async () => {
  if (skip !== false) return;
  database = await createTestDatabase();
  bouncer = await startPgBouncer(database.connectionString!);
});
after(async () => {
  if (skip !== false) return;
  for (const service of services) service.child.kill('SIGKILL');
  await bouncer.stop();
  await database.close();
});

async function start(role: 'all' | 'api'): Promise<Service> {
  const service = await startService(role, bouncer.url, {
    DATABASE_LISTEN_URL: database.connectionString!,
  });
  services.push(service);
  return service;
}

const unix = (ms: number) => Math.floor(ms / 1000);

/** `count` journeys of one policy, `concurrency` at a time, alternating between the processes' sockets. */
async function journeyBurst(
  bases: readonly string[],
  company: Record<string, string>,
  reference: string,
  firstStart: number,
  tag: string,
  count: number,
) {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        const startAt = firstStart + i * 3600;
        const answer = await call(bases[i % bases.length]!, 'POST', '/journeys', company, {
          policy_reference: reference,
          provider_reference: `${tag}-${String(i)}`,
          route: ROUTE,
          start_time: startAt,
          end_time: startAt + 600,
        });
        statuses.push(answer.status);
      }
    }),
  );
  return statuses;
}

const tally = (statuses: readonly number[]) =>
  JSON.stringify(
    Object.fromEntries([...new Set(statuses)].map((s) => [s, statuses.filter((x) => x === s).length])),
  );

test(
  'two processes through one PgBouncer (transaction pooling, LISTEN direct): everything works',
  { skip, timeout: 120_000 },
  async (t) => {
    // Together, as a deployment starts them: their migrations meet (nothing pending on this clone).
    const [all, api] = await Promise.all([start('all'), start('api')]);
    const company = await createCompany(api.base, 'Pooled');

    // A policy made through the API process, its welcome email sent by the ROLE=all worker (pg-boss
    // through PgBouncer), then the policyholder's logins (the new password, then with it).
    const holder = await policyholder(api.base, company, 'pooled.holder@example.com');
    const me = await call(api.base, 'GET', '/policys/details', {
      authorization: `Bearer ${holder.accessToken}`,
    });
    assert.equal(me.status, 200, JSON.stringify(me.body));

    // Journeys through both processes at once: the store_journey statement, hundreds of times over
    // connections that change server sessions.
    const termStart = holder.input.policy.start_date;
    const statuses = await journeyBurst(
      [all.base, api.base],
      company,
      holder.reference,
      termStart + 3600,
      'pgb',
      JOURNEYS,
    );
    t.diagnostic(`journeys: ${tally(statuses)}`);
    assert.deepEqual(tally(statuses), tally(statuses.map(() => 201)));
    const repeat = await call(api.base, 'POST', '/journeys', company, {
      policy_reference: holder.reference,
      provider_reference: 'pgb-0',
      route: ROUTE,
      start_time: termStart + 3600,
      end_time: termStart + 3600 + 600,
    });
    assert.equal(repeat.status, 200, 'a repeat answers the stored journey');
    const listed = await call(
      all.base,
      'GET',
      `/journeys?policy_reference=${holder.reference}&limit=500`,
      company,
    );
    assert.equal(listed.status, 200);
    const ours = (listed.body['journeys'] as Array<{ provider_reference: string | null }>).filter((j) =>
      j.provider_reference?.startsWith('pgb-'),
    );
    assert.equal(ours.length, JOURNEYS);

    // Positions from a bound device.
    const device = await call(api.base, 'POST', '/devices', company, {
      device_id: 'pgb-device',
      policy_reference: holder.reference,
      kind: 'obd',
    });
    assert.equal(device.status, 201, JSON.stringify(device.body));
    // From the binding on (earlier ones are outside it), within the 5 minutes of clock skew allowed.
    const fixStart =
      unix(Date.parse((device.body['bindings'] as Array<{ bound_at: string }>)[0]!.bound_at)) + 1;
    const positions = await call(api.base, 'POST', '/telematics/positions', company, {
      device_id: 'pgb-device',
      positions: Array.from({ length: 60 }, (_, i) => ({
        time: fixStart + i,
        lat: 51.5 + i * 0.00009,
        lon: -0.14,
        speed_kmh: 36,
        ignition: true,
      })),
    });
    assert.equal(positions.status, 202, JSON.stringify(positions.body));
    assert.equal(positions.body['accepted'], 60);

    // A statement over the journeys.
    const statement = await call(all.base, 'POST', '/statements', company, {
      policy_reference: holder.reference,
      effective_date: termStart + 10 * 86_400 - 1,
    });
    assert.equal(statement.status, 201, JSON.stringify(statement.body));
    assert.equal(statement.body['journey_count'], JOURNEYS);

    // The change feed: the API process has the policy in memory; an adjustment through the other
    // process reaches it by NOTIFY on its direct connection, so the very next read shows it.
    for (let i = 0; i < 3; i++) {
      const read = await call(api.base, 'GET', `/policys/${holder.reference}`, company);
      assert.equal(read.status, 200);
    }
    const adjusted = await call(all.base, 'POST', '/policys', company, {
      ...holder.input,
      policy: { ...holder.input.policy, policy_reference: holder.reference },
      vehicle: { ...holder.input.vehicle, colour: 'Green' },
    });
    assert.ok(adjusted.status < 300, JSON.stringify(adjusted.body));
    const seen = await call(api.base, 'GET', `/policys/${holder.reference}`, company);
    assert.equal((seen.body['vehicle'] as { colour: string }).colour, 'Green');

    // The LISTEN connections went straight to PostgreSQL: PgBouncer never saw them.
    const clients = await bouncer.show('clients');
    assert.ok(clients.length > 0, 'the pools go through PgBouncer');
    assert.ok(!clients.some((c) => c['application_name'] === CHANGE_FEED_APPLICATION_NAME));
    const listeners = await sql<{ count: number }>`
      select count(*)::int as count from pg_stat_activity
      where datname = current_database() and application_name = ${CHANGE_FEED_APPLICATION_NAME}`.execute(
      database.db,
    );
    assert.equal(listeners.rows[0]?.count, 2, 'one LISTEN connection per process, direct');

    // No process died on the way (a crash would show here; their logs go to stdout, not kept).
    for (const service of [all, api]) assert.equal(service.exited(), false);
    await Promise.all([all.stop(), api.stop()]);
  },
);

test('migrations through PgBouncer exclude each other and leave no lock behind', { skip }, async () => {
  // A database of its own: these are not the service's migrations.
  const name = `milepost_pgb_${randomBytes(6).toString('hex')}`;
  await sql.raw(`create database "${name}"`).execute(database.db);
  const url = new URL(bouncer.url);
  url.pathname = `/${name}`;
  const handles = await Promise.all(
    [1, 2].map(() => openDatabase<Database>({ connectionString: url.toString(), poolSize: 4 })),
  );
  try {
    const migrations = {
      '0001-slow': {
        async up(db: Kysely<unknown>) {
          await sql`select pg_sleep(0.5)`.execute(db);
          await sql`create table things (id int primary key)`.execute(db);
        },
      },
    };
    // Kysely's session lock, through transaction pooling, let both run it: one failed on pg_type.
    const applied = await Promise.all(handles.map((h) => migrateToLatest(h.db as never, migrations)));
    assert.deepEqual(applied.map((a) => a.length).sort(), [0, 1]);
    const locks = await sql<{ count: number }>`
      select count(*)::int as count from pg_locks l join pg_database d on d.oid = l.database
      where l.locktype = 'advisory' and d.datname = ${name}`.execute(database.db);
    assert.equal(locks.rows[0]?.count, 0);
  } finally {
    for (const h of handles) await h.close();
    await sql.raw(`drop database if exists "${name}" with (force)`).execute(database.db);
  }
});

test('DatabaseHandle.prepared through PgBouncer: 200 statements at once, none fails', { skip }, async () => {
  // Many more than the server pool's 8 sessions, so clients' statements land on each other's sessions.
  const handle = await openDatabase<Database>({ connectionString: bouncer.url, poolSize: 20 });
  try {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => handle.prepared<{ n: number }>('select $1::int as n', [i])),
    );
    const errors = outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []));
    assert.deepEqual(errors, []);
    const answers = outcomes.map((o) => (o.status === 'fulfilled' ? o.value[0]?.n : undefined));
    assert.deepEqual(
      answers,
      Array.from({ length: 200 }, (_, i) => i),
    );
  } finally {
    await handle.close();
  }
});

/** A batch of `count` journeys of one policy, an hour apart from `firstStart`. */
function batchOf(reference: string, firstStart: number, tag: string, count: number) {
  return {
    journeys: Array.from({ length: count }, (_, i) => ({
      policy_reference: reference,
      provider_reference: `${tag}-${String(i)}`,
      route: ROUTE,
      start_time: firstStart + i * 3600,
      end_time: firstStart + i * 3600 + 600,
    })),
  };
}

test(
  'two API processes through one PgBouncer (transaction pooling): single and batch journeys at once, no 5xx',
  { skip, timeout: 180_000 },
  async (t) => {
    // As the service starts by default: DATABASE_URL through PgBouncer and nothing else to set but the
    // change feed's direct LISTEN.
    const [left, right] = await Promise.all([start('api'), start('api')]);
    const company = await createCompany(left.base, 'Mixed');
    const policy = async (email: string) => {
      const input = livePolicyInput({ proposer: { email } });
      const created = await call(right.base, 'POST', '/policys', company, input);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      return { reference: created.body['policy_reference'] as string, termStart: input.policy.start_date };
    };
    const single = await policy('mixed.single@example.com');
    const batched = await policy('mixed.batched@example.com');

    // 20 at once, as the failure was met: 16 lanes of single journeys alternating between the processes,
    // and 4 lanes of batches (BATCHES × BATCH_SIZE journeys of another policy), each batch an hour-slot
    // range of its own.
    const BATCHES = 8;
    const BATCH_SIZE = 20;
    const batchStatuses: number[] = [];
    const itemStatuses: number[] = [];
    let nextBatch = 0;
    const [singleStatuses] = await Promise.all([
      journeyBurst(
        [left.base, right.base],
        company,
        single.reference,
        single.termStart + 3600,
        'mixed',
        JOURNEYS,
      ),
      ...Array.from({ length: 4 }, async () => {
        while (nextBatch < BATCHES) {
          const b = nextBatch++;
          const answer = await call(
            [left.base, right.base][b % 2]!,
            'POST',
            '/journeys/batch',
            company,
            batchOf(
              batched.reference,
              batched.termStart + 3600 + b * BATCH_SIZE * 3600,
              `batch${String(b)}`,
              BATCH_SIZE,
            ),
          );
          batchStatuses.push(answer.status);
          for (const result of (answer.body['results'] ?? []) as Array<{ status: number }>)
            itemStatuses.push(result.status);
        }
      }),
    ]);
    t.diagnostic(
      `single ${tally(singleStatuses)}; batch ${tally(batchStatuses)}, its items ${tally(itemStatuses)}`,
    );
    const failed = [...singleStatuses, ...batchStatuses, ...itemStatuses].filter((s) => s >= 500);
    assert.equal(failed.length, 0, `${String(failed.length)} answers were 5xx`);
    assert.deepEqual(tally(singleStatuses), tally(singleStatuses.map(() => 201)));
    assert.deepEqual(tally(batchStatuses), tally(batchStatuses.map(() => 200)));
    assert.deepEqual(tally(itemStatuses), tally(Array.from({ length: BATCHES * BATCH_SIZE }, () => 201)));

    // Every journey is stored once.
    for (const [reference, count] of [
      [single.reference, JOURNEYS],
      [batched.reference, BATCHES * BATCH_SIZE],
    ] as const) {
      const listed = await call(
        left.base,
        'GET',
        `/journeys?policy_reference=${reference}&limit=500`,
        company,
      );
      assert.equal(listed.status, 200);
      assert.equal((listed.body['journeys'] as unknown[]).length, count);
    }
    for (const service of [left, right]) assert.equal(service.exited(), false);
    await Promise.all([left.stop(), right.stop()]);
  },
);
