import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { MIGRATION_LOCK_KEY, type DatabaseHandle } from '../../../src/platform/db/database.ts';
import type { Database } from '../../../src/schema.ts';
import { TEST_ADMIN_KEY } from '../../support/app.ts';
import { createTestDatabase, onPostgres } from '../../support/database.ts';
import { freePort } from '../../support/free-port.ts';

// The real entry point (`node src/main.ts`) in a process of its own, as an operator starts it: on a
// fresh PostgreSQL database, or on an embedded one in a directory of its own (both processes below use
// it in turn, so the second start finds it migrated).
const MAIN = path.resolve(import.meta.dirname, '../../../src/main.ts');
const STARTUP_MS = 120_000;

let database: DatabaseHandle<Database> | undefined;
let dataDir: string;

before(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-ports-'));
  if (onPostgres) database = await createTestDatabase();
});
after(async () => {
  await database?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

/** `node src/main.ts` with `env`; `started` resolves at its "milepost started" log line, `exited` with its exit. */
function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env['PATH'] ?? '',
      HOST: '127.0.0.1',
      ADMIN_API_KEY: TEST_ADMIN_KEY,
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      DATABASE_URL: database?.connectionString ?? '',
      // Its own daily billing run stays out of the way.
      BILLING_RUN_AT: '23:59',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const started = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('milepost started')) resolve();
    });
    void exited.then((code) => {
      reject(new Error(`exited with ${String(code)} before it started: ${stderr.slice(-2000)}`));
    });
  });
  started.catch(() => undefined);
  return {
    started,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop(): Promise<void> {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `work`, or a failure naming `what` once `ms` have passed (a process left running is stopped by the caller). */
async function within<T>(work: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`${what()} after ${String(ms)} ms`));
        }, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `work` while another session holds the migration lock in an open transaction, as a process
 * stopped mid-migration would; `release` commits that transaction.
 */
async function withMigrationLockHeld(
  work: (held: { pid: number; release: () => Promise<void> }) => Promise<void>,
): Promise<void> {
  const holder = new pg.Client({ connectionString: database!.connectionString });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query(`select pg_advisory_xact_lock(${String(MIGRATION_LOCK_KEY)})`);
    const { rows } = await holder.query<{ pid: number }>('select pg_backend_pid() as pid');
    await work({
      pid: rows[0]!.pid,
      release: async () => {
        await holder.query('commit');
      },
    });
  } finally {
    await holder.end();
  }
}

/** The start's log line saying it waits for the migration lock, once it is written. */
async function waitingLine(service: ReturnType<typeof startMain>): Promise<string> {
  for (const until = Date.now() + STARTUP_MS; Date.now() < until;) {
    const line = service
      .stdout()
      .split('\n')
      .find((l) => l.includes('waiting for the migration lock'));
    if (line !== undefined) return line;
    await sleep(50);
  }
  assert.fail(`no line about the migration lock: ${service.stdout().slice(-2000)}`);
}

