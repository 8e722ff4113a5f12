import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { connectAsync } from 'mqtt';
import pg from 'pg';
import { EVENT_CONNECTIONS } from '../src/modules/telematics/telematics-mqtt.ts';

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly p99Ms: number;
  readonly errors: number;
  readonly non2xx: number;
}

/**
 * The Node flags of `npm start`, if it has any, so that servers are measured as they run in production;
 * BENCH_NODE_FLAGS replaces them to try others (say, `--max-semi-space-size=16`).
 */
const START_FLAGS: readonly string[] =
  process.env['BENCH_NODE_FLAGS']?.split(' ').filter(Boolean) ??
  (
    JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../package.json'), 'utf8')) as {
      scripts: { start: string };
    }
  ).scripts.start
    .split(' ')
    .filter((word) => word.startsWith('--'));

/**
 * Starts a server script in its own process (so the load generator and the server do not share a
 * core) and resolves with its base URL, which the script prints as its first stdout line.
 */
export async function startServer(
  script: string,
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  // BENCH_PROFILE=<dir>: each server writes a V8 CPU profile there when it stops (open it in Chrome's
  // DevTools); NODE_OPTIONS may not carry --cpu-prof.
  const profile = process.env['BENCH_PROFILE'];
  const flags = profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`];
  const child = spawn(
    process.execPath,
    [...START_FLAGS, ...flags, path.resolve(import.meta.dirname, script)],
    {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let buffer = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`${script} exited with ${String(code)} before it listened`));
    });
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => l.startsWith('http://'));
      if (line !== undefined) resolve(line.trim());
    });
  });
  return {
    url,
    child,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

export async function load(options: autocannon.Options): Promise<LoadResult> {
  const result = await autocannon({ connections: 50, pipelining: 1, duration: 8, ...options });
  return {
    requestsPerSecond: result.requests.average,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export function report(name: string, ours: LoadResult, baseline: LoadResult, target: number): void {
  const ratio = ours.requestsPerSecond / baseline.requestsPerSecond;
  const line = (label: string, r: LoadResult) =>
    `${label.padEnd(9)} ${r.requestsPerSecond.toFixed(0).padStart(7)} req/s  p99 ${r.p99Ms.toFixed(1)} ms  errors ${r.errors}  non-2xx ${r.non2xx}`;
  process.stdout.write(`${line('milepost', ours)}\n${line('baseline', baseline)}\n`);
  process.stdout.write(
    `${name}: ratio ${ratio.toFixed(2)} (target ≥ ${target}) ${ratio >= target ? 'ok' : 'BELOW TARGET'}\n`,
  );
}

/**
 * Phases of equal length as one: their mean rate, the median of their p99s (one phase caught by this
 * machine's hiccups does not decide it; the worst is printed too), all their errors.
 */
export function combined(phases: readonly LoadResult[]): LoadResult {
  const p99s = phases.map((p) => p.p99Ms).toSorted((a, b) => a - b);
  return {
    requestsPerSecond: phases.reduce((sum, p) => sum + p.requestsPerSecond, 0) / phases.length,
    p99Ms: p99s[Math.floor(p99s.length / 2)] ?? 0,
    errors: phases.reduce((sum, p) => sum + p.errors, 0),
    non2xx: phases.reduce((sum, p) => sum + p.non2xx, 0),
  };
}

/** The PostgreSQL server benchmarks make their throw-away databases on (BENCH_POSTGRES_URL). */
export const BENCH_POSTGRES_URL =
  process.env['BENCH_POSTGRES_URL'] ?? 'postgres://root@127.0.0.1:5432/postgres';

/** Runs `work` with the URL of a fresh database on `serverUrl`'s server, dropped afterwards. */
export async function withScratchDatabase<T>(
  serverUrl: string,
  work: (databaseUrl: string) => Promise<T>,
): Promise<T> {
  const name = `milepost_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return await work(url.toString());
  } finally {
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

/** CPU seconds (user + system) a process has used, from /proc (Linux; clock ticks of 1/100 s); NaN elsewhere. */
export function processCpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const fields =
      fs
        .readFileSync(`/proc/${String(pid)}/stat`, 'utf8')
        .split(') ')[1]
        ?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds used so far by each backend serving `client`'s database, by process id; empty when the
 * server is not on this machine (its processes not in /proc).
 */
export async function backendCpuSeconds(client: pg.Client): Promise<Map<number, number>> {
  const { rows } = await client.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );
  const seconds = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      if (fs.readFileSync(`/proc/${String(pid)}/cmdline`, 'utf8').startsWith('postgres'))
        seconds.set(pid, processCpuSeconds(pid));
    } catch {
      // not a process of this machine, or gone meanwhile
    }
  }
  return seconds;
}

/** The CPU seconds the backends alive at `after` used since `before` (all of it for one started since). */
export function backendCpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  if (after.size === 0) return NaN;
  let spent = 0;
  for (const [pid, seconds] of after) spent += seconds - (before.get(pid) ?? 0);
  return spent;
}

