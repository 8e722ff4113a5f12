/**
 * Positions over MQTT end to end: publishers → Mosquitto → the worker's consumer (`ROLE=worker`,
 * `node src/main.ts`) → PostgreSQL, on one throw-away database, next to a bare consumer in the same run.
 *
 *   npm run bench -- mqtt   (BENCH_MESSAGES=600 a phase, BENCH_BATCH=1000 positions a message,
 *                            BENCH_DEVICES=20, BENCH_PUBLISHERS=4, BENCH_MQTT_URL=mqtt://127.0.0.1:1883,
 *                            BENCH_POSTGRES_URL=…)
 *
 * 0. Baseline: a bare consumer (this file run with `--bare-consumer`): the same subscription, Receive
 *    Maximum and acknowledgement after commit, then JSON.parse and the service's INSERT … unnest … ON
 *    CONFLICT DO NOTHING on a pool of the same size; no validation, no company or device lookup, no
 *    per-position checks. Its rows are deleted after.
 * 1. Throughput: the publishers send the phase's messages (QoS 1, up to 16 unacknowledged each) as fast
 *    as the broker takes them; the time runs from the first publish until the consumer has committed
 *    every position (each consumer logs a message's outcome after its commit). Target (issue 18):
 *    ≥ 50,000 positions/s.
 * 2. Kill: the same again; once a third of the phase's positions are stored the worker is killed with
 *    SIGKILL and started again with the same client id. Every position sent must then be stored once:
 *    rows are counted per device and batch (the primary key makes a duplicate row impossible), and the
 *    `accepted` totals the workers logged may not exceed the rows (a position stored twice would be
 *    accepted twice). They may fall short: pino writes stdout asynchronously, so a killed process loses
 *    its last lines.
 *
 * Phase 1 and the baseline also print the CPU a message took in the consumer's process and in its
 * database's backends (Linux, PostgreSQL on this machine): steadier than the rate on a loaded machine.
 * BENCH_PROFILE=<dir>: the restarted worker (the one killed -9 writes none) and the bare consumer write
 * a V8 CPU profile there when they stop.
 *
 * Each phase's warm-up and measured messages come after a warm-up (JIT, pooled connections). Message
 * k goes to device k % n with times base + (⌊k / n⌋ · batch + i) s, 20 days before now, on devices bound
 * (by a seeding server whose clock runs 20 days behind) before the first: no message repeats another.
 * NOTE: Mosquitto keeps at most `max_queued_messages` (1,000 by default) for a client and drops the
 * rest, and the publishers outrun the consumer: keep BENCH_MESSAGES under 1,000.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectAsync, type MqttClient } from 'mqtt';
import pg from 'pg';
import {
  BENCH_POSTGRES_URL,
  backendCpuSeconds,
  backendCpuSpent,
  drivePositionTails,
  processCpuSeconds,
  removeSession,
  seedBoundDevices,
  withScratchDatabase,
} from './support.ts';

const MQTT_URL = process.env['BENCH_MQTT_URL'] ?? 'mqtt://127.0.0.1:1883';
const messagesPerPhase = Number(process.env['BENCH_MESSAGES'] ?? 600);
const BATCH = Number(process.env['BENCH_BATCH'] ?? 1000);
const deviceCount = Number(process.env['BENCH_DEVICES'] ?? 20);
const publisherCount = Number(process.env['BENCH_PUBLISHERS'] ?? 4);
/** Unacknowledged publishes per publisher (Mosquitto lets a client have 20). */
const PUBLISH_WINDOW = 16;
const PHASE_TIMEOUT_MS = 180_000;
const WARM_UP_MESSAGES = 60;
const ADMIN_API_KEY = `bench-admin-${randomBytes(16).toString('hex')}`;
const MAIN = path.resolve(import.meta.dirname, '../src/main.ts');
const run = randomBytes(4).toString('hex');
const DAY = 86_400;
const nowSeconds = Math.floor(Date.now() / 1000);
const boundFrom = nowSeconds - 20 * DAY;
const base = boundFrom + 3600;

const tails = drivePositionTails(BATCH);