describe('every process serves its health and metrics on PORT', { timeout: 8 * STARTUP_MS }, () => {
  test('a worker (ROLE=worker) answers /healthz, /readyz and /metrics, and 404 for anything else', async () => {
    const port = await freePort();
    const worker = startMain({ ROLE: 'worker', PORT: String(port) });
    try {
      await within(worker.started, STARTUP_MS, () => `the worker did not start: ${worker.stderr()}`);
      const base = `http://127.0.0.1:${String(port)}`;

      const health = await fetch(`${base}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: 'ok' });
      const ready = await fetch(`${base}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready', database: 'ok' });

      const metrics = await fetch(`${base}/metrics`);
      assert.equal(metrics.status, 200);
      assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
      const text = await metrics.text();
      // What only the worker knows: its job queues, its billing runs, its own process.
      assert.match(text, /^jobs\{queue="statements\.bill-chunk",state="queued"\} \d+$/m);
      assert.match(text, /^# TYPE billing_run_policies_total counter$/m);
      assert.match(text, /^process_resident_memory_bytes \d+/m);
      // Its own requests are counted too, as on an API process.
      assert.match(
        text,
        /^http_request_duration_seconds_count\{method="GET",route="\/healthz",status_code="200"\} 1$/m,
      );

      for (const url of ['/', '/policys', '/docs', '/openapi.json', '/admin/companies', '/app/']) {
        const other = await fetch(`${base}${url}`);
        assert.equal(other.status, 404, url);
        assert.equal(other.headers.get('content-type'), 'application/problem+json; charset=utf-8', url);
        assert.equal(((await other.json()) as { code: string }).code, 'ROUTE_NOT_FOUND', url);
      }
    } finally {
      await worker.stop();
    }
  });

  for (const role of ['all', 'worker'] as const) {
    test(`a PORT already taken (ROLE=${role}): one line naming the port, a non-zero exit, no stack trace`, async () => {
      const holder = net.createServer();
      holder.listen(0, '127.0.0.1');
      await once(holder, 'listening');
      const { port } = holder.address() as net.AddressInfo;
      try {
        const service = startMain({ ROLE: role, PORT: String(port) });
        try {
          const code = await within(service.exited, STARTUP_MS, () => `still running: ${service.stderr()}`);
          assert.equal(code, 78, service.stderr());
          assert.equal(service.stderr(), `milepost: port ${String(port)} is in use: set PORT\n`);
        } finally {
          await service.stop();
        }
      } finally {
        holder.close();
      }
    });
  }

  test('a HOST that is no address of this machine: one line naming HOST, exit 78, no stack trace', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never a local address.
    const service = startMain({ HOST: '192.0.2.1', PORT: String(await freePort()) });
    try {
      const code = await within(service.exited, STARTUP_MS, () => `still running: ${service.stderr()}`);
      assert.equal(code, 78, service.stderr());
      assert.equal(
        service.stderr(),
        'milepost: cannot listen on HOST 192.0.2.1 (EADDRNOTAVAIL): set HOST to an address of this machine\n',
      );
    } finally {
      await service.stop();
    }
  });

  test('a DATABASE_URL nothing answers at, or that names no database: one line naming it without its password, exit 69', async () => {
    const closed = await freePort();
    const named = new URL(database?.connectionString ?? 'postgres://root@127.0.0.1:5432/test');
    named.pathname = '/milepost_no_such_database';
    for (const [url, expected] of [
      [
        `postgres://milepost:hunter2@127.0.0.1:${String(closed)}/milepost`,
        `milepost: cannot use the database at DATABASE_URL (127.0.0.1:${String(closed)}/milepost): connect ECONNREFUSED 127.0.0.1:${String(closed)}\n`,
      ],
      ...(onPostgres
        ? [
            [
              named.href,
              `milepost: cannot use the database at DATABASE_URL (${named.hostname}:${named.port || '5432'}/milepost_no_such_database): database "milepost_no_such_database" does not exist\n`,
            ],
          ]
        : []),
    ]) {
      const service = startMain({ DATABASE_URL: url as string, PORT: String(await freePort()) });
      try {
        const code = await within(service.exited, STARTUP_MS, () => `still running: ${service.stderr()}`);
        assert.equal(code, 69, service.stderr());
        assert.equal(service.stderr(), expected);
      } finally {
        await service.stop();
      }
    }
  });

  test(
    'a DATABASE_URL naming a database that takes no writes (a standby): one line saying so, exit 69',
    { skip: onPostgres ? false : 'needs PostgreSQL: the embedded database is never read-only' },
    async () => {
      const db = database!.db;
      const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(db);
      const name = sql.id(rows[0]!.name);
      await sql`alter database ${name} set default_transaction_read_only = on`.execute(db);
      const service = startMain({ PORT: String(await freePort()) });
      try {
        const code = await within(service.exited, STARTUP_MS, () => `still running: ${service.stderr()}`);
        assert.equal(code, 69, service.stderr());
        assert.match(
          service.stderr(),
          /^milepost: cannot use the database at DATABASE_URL \([^)]+\): cannot execute .* in a read-only transaction \(it accepts no writes: a hot standby, or default_transaction_read_only is on\)\n$/,
        );
      } finally {
        await service.stop();
        await sql`alter database ${name} reset default_transaction_read_only`.execute(db);
      }
    },
  );

  test(
    'a start that finds the migration lock held says so, naming the session that holds it, and goes on once it is released',
    { skip: onPostgres ? false : 'needs PostgreSQL: the embedded database has one session' },
    async () => {
      await withMigrationLockHeld(async (held) => {
        const service = startMain({ PORT: String(await freePort()) });
        try {
          const line = JSON.parse(await waitingLine(service)) as { holder?: { pid?: number } };
          assert.equal(line.holder?.pid, held.pid);
          await held.release();
          await within(service.started, STARTUP_MS, () => `not started: ${service.stderr()}`);
        } finally {
          await service.stop();
        }
      });
    },
  );

  test(
    "a statement_timeout the database sets cuts neither the migrations nor a start's wait for their lock",
    { skip: onPostgres ? false : 'needs PostgreSQL: the embedded database has one session' },
    async () => {
      const db = database!.db;
      const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(db);
      const name = sql.id(rows[0]!.name);
      await sql`alter database ${name} set statement_timeout = '1s'`.execute(db);
      try {
        await withMigrationLockHeld(async (held) => {
          const service = startMain({ PORT: String(await freePort()) });
          try {
            // Held past the database's statement_timeout, once the start waits for it.
            await waitingLine(service);
            await sleep(1_500);
            await held.release();
            await within(service.started, STARTUP_MS, () => `not started: ${service.stderr()}`);
          } finally {
            await service.stop();
          }
        });
      } finally {
        await sql`alter database ${name} reset statement_timeout`.execute(db);
      }
    },
  );

  test('a DATA_DIR that cannot be made or written (a file, a read-only disk): one line naming it, exit 73', async () => {
    const file = path.join(dataDir, 'not-a-directory');
    await fs.writeFile(file, '');
    for (const given of [file, path.join(file, 'data')]) {
      // Embedded, whichever database the suite runs on: DATA_DIR is the embedded database's.
      const service = startMain({ DATABASE_URL: '', DATA_DIR: given, PORT: String(await freePort()) });
      try {
        const code = await within(service.exited, STARTUP_MS, () => `still running: ${service.stderr()}`);
        assert.equal(code, 73, service.stderr());
        assert.match(
          service.stderr(),
          new RegExp(
            `^milepost: the data directory ${given.replaceAll('.', '\\.')} cannot be created or written \\((EEXIST|ENOTDIR): [^\\n]*\\): set DATA_DIR to a directory this process may write\\n$`,
          ),
        );
      } finally {
        await service.stop();
      }
    }
  });

  test('SIGTERM while a request waits on a processor that does not answer: cut at SHUTDOWN_TIMEOUT_MS, and a clean stop', async () => {
    const calls: string[] = [];
    const silent = http.createServer((request) => {
      calls.push(`${String(request.method)} ${String(request.url)}`);
    });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const processor = `http://127.0.0.1:${String((silent.address() as net.AddressInfo).port)}/sandbox/stripe`;
    const port = await freePort();
    const service = startMain({
      PORT: String(port),
      SHUTDOWN_TIMEOUT_MS: '2000',
      SANDBOX_STRIPE_API_BASE: processor,
    });
    try {
      await within(service.started, STARTUP_MS, () => `did not start: ${service.stderr()}`);
      const base = `http://127.0.0.1:${String(port)}`;
      const company = (await (
        await fetch(`${base}/admin/companies`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Acme' }),
        })
      ).json()) as { client_id: string; client_secret_sandbox: string };
      const held = fetch(`${base}/payments`, {
        method: 'POST',
        headers: {
          client_id: company.client_id,
          client_secret: company.client_secret_sandbox,
          environment: 'sandbox',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ product_reference: 'ppm-motor', type: 'CREATE_PAYMENT_INTENT', amount: 9550 }),
      }).then(
        (response) => `answered ${String(response.status)}`,
        () => 'cut',
      );
      for (let i = 0; i < 200 && calls.length === 0; i++) await sleep(25);
      assert.equal(calls.length, 1, 'the request waits on the processor');

      const signalledAt = Date.now();
      const stopped = service.stop();
      assert.equal(await held, 'cut');
      const code = await within(service.exited, STARTUP_MS, () => `still running: ${service.stderr()}`);
      await stopped;
      // The forced exit, SHUTDOWN_TIMEOUT_MS + 5 s after the signal, exits with 1.
      assert.equal(code, 0, service.stderr());
      assert.ok(
        Date.now() - signalledAt < 2_000 + 4_000,
        `stopped after ${String(Date.now() - signalledAt)} ms`,
      );
    } finally {
      await service.stop();
      silent.closeAllConnections();
      silent.close();
    }
  });
});
