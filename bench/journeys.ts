/**
 * POST /journeys with a 1,000-point route through the full service on PostgreSQL, next to a bare Fastify
 * route doing the same single INSERT, in the same run.
 *
 *   npm run bench -- journeys        (BENCH_SECONDS=5 per phase, BENCH_POLICIES=200, BENCH_POSTGRES_URL=postgres://root@127.0.0.1:5432/postgres)
 *
 * The service measured is an API process started as `npm start` starts one: dist/main.js (built here
 * first, as `prestart` does) with the start script's Node flags and environment (MALLOC_ARENA_MAX), and
 * ROLE=api. To try others, BENCH_NODE_FLAGS replaces the flags, BENCH_NODE_ENV (`NAME=value …`) the
 * environment and BENCH_NODE_ENTRY the entry point (src/main.ts: Node strips the types as it loads).
 *
 * A throw-away database is created on the server for the run and dropped after. Journeys are spread over
 * BENCH_POLICIES policies (devices), each a minute long and two minutes apart, so none overlaps and each
 * request stores a row; every one carries a `provider_reference`. Targets (DESIGN §5): ≥ 3,000 req/s,
 * ≥ 80 % of the bare route, p99 ≤ 40 ms.
 *
 * BENCH_TRACES=on runs the service with tracing on, exporting to an OTLP/HTTP receiver in this process
 * that counts and drops the spans (a collector's cost is not the service's). Each run also reports the
 * service's CPU time per request (from /proc), steadier than throughput on a loaded machine, with the
 * bare route's and, when PostgreSQL runs on this machine, its backends' for each: where a request's CPU
 * goes on a machine whose cores the servers, the database and the load generator share.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { buildDist } from '../src/build.ts';
import { encodePolyline } from '../src/platform/geo/index.ts';
import { freePort } from '../test/support/free-port.ts';
import {
  BENCH_POSTGRES_URL,
  backendCpuSeconds,
  backendCpuSpent,
  processCpuSeconds,
  combined,
  load,
  report,
  startServer,
  withScratchDatabase,
  type LoadResult,
  createBenchCompany,
  createBenchPolicy,
} from './support.ts';

const seconds = Number(process.env['BENCH_SECONDS'] ?? 5);
const policyCount = Number(process.env['BENCH_POLICIES'] ?? 200);
const ADMIN_API_KEY = `bench-admin-${randomBytes(16).toString('hex')}`;

/** A GPS trace of 1,000 points a few tens of metres apart through central London (seeded, so every run sends the same). */
function londonTrace(points: number): string {
  let state = 42;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  const out: number[] = [];
  let lat = 51.5;
  let lng = -0.14;
  let bearing = 0.7;
  for (let k = 0; k < points; k++) {
    out.push(lat, lng);
    bearing += (random() - 0.5) * 0.6;
    const metres = 15 + random() * 25;
    lat += (metres * Math.cos(bearing)) / 111_200;
    lng += (metres * Math.sin(bearing)) / (111_200 * Math.cos((lat * Math.PI) / 180));
  }
  return encodePolyline(out, 5);
}

/** The start script's environment assignments, Node flags and entry point (`NAME=value node --flag … dist/main.js`). */
function startCommand(): { env: Record<string, string>; flags: string[]; entry: string } {
  const { scripts } = JSON.parse(
    fs.readFileSync(path.resolve(import.meta.dirname, '../package.json'), 'utf8'),
  ) as { scripts: { start: string } };
  const words = scripts.start.split(/\s+/).filter(Boolean);
  const envWords =
    process.env['BENCH_NODE_ENV']?.split(/\s+/).filter(Boolean) ?? words.filter((w) => /^[A-Z_]+=/.test(w));
  const flags =
    process.env['BENCH_NODE_FLAGS']?.split(/\s+/).filter(Boolean) ?? words.filter((w) => w.startsWith('--'));
  const entry = process.env['BENCH_NODE_ENTRY'] ?? words.find((w) => /\.(js|ts)$/.test(w)) ?? 'dist/main.js';
  return {
    env: Object.fromEntries(envWords.map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)])),
    flags,
    entry,
  };
}