/** mulberry32: a small seeded generator, so every run of a benchmark measures the same data. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A response's JSON body, or an error naming its status and text. */
export async function json<T>(response: Response): Promise<T> {
  if (!response.ok) throw new Error(`${String(response.status)}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** A company created through a running server's admin API: its sandbox credentials as headers. */
export async function createBenchCompany(url: string, adminApiKey: string): Promise<Record<string, string>> {
  const company = await json<{ client_id: string; client_secret_sandbox: string }>(
    await fetch(`${url}/admin/companies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminApiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench Insurer' }),
    }),
  );
  return {
    client_id: company.client_id,
    client_secret: company.client_secret_sandbox,
    environment: 'sandbox',
  };
}

/**
 * A policy created through a running server's API: the OpenAPI example without its payment, on a term
 * from 200 days before `nowSeconds` to 165 after, for `email`. Its reference.
 */
export async function createBenchPolicy(
  url: string,
  headers: Record<string, string>,
  email: string,
  nowSeconds: number,
): Promise<string> {
  const { POLICY_INPUT_EXAMPLE } = await import('../src/modules/policies/policy-schemas.ts');
  const input = structuredClone(POLICY_INPUT_EXAMPLE) as Record<string, unknown> & {
    policy: Record<string, unknown>;
    proposer: Record<string, unknown>;
  };
  delete input['payment'];
  input.policy['start_date'] = nowSeconds - 200 * 86_400;
  input.policy['inception_date'] = nowSeconds - 200 * 86_400;
  input.policy['end_date'] = nowSeconds + 165 * 86_400;
  input.proposer['email'] = email;
  const created = await json<{ policy_reference: string }>(
    await fetch(`${url}/policys`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    }),
  );
  return created.policy_reference;
}

/**
 * The JSON of `count` positions after their times: a 1 Hz drive through London with every optional
 * field (seeded, so every run sends the same), each to be joined after `{"time":<t>`.
 */
export function drivePositionTails(count: number): readonly string[] {
  const random = seededRandom(18);
  const out: string[] = [];
  let lat = 51.5;
  let lon = -0.14;
  let heading = 40;
  let odometer = 12_345_678;
  for (let i = 0; i < count; i++) {
    const speed = 20 + random() * 40;
    heading = (heading + (random() - 0.5) * 20 + 360) % 360;
    const metres = speed / 3.6;
    lat += (metres * Math.cos((heading * Math.PI) / 180)) / 111_200;
    lon += (metres * Math.sin((heading * Math.PI) / 180)) / (111_200 * Math.cos((lat * Math.PI) / 180));
    odometer += Math.round(metres);
    out.push(
      `,"lat":${lat.toFixed(6)},"lon":${lon.toFixed(6)},"speed_kmh":${speed.toFixed(1)},"heading":${heading.toFixed(1)},"accuracy_m":${(3 + random() * 5).toFixed(1)},"ignition":true,"odometer_metres":${odometer}}`,
    );
  }
  return out;
}

/**
 * Ends the broker's sessions of a consumer's connections, with the messages queued in them: positions
 * (`{clientId}.{i}`, MQTT_CONNECTIONS of them) and events (`{clientId}.events.{i}`).
 */
export async function removeSession(mqttUrl: string, clientId: string, connections = 8): Promise<void> {
  const ids = [
    ...Array.from({ length: connections }, (_, i) => `${clientId}.${String(i)}`),
    ...Array.from({ length: EVENT_CONNECTIONS }, (_, i) => `${clientId}.events.${String(i)}`),
  ];
  for (const id of ids) {
    const client = await connectAsync(mqttUrl, {
      clientId: id,
      clean: true,
      protocolVersion: 5,
      reconnectPeriod: 0,
      properties: { sessionExpiryInterval: 0 },
    });
    await client.endAsync();
  }
}

/**
 * A company and, for each device id, a policy (`{emailPrefix}{i}@example.com`) with the device bound,
 * through a seeding server whose clock stands at `boundFromSeconds`; the company's client id.
 */
export async function seedBoundDevices(
  databaseUrl: string,
  adminApiKey: string,
  deviceIds: readonly string[],
  options: { boundFromSeconds: number; nowSeconds: number; emailPrefix: string },
): Promise<string> {
  const seeder = await startServer('servers/journeys-milepost.ts', {
    BENCH_CLOCK: new Date(options.boundFromSeconds * 1000).toISOString(),
    DATABASE_URL: databaseUrl,
    ADMIN_API_KEY: adminApiKey,
  });
  try {
    const headers = await createBenchCompany(seeder.url, adminApiKey);
    for (let start = 0; start < deviceIds.length; start += 8)
      await Promise.all(
        deviceIds.slice(start, start + 8).map(async (deviceId, i) => {
          const email = `${options.emailPrefix}${String(start + i)}@example.com`;
          const policy = await createBenchPolicy(seeder.url, headers, email, options.nowSeconds);
          await json(
            await fetch(`${seeder.url}/devices`, {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify({ device_id: deviceId, policy_reference: policy, kind: 'obd' }),
            }),
          );
        }),
      );
    return headers['client_id'] ?? '';
  } finally {
    await seeder.stop();
  }
}
