/**
 * First notice of loss under load: the time from a crash message published over MQTT to its draft claim
 * committed, while the worker ingests positions over MQTT as `bench -- mqtt` sends them.
 *
 *   npm run bench -- claims   (BENCH_CRASHES=40, BENCH_CRASH_EVERY_MS=1500, BENCH_BATCH=1000 positions a
 *                              message, BENCH_DEVICES=20 devices sending positions, BENCH_PUBLISHERS=4,
 *                              BENCH_MQTT_URL=mqtt://127.0.0.1:1883, BENCH_POSTGRES_URL=…)
 *
 * One worker (`ROLE=worker`, `node src/main.ts`) on a throw-away database consumes positions and events
 * over MQTT (each on connections of their own), cuts trips and runs the claims worker (a pass as each
 * crash commits, else every second).
 * The publishers send position messages as fast as the broker takes them (QoS 1, 16 unacknowledged each),
 * as phase 1 of `bench -- mqtt` does, for as long as the crashes last; meanwhile a crash message goes to
 * the events topic of a device of its own (so none is a duplicate of another: one crash a device in any 2
 * minutes) every BENCH_CRASH_EVERY_MS. A crash's latency runs from its publish to the moment its draft
 * claim is seen committed (the database polled every 50 ms, so a figure is at most 50 ms late); its first
 * leg, to the crash stored (`crash_events.received_at`), is printed beside it. `BENCH_WORKER_LOG=path`
 * keeps the worker's whole log.
 * Baseline: the same crashes with no position load, in the same run. Target (issue 39): p95 ≤ 60 s.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectAsync, type MqttClient } from 'mqtt';
import pg from 'pg';
import {
  BENCH_POSTGRES_URL,
  drivePositionTails,
  removeSession,
  seedBoundDevices,
  withScratchDatabase,
} from './support.ts';

const MQTT_URL = process.env['BENCH_MQTT_URL'] ?? 'mqtt://127.0.0.1:1883';
const crashCount = Number(process.env['BENCH_CRASHES'] ?? 40);
const crashEveryMs = Number(process.env['BENCH_CRASH_EVERY_MS'] ?? 1500);
const BATCH = Number(process.env['BENCH_BATCH'] ?? 1000);
const loadDeviceCount = Number(process.env['BENCH_DEVICES'] ?? 20);
const publisherCount = Number(process.env['BENCH_PUBLISHERS'] ?? 4);
const PUBLISH_WINDOW = 16;
const CLAIM_TIMEOUT_MS = 180_000;
const TARGET_P95_MS = 60_000;
const ADMIN_API_KEY = `bench-admin-${randomBytes(16).toString('hex')}`;
const MAIN = path.resolve(import.meta.dirname, '../src/main.ts');
const run = randomBytes(4).toString('hex');
const DAY = 86_400;
const nowSeconds = Math.floor(Date.now() / 1000);
const boundFrom = nowSeconds - 20 * DAY;
const base = boundFrom + 3600;
const tails = drivePositionTails(BATCH);

const loadDevices = Array.from(
  { length: loadDeviceCount },
  (_, d) => `obd-load-${String(d).padStart(4, '0')}`,
);
/** Two rounds of crashes (baseline, then under load), each crash on a device of its own. */
const crashDevices = Array.from(
  { length: 2 * crashCount },
  (_, d) => `obd-crash-${String(d).padStart(4, '0')}`,
);

/** Position message k of the load: device k % n, times one batch after the device's previous message. */
function positions(k: number): { deviceId: string; payload: string } {
  const deviceId = loadDevices[k % loadDeviceCount]!;
  const first = base + Math.floor(k / loadDeviceCount) * BATCH;
  const parts: string[] = [];
  for (let i = 0; i < BATCH; i++) parts.push(`{"time":${first + i}${tails[i]!}`);
  return { deviceId, payload: `{"positions":[${parts.join(',')}]}` };
}