const devices = Array.from({ length: deviceCount }, (_, d) => `obd-mqtt-${String(d).padStart(4, '0')}`);

/** Message k: its device, and the payload (the HTTP body without `device_id`). */
function message(k: number): { deviceId: string; payload: string } {
  const deviceId = devices[k % deviceCount]!;
  const first = base + Math.floor(k / deviceCount) * BATCH;
  let out = '{"positions":[';
  for (let i = 0; i < BATCH; i++) out += `${i === 0 ? '' : ','}{"time":${first + i}${tails[i]!}`;
  return { deviceId, payload: `${out}]}` };
}
/** Where message k's positions are: `device/batch`, as the stored rows are grouped at the end. */
const keyOf = (k: number) => `${devices[k % deviceCount]!}/${Math.floor(k / deviceCount)}`;

interface Outcome {
  readonly outcome: string;
  readonly accepted: number;
  readonly duplicates: number;
}

/** The worker (`ROLE=worker`) with the MQTT consumer; its per-message outcomes as they are logged. */
async function startWorker(env: Record<string, string>, args: readonly string[] = [MAIN]) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-bench-mqtt-'));
  const profile = process.env['BENCH_PROFILE'];
  const flags = profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`];
  const child: ChildProcess = spawn(process.execPath, [...flags, ...args], {
    // PORT 0: the worker's metrics on any free port, beside whatever else listens on this machine.
    env: { ...process.env, ROLE: 'worker', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'debug', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const outcomes: Outcome[] = [];
  const totals = { accepted: 0, duplicates: 0 };
  const state = { started: false };
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
      const line = JSON.parse(buffer.slice(0, end)) as { msg: string } & Partial<Outcome>;
      buffer = buffer.slice(end + 1);
      if (line.msg === 'milepost started') state.started = true;
      else if (line.outcome !== undefined) {
        const outcome = {
          outcome: line.outcome,
          accepted: line.accepted ?? 0,
          duplicates: line.duplicates ?? 0,
        };
        outcomes.push(outcome);
        totals.accepted += outcome.accepted;
        totals.duplicates += outcome.duplicates;
      }
    }
  });
  const deadline = Date.now() + 60_000;
  while (!state.started) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('the worker did not start');
    await sleep(50);
  }
  return {
    child,
    outcomes,
    totals,
    async stop(signal: NodeJS.Signals) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill(signal);
        await exited;
      }
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
type Worker = Awaited<ReturnType<typeof startWorker>>;

/** Publishes messages [from, to) over the publishers, each with a window of unacknowledged ones. */
async function publishAll(publishers: readonly MqttClient[], clientId: string, from: number, to: number) {
  let next = from;
  await Promise.all(
    publishers.flatMap((publisher) =>
      Array.from({ length: PUBLISH_WINDOW }, async () => {
        while (next < to) {
          const { deviceId, payload } = message(next++);
          await publisher.publishAsync(
            `milepost/${clientId}/sandbox/devices/${deviceId}/positions`,
            payload,
            {
              qos: 1,
            },
          );
        }
      }),
    ),
  );
}

async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + PHASE_TIMEOUT_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

const sumOf = (workers: readonly Worker[], field: 'accepted' | 'duplicates') =>
  workers.reduce((sum, w) => sum + w.totals[field], 0);

/** The policy id stored with every bare row (no binding is looked up there). */
const BARE_POLICY_ID = '00000000-0000-4000-8000-000000000001';
/** As the service's consumer by default (MQTT_CONNECTIONS): connections, each storing one message at a time. */
const BARE_CONNECTIONS = 8;

interface BarePosition {
  time: number;
  lat: number;
  lon: number;
  speed_kmh?: number;
  heading?: number;
  accuracy_m?: number;
  ignition?: boolean;
  odometer_metres?: number;
}

/**
 * The baseline consumer (`--bare-consumer`, env DATABASE_URL, BARE_CLIENT_ID, BARE_GROUP): prints
 * `ready`, then one line with the positions accepted after each message's commit.
 */
async function bareConsumer(): Promise<void> {
  const pool = new pg.Pool({ connectionString: process.env['DATABASE_URL'], max: 10 });
  const deviceIds = new Map<string, string>();
  const store = async (topic: string, payload: Buffer): Promise<number> => {
    const device = topic.split('/')[4] ?? '';
    let deviceId = deviceIds.get(device);
    if (deviceId === undefined) deviceIds.set(device, (deviceId = randomUUID()));
    const ps = (JSON.parse(payload.toString()) as { positions: BarePosition[] }).positions;
    const column = <T>(pick: (p: BarePosition) => T) => ps.map(pick);
    const { rows } = await pool.query<{ accepted: number }>(
      `with inserted as (
         insert into positions (device_id, time, policy_id, lat, lon, speed_kmh, heading, accuracy_m, ignition,
           odometer_metres, received_at)
         select $1::uuid, to_timestamp(t), $2::uuid, la, lo, s, h, a, i, o, now()
         from unnest($3::bigint[], $4::float8[], $5::float8[], $6::float4[], $7::float4[], $8::float4[],
           $9::boolean[], $10::bigint[]) as u (t, la, lo, s, h, a, i, o)
         on conflict do nothing
         returning 1
       )
       select (select count(*) from inserted)::int as accepted`,
      [
        deviceId,
        BARE_POLICY_ID,
        column((p) => p.time),
        column((p) => p.lat),
        column((p) => p.lon),
        column((p) => p.speed_kmh ?? null),
        column((p) => p.heading ?? null),
        column((p) => p.accuracy_m ?? null),
        column((p) => p.ignition ?? null),
        column((p) => p.odometer_metres ?? null),
      ],
    );
    return rows[0]?.accepted ?? 0;
  };
  // As the service consumes: one message at a time per connection, acknowledged (through MQTT.js's
  // handleMessage callback) after its commit, BARE_CONNECTIONS connections in the share group.
  const clients = await Promise.all(
    Array.from({ length: BARE_CONNECTIONS }, async (_, lane) => {
      const client = await connectAsync(MQTT_URL, {
        clientId: `${process.env['BARE_CLIENT_ID'] ?? ''}.${String(lane)}`,
        protocolVersion: 5,
        clean: false,
        resubscribe: false,
        properties: { sessionExpiryInterval: 600, receiveMaximum: 16 },
      });
      client.handleMessage = (packet, callback) => {
        const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
        store(packet.topic, payload).then(
          (accepted) => {
            process.stdout.write(`${JSON.stringify({ outcome: 'stored', accepted })}\n`);
            callback();
          },
          (error: unknown) => {
            callback(error instanceof Error ? error : new Error(String(error)));
          },
        );
      };
      await client.subscribeAsync(
        `$share/${process.env['BARE_GROUP'] ?? ''}/milepost/+/+/devices/+/positions`,
        { qos: 1 },
      );
      return client;
    }),
  );
  process.stdout.write(`${JSON.stringify({ msg: 'milepost started' })}\n`);
  process.on('SIGTERM', () => {
    void (async () => {
      await Promise.all(clients.map((c) => c.endAsync()));
      await pool.end();
      process.exit(0);
    })();
  });
}

async function main(): Promise<void> {
  await withScratchDatabase(BENCH_POSTGRES_URL, async (DATABASE_URL) => {
    // ── Seeding: a company, a policy per device, each device bound 20 days ago (the seeder's clock).
    const clientId = await seedBoundDevices(DATABASE_URL, ADMIN_API_KEY, devices, {
      boundFromSeconds: boundFrom,
      nowSeconds,
      emailPrefix: 'mqtt',
    });

    const workerEnv = {
      DATABASE_URL,
      ADMIN_API_KEY,
      MQTT_URL,
      MQTT_CLIENT_ID: `milepost-bench-${run}`,
      MQTT_SHARE_GROUP: `bench-${run}`,
    };
    const publishers = await Promise.all(
      Array.from({ length: publisherCount }, (_, i) =>
        connectAsync(MQTT_URL, { clientId: `bench-publisher-${run}-${String(i)}`, protocolVersion: 5 }),
      ),
    );
    const workers: Worker[] = [];
    // Reads which backends serve the database, for their CPU time.
    const watcher = new pg.Client({ connectionString: DATABASE_URL });
    await watcher.connect();
    const sumCpu = (consumers: readonly Worker[]) =>
      consumers.reduce((sum, c) => sum + processCpuSeconds(c.child.pid), 0);
    const messageBytes = message(0).payload.length;
    const bareClientId = `bench-bare-${run}`;
    /** Warms `consumers` up, then times messages [warm-up, warm-up + phase) from first publish to last commit. */
    const throughput = async (consumers: readonly Worker[]) => {
      const stored = () => sumOf(consumers, 'accepted') + sumOf(consumers, 'duplicates');
      await publishAll(publishers, clientId, 0, WARM_UP_MESSAGES);
      await until('the warm-up', () => stored() >= WARM_UP_MESSAGES * BATCH);
      const before = stored();
      const cpuBefore = sumCpu(consumers);
      const databaseBefore = await backendCpuSeconds(watcher);
      const startedAt = performance.now();
      let publishedMs = 0;
      const publishing = publishAll(
        publishers,
        clientId,
        WARM_UP_MESSAGES,
        WARM_UP_MESSAGES + messagesPerPhase,
      ).then(() => {
        publishedMs = performance.now() - startedAt;
      });
      await until('the measured messages', () => stored() - before >= messagesPerPhase * BATCH);
      const elapsedMs = performance.now() - startedAt;
      // CPU a message, in ms: the consumer's process and its database's backends (NaN: not on this machine).
      const consumerMs = ((sumCpu(consumers) - cpuBefore) * 1000) / messagesPerPhase;
      const databaseMs =
        (backendCpuSpent(databaseBefore, await backendCpuSeconds(watcher)) * 1000) / messagesPerPhase;
      await publishing;
      return {
        elapsedMs,
        publishedMs,
        perSecond: (messagesPerPhase * BATCH) / (elapsedMs / 1000),
        consumerMs,
        databaseMs,
      };
    };
    try {
      // ── 0. Baseline, before the worker's session exists (it would get a copy of each message).
      const bare = await startWorker(
        { DATABASE_URL, MQTT_URL, BARE_CLIENT_ID: bareClientId, BARE_GROUP: `bench-bare-${run}` },
        [import.meta.filename, '--bare-consumer'],
      );
      const baseline = await throughput([bare]);
      await bare.stop('SIGTERM');
      await removeSession(MQTT_URL, bareClientId);
      const cleaner = new pg.Client({ connectionString: DATABASE_URL });
      await cleaner.connect();
      await cleaner.query('delete from positions');
      await cleaner.end();

      // ── 1. Throughput.
      workers.push(await startWorker(workerEnv));
      const stored = () => sumOf(workers, 'accepted') + sumOf(workers, 'duplicates');
      const { elapsedMs, publishedMs, perSecond, consumerMs, databaseMs } = await throughput(workers);
      const throughputTo = WARM_UP_MESSAGES + messagesPerPhase;

      // ── 2. Killed mid-stream and started again.
      const killFrom = throughputTo;
      const killTo = killFrom + messagesPerPhase;
      const beforeKill = stored();
      const killPublishing = publishAll(publishers, clientId, killFrom, killTo);
      await until('a third of phase 2', () => stored() - beforeKill >= (messagesPerPhase * BATCH) / 3);
      await workers[0]!.stop('SIGKILL');
      const storedAtKill = stored() - beforeKill;
      const restartedAt = performance.now();
      workers.push(await startWorker(workerEnv));
      const restartMs = performance.now() - restartedAt;
      await killPublishing;
      const sent = killTo;

      // ── Every position sent stored once: rows per device and batch.
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      const countRows = async () =>
        (await client.query<{ count: number }>('select count(*)::int as count from positions')).rows[0]
          ?.count ?? 0;
      const deadline = Date.now() + PHASE_TIMEOUT_MS;
      while ((await countRows()) < sent * BATCH && Date.now() < deadline) await sleep(250);
      await sleep(1000); // anything sent twice shows up in the workers' outcomes meanwhile
      const { rows } = await client.query<{ key: string; count: number }>(
        `select d.device_id || '/' || ((extract(epoch from p.time)::bigint - $1) / $2) as key, count(*)::int as count
         from positions p join devices d on d.id = p.device_id group by 1`,
        [base, BATCH],
      );
      await client.end();
      const byKey = new Map(rows.map((r) => [r.key, r.count]));
      let lost = 0;
      let partial = 0;
      for (let k = 0; k < sent; k++) {
        const count = byKey.get(keyOf(k)) ?? 0;
        if (count === 0) lost += BATCH;
        else if (count !== BATCH) partial++;
      }
      const rowsStored = rows.reduce((sum, r) => sum + r.count, 0);
      const accepted = sumOf(workers, 'accepted');
      const redelivered = workers[1]!.outcomes.filter((o) => o.duplicates > 0).length;

      process.stdout.write(
        `positions over MQTT: ${String(messagesPerPhase)} messages a phase of ${BATCH.toLocaleString('en-GB')} positions (${messageBytes.toLocaleString('en-GB')} bytes), ${String(deviceCount)} devices, ${String(publisherCount)} publishers (QoS 1), one worker, PostgreSQL, ${MQTT_URL}\n`,
      );
      process.stdout.write(
        `baseline (bare consumer): ${(messagesPerPhase * BATCH).toLocaleString('en-GB')} positions committed in ${(baseline.elapsedMs / 1000).toFixed(2)} s (published in ${(baseline.publishedMs / 1000).toFixed(2)} s): ${baseline.perSecond.toFixed(0)} positions/s\n`,
      );
      process.stdout.write(
        `phase 1: ${(messagesPerPhase * BATCH).toLocaleString('en-GB')} positions committed in ${(elapsedMs / 1000).toFixed(2)} s from the first publish (all published in ${(publishedMs / 1000).toFixed(2)} s)\n`,
      );
      process.stdout.write(
        `mqtt: ${perSecond.toFixed(0)} positions/s end to end (target ≥ 50,000) ${perSecond >= 50_000 ? 'ok' : 'BELOW TARGET'}; ${(perSecond / baseline.perSecond).toFixed(2)} of the bare consumer's\n`,
      );
      process.stdout.write(
        `CPU a message: the worker ${consumerMs.toFixed(2)} ms, its database's backends ${databaseMs.toFixed(2)} ms; the bare consumer ${baseline.consumerMs.toFixed(2)} ms, its backends ${baseline.databaseMs.toFixed(2)} ms\n`,
      );
      const duplicated = Math.max(0, accepted - rowsStored) + Math.max(0, rowsStored - sent * BATCH);
      const clean = lost === 0 && partial === 0 && duplicated === 0;
      process.stdout.write(
        `phase 2: killed -9 at ${storedAtKill.toLocaleString('en-GB')} of ${(messagesPerPhase * BATCH).toLocaleString('en-GB')} positions, restarted (${(restartMs / 1000).toFixed(1)} s to start); ${String(redelivered)} messages redelivered to the new worker held positions stored already\n`,
      );
      // A commit whose log line the kill cut off is stored but missing from `accepted`: accepted ≤ rows.
      process.stdout.write(
        `kill: ${(sent * BATCH).toLocaleString('en-GB')} positions sent in all, ${rowsStored.toLocaleString('en-GB')} rows, ${accepted.toLocaleString('en-GB')} accepted as the two workers logged: lost ${String(lost)}, duplicated ${String(duplicated)}, partial batches ${String(partial)} ${clean ? 'ok' : 'LOST OR DUPLICATED'}\n`,
      );
    } finally {
      await watcher.end();
      for (const worker of workers) await worker.stop('SIGTERM');
      await Promise.all(publishers.map((p) => p.endAsync()));
      // The bench's broker sessions go with its database.
      await removeSession(MQTT_URL, workerEnv.MQTT_CLIENT_ID);
      await removeSession(MQTT_URL, bareClientId);
    }
  });
}

if (process.argv[2] === '--bare-consumer') await bareConsumer();
else await main();