/** The service as `npm start` runs it, in the API role; resolves once /healthz answers. */
async function startService(env: Record<string, string>) {
  const command = startCommand();
  const port = await freePort();
  const dataDir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'milepost-bench-'));
  const child = spawn(process.execPath, [...command.flags, command.entry], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: {
      ...process.env,
      ...command.env,
      ...env,
      ROLE: 'api',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${String(port)}`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`${command.entry} exited with ${String(child.exitCode)}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (attempt > 600) throw new Error(`${command.entry} did not answer /healthz within a minute`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    child,
    command,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      await fs.promises.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** An OTLP/HTTP endpoint that counts the spans it is sent (as JSON) and drops them. */
async function startSpanSink() {
  let spans = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      spans += Buffer.concat(chunks).toString('utf8').split('"spanId"').length - 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    spans: () => spans,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Resident memory of a process now, from /proc (Linux). */
function rssMegabytes(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) / 1024;
  } catch {
    return undefined;
  }
}

/** Where an RSS goes, from the server's own /metrics (prom-client's default Node.js metrics), in MB. */
function memoryBreakdown(metrics: string): string {
  const megabytes = (name: string) =>
    [...metrics.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\d+)`, 'gm'))]
      .map((m) => ({ labels: m[1] ?? '', mb: Number(m[2]) / 1e6 }))
      .filter((m) => m.mb >= 1);
  const one = (name: string) => (megabytes(name)[0]?.mb ?? 0).toFixed(0);
  const spaces = megabytes('nodejs_heap_space_size_total_bytes')
    .map((m) => `${/space="(\w+)"/.exec(m.labels)?.[1] ?? '?'} ${m.mb.toFixed(0)}`)
    .join(', ');
  return `V8 heap ${one('nodejs_heap_size_total_bytes')} (${spaces}; ${one('nodejs_heap_size_used_bytes')} in use), external ${one('nodejs_external_memory_bytes')}`;
}

const route = londonTrace(1000);
const nowSeconds = Math.floor(Date.now() / 1000);

/** Bodies for successive requests: policy k % n, slot ⌊k / n⌋ going back in time, so none overlaps. */
function bodies(policyReferences: readonly string[], label: string) {
  let k = 0;
  return () => {
    const policy = policyReferences[k % policyReferences.length]!;
    const slot = Math.floor(k / policyReferences.length);
    k++;
    const start = nowSeconds - 3600 - slot * 120;
    return JSON.stringify({
      route,
      start_time: start,
      end_time: start + 60,
      policy_reference: policy,
      provider_reference: `${label}-${k}`,
    });
  };
}

async function run(
  url: string,
  headers: Record<string, string>,
  next: () => string,
  durationSeconds: number,
): Promise<LoadResult> {
  return load({
    url: `${url}/journeys`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', ...headers },
    requests: [{ setupRequest: (request: object) => ({ ...request, body: next() }) }],
    duration: durationSeconds,
  });
}

await withScratchDatabase(BENCH_POSTGRES_URL, async (DATABASE_URL) => {
  // ── Milepost ────────────────────────────────────────────────────────────────────────────────────
  // Seeded through one server process and measured on a fresh one: creating policies hashes passwords
  // with argon2id (19 MiB each), whose memory the allocator keeps, and that is not what is measured here.
  const seeder = await startServer('servers/journeys-milepost.ts', { DATABASE_URL, ADMIN_API_KEY });
  let headers: Record<string, string>;
  const references: string[] = [];
  try {
    headers = await createBenchCompany(seeder.url, ADMIN_API_KEY);
    for (let start = 0; start < policyCount; start += 8) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(8, policyCount - start) }, (_, i) =>
          createBenchPolicy(seeder.url, headers, `bench${String(start + i)}@example.com`, nowSeconds),
        ),
      );
      references.push(...batch);
    }
  } finally {
    await seeder.stop();
  }
  // Both servers up side by side, loaded in turn (bare, ours, ours, bare, bare, ours): this machine's
  // speed drifts by tens of per cent over a minute, and alternating lets the drift fall on both alike.
  const bench = new pg.Client({ connectionString: DATABASE_URL });
  await bench.connect();
  await bench.query('create table bare_journeys (like journeys including all)');
  if (startCommand().entry.startsWith('dist/')) buildDist(); // as `npm start`'s prestart does
  const sink = process.env['BENCH_TRACES'] === 'on' ? await startSpanSink() : undefined;
  const ours = await startService({
    DATABASE_URL,
    ADMIN_API_KEY,
    ...(sink === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }),
  });
  const bare = await startServer('servers/journeys-bare.ts', { DATABASE_URL });
  const oursPhases: LoadResult[] = [];
  const barePhases: LoadResult[] = [];
  const cpuMicrosecondsPerRequest: number[] = [];
  const perRequest = { oursDatabase: [] as number[], bare: [] as number[], bareDatabase: [] as number[] };
  let oursRss: number | undefined;
  let idleRss: number | undefined;
  let memory = '';
  try {
    await new Promise((resolve) => setTimeout(resolve, 2000)); // the geocoder loads in the background
    idleRss = rssMegabytes(ours.child.pid);
    const nextOurs = bodies(references, 'milepost');
    const bareReferences = Array.from({ length: policyCount }, () => randomUUID());
    const nextBare = bodies(bareReferences, 'bare');
    // Warm-up: the JIT's optimised code, every pooled connection opened and its function plans cached.
    await run(ours.url, headers, nextOurs, 5);
    await run(bare.url, {}, nextBare, 5);
    for (const turn of ['bare', 'ours', 'ours', 'bare', 'bare', 'ours'] as const) {
      const server = turn === 'ours' ? ours : bare;
      const cpuBefore = processCpuSeconds(server.child.pid);
      const databaseBefore = await backendCpuSeconds(bench);
      const phase =
        turn === 'ours'
          ? await run(ours.url, headers, nextOurs, seconds)
          : await run(bare.url, {}, nextBare, seconds);
      const requests = phase.requestsPerSecond * seconds;
      const cpu = ((processCpuSeconds(server.child.pid) - cpuBefore) * 1e6) / requests;
      const database = (backendCpuSpent(databaseBefore, await backendCpuSeconds(bench)) * 1e6) / requests;
      if (turn === 'ours') {
        cpuMicrosecondsPerRequest.push(cpu);
        perRequest.oursDatabase.push(database);
        oursPhases.push(phase);
      } else {
        perRequest.bare.push(cpu);
        perRequest.bareDatabase.push(database);
        barePhases.push(phase);
      }
    }
    oursRss = rssMegabytes(ours.child.pid);
    memory = memoryBreakdown(await (await fetch(`${ours.url}/metrics`)).text());
  } finally {
    await ours.stop();
    await bare.stop();
    await sink?.close();
    await bench.end();
  }
  const result = combined(oursPhases);
  const baseline = combined(barePhases);

  process.stdout.write(
    `POST /journeys, 1,000-point route (${route.length} characters), ${policyCount} policies, 50 connections, 3 × ${seconds} s each, PostgreSQL\n`,
  );
  report('journeys', result, baseline, 0.8);
  process.stdout.write(
    `phases: milepost ${oursPhases.map((p) => `${p.requestsPerSecond.toFixed(0)} req/s p99 ${String(p.p99Ms)} ms`).join(', ')}; baseline ${barePhases.map((p) => `${p.requestsPerSecond.toFixed(0)} req/s p99 ${String(p.p99Ms)} ms`).join(', ')}\n`,
  );
  process.stdout.write(
    `milepost CPU per request: ${cpuMicrosecondsPerRequest.map((us) => `${us.toFixed(0)} µs`).join(', ')}; tracing ${sink === undefined ? 'off' : `on, ${String(sink.spans())} spans exported`}\n`,
  );
  const micros = (values: readonly number[]) => values.map((us) => `${us.toFixed(0)} µs`).join(', ');
  process.stdout.write(
    `database backends' CPU per request: milepost ${micros(perRequest.oursDatabase)}; baseline ${micros(perRequest.bareDatabase)}; baseline server's CPU per request ${micros(perRequest.bare)}\n`,
  );
  const absolute = result.requestsPerSecond >= 3000 && result.p99Ms <= 40;
  process.stdout.write(
    `journeys: ${result.requestsPerSecond.toFixed(0)} req/s (target ≥ 3,000), p99 ${result.p99Ms.toFixed(1)} ms (target ≤ 40) ${absolute ? 'ok' : 'BELOW TARGET'}\n`,
  );
  if (oursRss !== undefined && idleRss !== undefined)
    process.stdout.write(
      `milepost server (${[...Object.entries(ours.command.env).map(([k, v]) => `${k}=${v}`), 'node', ...ours.command.flags, ours.command.entry].join(' ')}) RSS ${idleRss.toFixed(0)} MB started, ${oursRss.toFixed(0)} MB after the load (budget ≤ 200); ${memory}\n`,
    );
});