/** The worker process, once it has started. */
async function startWorker(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; stop(): Promise<void> }> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-bench-claims-'));
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ROLE: 'worker', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffer = '';
  const state = { started: false };
  // BENCH_WORKER_LOG=path keeps the worker's whole log (info lines included) for a closer look.
  const logPath = process.env['BENCH_WORKER_LOG'];
  const log = logPath === undefined ? undefined : createWriteStream(logPath, { flags: 'a' });
  child.once('exit', () => log?.end());
  child.stdout.on('data', (chunk: Buffer) => {
    log?.write(chunk);
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line.includes('"milepost started"')) state.started = true;
      // The worker's warnings and errors (pino levels 40 and up) are the bench's to show.
      if (/"level":(4|5|6)0/.test(line)) process.stderr.write(`worker: ${line.slice(0, 400)}\n`);
    }
  });
  // A loaded machine (the benches share it) may take minutes to start a worker.
  const deadline = Date.now() + 300_000;
  while (!state.started) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('the worker did not start');
    await sleep(50);
  }
  return {
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Publishes position messages from `next` on until `stop` is set; the messages sent. */
async function loadUntil(publishers: readonly MqttClient[], clientId: string, stop: { done: boolean }) {
  let next = 0;
  await Promise.all(
    publishers.flatMap((publisher) =>
      Array.from({ length: PUBLISH_WINDOW }, async () => {
        while (!stop.done) {
          const { deviceId, payload } = positions(next++);
          // NOTE: a loaded broker may drop the connection; the load goes on over the client's reconnection.
          await publisher
            .publishAsync(`milepost/${clientId}/sandbox/devices/${deviceId}/positions`, payload, {
              qos: 1,
            })
            .catch(() => sleep(100));
        }
      }),
    ),
  );
  return next;
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

/** A round's latencies, milliseconds, sorted: publish → draft claim, and its first leg, publish → crash stored. */
interface Round {
  readonly latencies: number[];
  readonly stored: number[];
}

/**
 * Sends `devices`' crashes one every crashEveryMs and waits for each one's draft claim. The first leg
 * runs from the publish to the crash's `received_at` (the worker's clock; one machine), the rest is the
 * claims worker's.
 */
async function crashRound(
  publisher: MqttClient,
  db: pg.Client,
  clientId: string,
  devices: readonly string[],
): Promise<Round> {
  const sentAt = new Map<string, number>();
  const sentAtWallMs = new Map<string, number>();
  const latencies = new Map<string, number>();
  const state = { sending: true };
  const poll = (async () => {
    while (state.sending || latencies.size < sentAt.size) {
      const { rows } = await db.query<{ device_id: string }>(
        `select d.device_id from claims c join crash_events e on e.id = c.crash_event_id
         join devices d on d.id = e.device_id where d.device_id = any($1::text[])`,
        [[...sentAt.keys()].filter((d) => !latencies.has(d))],
      );
      const seenAt = performance.now();
      for (const row of rows) latencies.set(row.device_id, seenAt - (sentAt.get(row.device_id) ?? seenAt));
      // A crash without its claim after CLAIM_TIMEOUT_MS counts as that long (the figures say "at least").
      for (const [deviceId, at] of sentAt)
        if (!latencies.has(deviceId) && seenAt - at > CLAIM_TIMEOUT_MS) latencies.set(deviceId, Infinity);
      await sleep(50);
    }
  })();
  for (const deviceId of devices) {
    const crash = {
      type: 'crash',
      time: Math.floor(Date.now() / 1000) - 1,
      lat: 51.5074,
      lon: -0.1278,
      speed_kmh: 48,
      peak_acceleration_g: 6.2,
    };
    sentAt.set(deviceId, performance.now());
    sentAtWallMs.set(deviceId, Date.now());
    await publisher.publishAsync(
      `milepost/${clientId}/sandbox/devices/${deviceId}/events`,
      JSON.stringify(crash),
      {
        qos: 1,
      },
    );
    await sleep(crashEveryMs);
  }
  state.sending = false;
  await poll;
  const { rows } = await db.query<{ device_id: string; received_at: Date }>(
    `select d.device_id, e.received_at from crash_events e join devices d on d.id = e.device_id
     where d.device_id = any($1::text[])`,
    [[...devices]],
  );
  const stored = rows.map((r) => r.received_at.getTime() - (sentAtWallMs.get(r.device_id) ?? Number.NaN));
  // A crash never stored counts as never stored.
  stored.push(...Array.from({ length: devices.length - rows.length }, () => Infinity));
  const sorted = (values: Iterable<number>) => [...values].sort((a, b) => a - b);
  return { latencies: sorted(latencies.values()), stored: sorted(stored) };
}

const seconds = (ms: number) => (ms / 1000).toFixed(2);

const describe = (name: string, { latencies, stored }: Round) =>
  `${name}: ${String(latencies.length)} crashes (${String(latencies.filter((l) => l === Infinity).length)} without a claim after ${String(CLAIM_TIMEOUT_MS / 1000)} s), p50 ${seconds(percentile(latencies, 50))} s, p95 ${seconds(percentile(latencies, 95))} s, max ${seconds(latencies.at(-1) ?? Number.NaN)} s; of which publish → crash stored p50 ${seconds(percentile(stored, 50))} s, p95 ${seconds(percentile(stored, 95))} s`;

async function main(): Promise<void> {
  await withScratchDatabase(BENCH_POSTGRES_URL, async (DATABASE_URL) => {
    const clientId = await seedBoundDevices(DATABASE_URL, ADMIN_API_KEY, [...loadDevices, ...crashDevices], {
      boundFromSeconds: boundFrom,
      nowSeconds,
      emailPrefix: 'fnol',
    });
    const worker = await startWorker({
      DATABASE_URL,
      ADMIN_API_KEY,
      MQTT_URL,
      MQTT_CLIENT_ID: `milepost-bench-claims-${run}`,
      MQTT_SHARE_GROUP: `bench-claims-${run}`,
    });
    const publishers = await Promise.all(
      Array.from({ length: publisherCount + 1 }, (_, i) =>
        connectAsync(MQTT_URL, {
          clientId: `bench-claims-publisher-${run}-${String(i)}`,
          protocolVersion: 5,
        }),
      ),
    );
    const crashPublisher = publishers[publisherCount]!;
    const db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
    try {
      // Baseline: the first round of crashes with nothing else to do.
      const idle = await crashRound(crashPublisher, db, clientId, crashDevices.slice(0, crashCount));
      process.stdout.write(`${describe('baseline (no position load)', idle)}\n`);
      // Under load: positions as fast as the broker takes them while the second round runs.
      const stop = { done: false };
      const loadStartedAt = performance.now();
      const loading = loadUntil(publishers.slice(0, publisherCount), clientId, stop);
      const loadAverageBefore = os.loadavg()[0] ?? 0;
      const loaded = await crashRound(crashPublisher, db, clientId, crashDevices.slice(crashCount));
      const loadAverage = os.loadavg()[0] ?? 0;
      stop.done = true;
      const messages = await loading;
      const loadSeconds = (performance.now() - loadStartedAt) / 1000;
      const { rows } = await db.query<{ count: number }>('select count(*)::int as count from positions');
      const stored = rows[0]?.count ?? 0;
      const p95 = percentile(loaded.latencies, 95);
      process.stdout.write(
        `first notice of loss: crash message over MQTT (${MQTT_URL}) → draft claim committed, one worker, PostgreSQL; a crash every ${String(crashEveryMs)} ms, each on its own device\n`,
      );
      process.stdout.write(
        `${describe('under load', loaded)}; target p95 ≤ 60 s ${p95 <= TARGET_P95_MS ? 'ok' : 'ABOVE TARGET'}; p95 ${(p95 / percentile(idle.latencies, 95)).toFixed(2)} × the baseline's\n`,
      );
      process.stdout.write(
        `load: ${messages.toLocaleString('en-GB')} messages of ${BATCH.toLocaleString('en-GB')} positions published in ${loadSeconds.toFixed(1)} s over ${String(loadDeviceCount)} devices, ${stored.toLocaleString('en-GB')} positions stored by the end of the round (${(stored / loadSeconds).toFixed(0)}/s); load average (1 min) ${loadAverageBefore.toFixed(2)} at its start, ${loadAverage.toFixed(2)} at its end, ${String(os.cpus().length)} cores\n`,
      );
    } finally {
      await db.end();
      await worker.stop();
      await Promise.all(publishers.map((p) => p.endAsync()));
      // The bench's broker session goes with its database.
      await removeSession(MQTT_URL, `milepost-bench-claims-${run}`);
    }
  });
}

await main();
