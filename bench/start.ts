/**
 * The first start: `npm start` on an empty data directory (embedded PGlite) until `/healthz` first
 * answers 200, then a second start on the same directory, each `runs` times (default 3); against a
 * baseline measured in the same run, `node` starting a bare Fastify server and answering the same way.
 *
 *   npm run bench -- start [runs] [schema]   # `schema`: the schema step alone
 *
 * Then the schema step alone, in this process, on in-memory PGlite databases loaded from one empty
 * cluster (so that PGlite's initdb is not timed): every migration one by one against the snapshot, in
 * alternation, `runs` times each.
 *
 * Each start is a new process group killed (SIGTERM, then SIGKILL) once it has answered; the data
 * directory is a new temporary one for every first start. Prints each time, the medians and spread, the
 * ratio of the medians to the baseline, and the load average before and after.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kysely, PGliteDialect } from 'kysely';
import { migrations } from '../src/migrations/index.ts';
import { readSchemaSnapshot } from '../src/migrations/snapshot.ts';
import { migrateFromSnapshot, migrateToLatest } from '../src/platform/db/migrate.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const runs = Number(process.argv[2] ?? 3);
const PORT = 3900 + (process.pid % 90);
const TIMEOUT_MS = 120_000;

/** Polls `url` every 25 ms until it answers 200; the milliseconds since `startedAt`. */
async function firstOk(url: string, startedAt: number, child: ChildProcess): Promise<number> {
  const state = { exited: false };
  child.once('exit', () => (state.exited = true));
  for (;;) {
    if (state.exited) throw new Error('the process exited before /healthz answered');
    if (performance.now() - startedAt > TIMEOUT_MS) throw new Error('no answer from /healthz in time');
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - startedAt;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, 'SIGTERM');
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Runs `command` in its own process group and times it to its first 200 from /healthz. */
async function timeStart(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const startedAt = performance.now();
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    return await firstOk(`http://127.0.0.1:${String(PORT)}/healthz`, startedAt, child);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${stderr}`, { cause: error });
  } finally {
    await stop(child);
  }
}

const BARE = `
  const { default: Fastify } = await import('fastify');
  const app = Fastify();
  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.listen({ port: ${String(PORT)}, host: '127.0.0.1' });
`;

function summary(times: readonly number[]): { median: number; text: string } {
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const text = `median ${(median / 1000).toFixed(2)} s (${sorted.map((t) => (t / 1000).toFixed(2)).join(', ')})`;
  return { median, text };
}

const environment: NodeJS.ProcessEnv = {
  ...process.env,
  PORT: String(PORT),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  // The embedded database: nothing here may point the service at PostgreSQL.
  DATABASE_URL: '',
  MQTT_URL: '',
  SMTP_URL: '',
};
delete environment['ADMIN_API_KEY'];

const load = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const loadBefore = load();
const first: number[] = [];
const second: number[] = [];
const bare: number[] = [];
const startsToo = process.argv[3] !== 'schema';
for (let run = 0; run < (startsToo ? runs : 0); run++) {
  bare.push(await timeStart(process.execPath, ['--input-type=module', '-e', BARE], environment));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'milepost-start-'));
  try {
    const env = { ...environment, DATA_DIR: dataDir };
    first.push(await timeStart('npm', ['start', '--silent'], env));
    second.push(await timeStart('npm', ['start', '--silent'], env));
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  process.stdout.write(
    `run ${String(run + 1)}: first ${(first.at(-1)! / 1000).toFixed(2)} s, second ${(second.at(-1)! / 1000).toFixed(2)} s, bare ${(bare.at(-1)! / 1000).toFixed(2)} s\n`,
  );
}
if (startsToo) {
  const [f, s, b] = [summary(first), summary(second), summary(bare)];
  console.log(`first start (empty data dir): ${f.text}, ${(f.median / b.median).toFixed(1)} × bare`);
  console.log(`second start:                 ${s.text}, ${(s.median / b.median).toFixed(1)} × bare`);
  console.log(`bare Fastify:                 ${b.text}`);
  console.log(`load average before: ${loadBefore}; after: ${load()}`);
}

const { PGlite } = await import('@electric-sql/pglite');
const emptyCluster = await (async () => {
  const pglite = await PGlite.create({});
  try {
    return await pglite.dumpDataDir('none');
  } finally {
    await pglite.close();
  }
})();
const snapshot = await readSchemaSnapshot();
/** Milliseconds `step` takes on a new in-memory database made from the empty cluster. */
async function timeSchemaStep(step: (db: Kysely<unknown>) => Promise<unknown>): Promise<number> {
  const pglite = await PGlite.create({ loadDataDir: emptyCluster });
  const db = new Kysely<unknown>({ dialect: new PGliteDialect({ pglite }) });
  try {
    const startedAt = performance.now();
    await step(db);
    return performance.now() - startedAt;
  } finally {
    await db.destroy();
    if (!pglite.closed) await pglite.close();
  }
}
const oneByOne: number[] = [];
const fromSnapshot: number[] = [];
for (let run = 0; run < runs; run++) {
  oneByOne.push(await timeSchemaStep((db) => migrateToLatest(db, migrations)));
  fromSnapshot.push(await timeSchemaStep((db) => migrateFromSnapshot(db, migrations, snapshot)));
}
const [o, n] = [summary(oneByOne), summary(fromSnapshot)];
console.log(`schema, ${String(Object.keys(migrations).length)} migrations one by one: ${o.text}`);
console.log(`schema from the snapshot:  ${n.text}, ${(n.median / o.median).toFixed(2)} × one by one`);
console.log(`load average: ${load()}`);
