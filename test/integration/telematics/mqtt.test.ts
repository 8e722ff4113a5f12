import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { connectAsync, type MqttClient } from 'mqtt';
import pg from 'pg';
import { fixedClock } from '../../../src/platform/clock.ts';
import type { DatabaseHandle } from '../../../src/platform/db/database.ts';
import { EVENT_CONNECTIONS } from '../../../src/modules/telematics/telematics-mqtt.ts';
import { createLogger } from '../../../src/platform/logging.ts';
import type { Database } from '../../../src/schema.ts';
import { createCompany, createTestApp, TEST_ADMIN_KEY, type TestApp } from '../../support/app.ts';
import { createTestDatabase, lockWaitersOn, onPostgres } from '../../support/database.ts';
import { make } from '../../support/factories.ts';
import { MQTT_URL, noMqttBroker } from '../../support/mqtt-broker.ts';
import { caller } from './telematics-support.ts';

/**
 * Positions over MQTT (issue #18 item 3) against a real broker (Mosquitto on 127.0.0.1:1883, or
 * MQTT_TEST_URL). Each run has its own share group and client ids, and removes its broker sessions at
 * the end. The consumer runs in process (PGlite or PostgreSQL); the kill and outage cases run it as a
 * worker process of its own (PostgreSQL only).
 */
const MAIN = path.resolve(import.meta.dirname, '../../../src/main.ts');
const run = `${String(process.pid)}-${randomBytes(4).toString('hex')}`;
const WAIT_MS = 15_000;

const noBroker = noMqttBroker();

const unix = (iso: string): number => Date.parse(iso) / 1000;
/** `count` positions a second apart from `startS`. */
const trace = (startS: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ time: startS + i, lat: 51.5 + i * 0.0001, lon: -0.14 }));
const topicOf = (clientId: string, deviceId: string, environment = 'sandbox') =>
  `milepost/${clientId}/${environment}/devices/${deviceId}/positions`;

/** Polls `probe` until it returns a value other than undefined. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * Ends the broker's sessions of a consumer's connections, queued messages included: positions
 * (`{clientId}.{i}`, MQTT_CONNECTIONS of them) and events (`{clientId}.events.{i}`).
 */
async function removeSession(clientId: string, connections = 8): Promise<void> {
  const ids = [
    ...Array.from({ length: connections }, (_, i) => `${clientId}.${String(i)}`),
    ...Array.from({ length: EVENT_CONNECTIONS }, (_, i) => `${clientId}.events.${String(i)}`),
  ];
  for (const id of ids) {
    const client = await connectAsync(MQTT_URL, {
      clientId: id,
      clean: true,
      protocolVersion: 5,
      reconnectPeriod: 0,
      properties: { sessionExpiryInterval: 0 },
    });
    await client.endAsync();
  }
}

let publisher: MqttClient | undefined;
async function publish(topic: string, payload: string | object): Promise<void> {
  publisher ??= await connectAsync(MQTT_URL, {
    clientId: `milepost-test-publisher-${run}`,
    protocolVersion: 5,
    reconnectPeriod: 0,
  });
  await publisher.publishAsync(topic, typeof payload === 'string' ? payload : JSON.stringify(payload), {
    qos: 1,
  });
}

after(async () => {
  await publisher?.endAsync();
});

interface LogLine {
  level: number;
  msg: string;
  topic?: string;
  outcome?: string;
  reason?: string;
  accepted?: number;
  duplicates?: number;
  transient?: boolean;
}

describe('positions over MQTT, consumed in process', { skip: noBroker }, () => {
  const clock = fixedClock('2025-06-10T12:00:00Z');
  const clientId = `milepost-test-${run}`;
  const shareGroup = `test-${run}`;
  const lines: LogLine[] = [];
  let database: DatabaseHandle<Database>;
  let t: TestApp;
  let running = false;
  let acme: Awaited<ReturnType<typeof createCompany>>;
  const call = caller(() => t);

  /** The service with the MQTT consumer, on the file's database (which outlives it). */
  const startService = () =>
    createTestApp({
      startJobs: true,
      env: { MQTT_URL, MQTT_CLIENT_ID: clientId, MQTT_SHARE_GROUP: shareGroup },
      overrides: {
        clock,
        database: { ...database, close: async () => undefined },
        logger: createLogger('debug', {
          write: (line: string) => {
            const parsed = JSON.parse(line) as LogLine;
            if (parsed.msg.includes('mqtt')) lines.push(parsed);
          },
        }),
      },
    });
  const stored = async (deviceId: string): Promise<number> => {
    const response = await call('GET', `/devices/${deviceId}/positions?limit=10000`, acme.sandbox);
    assert.equal(response.statusCode, 200, response.body);
    return response.json<{ positions: unknown[] }>().positions.length;
  };
  const storedReaches = (deviceId: string, count: number) =>
    until(`${String(count)} positions of ${deviceId}`, async () =>
      (await stored(deviceId)) === count ? true : undefined,
    );
  const messageCounts = async (): Promise<Record<string, number>> => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const counts: Record<string, number> = {};
    for (const [, outcome = '', value] of text.matchAll(
      /^milepost_mqtt_messages_total\{outcome="(\w+)"\} (\d+)$/gm,
    ))
      counts[outcome] = Number(value);
    return counts;
  };
  const outcomeOf = (topic: string) =>
    until(`an outcome for ${topic}`, async () =>
      lines.find((l) => l.topic === topic && l.outcome !== undefined),
    );

  before(async () => {
    database = await createTestDatabase();
    t = await startService();
    running = true;
    acme = await createCompany(t.app, 'Acme');
    for (const deviceId of ['car-1', 'car-2'])
      await make.device(t.app, acme, (await make.policy(t.app, acme)).reference, { deviceId });
    clock.set('2025-06-10T13:00:00Z');
  });
  after(async () => {
    if (running) await t.close();
    await database.close();
    await removeSession(clientId);
  });

  test('positions published to a device’s topic are stored and counted in /metrics', async () => {
    const topic = topicOf(acme.client_id, 'car-1');
    await publish(topic, { positions: trace(unix('2025-06-10T12:10:00Z'), 250) });
    await storedReaches('car-1', 250);
    const line = await outcomeOf(topic);
    assert.deepEqual([line.outcome, line.accepted, line.duplicates], ['stored', 250, 0]);
    assert.equal((await messageCounts())['stored'], 1);
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(text, /^milepost_mqtt_positions_total\{outcome="accepted"\} 250$/m);
    // Every connection (MQTT_CONNECTIONS, 8 by default, and the events lane's) is connected and subscribed.
    assert.match(text, /^milepost_mqtt_connected\{lane="positions"\} 8$/m);
    assert.match(
      text,
      new RegExp(`^milepost_mqtt_connected\\{lane="events"\\} ${String(EVENT_CONNECTIONS)}$`, 'm'),
    );
  });

  test('the same message again stores nothing new: a redelivery is harmless', async () => {
    const topic = topicOf(acme.client_id, 'car-2');
    const payload = { device_id: 'car-2', positions: trace(unix('2025-06-10T12:20:00Z'), 100) };
    await publish(topic, payload);
    await storedReaches('car-2', 100);
    await publish(topic, payload);
    const again = await until('the second outcome', async () => {
      const outcomes = lines.filter((l) => l.topic === topic && l.outcome !== undefined);
      return outcomes.length === 2 ? outcomes[1] : undefined;
    });
    assert.deepEqual([again.outcome, again.accepted, again.duplicates], ['duplicate', 0, 100]);
    assert.equal(await stored('car-2'), 100);
  });

  test('bad messages are logged at warn, counted and acknowledged; the consumer goes on', async () => {
    const before = await messageCounts();
    const good = { positions: trace(unix('2025-06-10T12:40:00Z'), 10) };
    const cases: Array<{ topic: string; payload: string | object; outcome: string; reason: RegExp }> = [
      {
        topic: topicOf(acme.client_id, 'car-1'),
        payload: 'not json',
        outcome: 'bad_payload',
        reason: /JSON/,
      },
      {
        topic: topicOf(acme.client_id, 'car-1'),
        payload: { positions: [{ time: 1, lat: 'north', lon: 0 }] },
        outcome: 'bad_payload',
        reason: /\/payload\/positions\/0\/lat must be number/,
      },
      {
        topic: topicOf(acme.client_id, 'car-1'),
        payload: { ...good, device_id: 'car-2' },
        outcome: 'bad_payload',
        reason: /device_id must equal/,
      },
      {
        topic: topicOf(acme.client_id, 'car-1'),
        payload: { positions: [] },
        outcome: 'bad_payload',
        reason: /\/payload\/positions must NOT have fewer than 1 items/,
      },
      {
        topic: topicOf(acme.client_id, 'car-1'),
        payload: { positions: [{ time: '2025-06-10T12:40:00Z\u0000', lat: 51.5, lon: -0.1 }] },
        outcome: 'bad_payload',
        reason: /\/payload\/positions\/0\/time must not contain a NUL character/,
      },
      { topic: topicOf(acme.client_id, 'car-9'), payload: good, outcome: 'unknown_device', reason: /car-9/ },
      {
        topic: topicOf(acme.client_id, 'car-1', 'production'),
        payload: good,
        outcome: 'unknown_device',
        reason: /production/,
      },
      {
        topic: topicOf(`mp_client_unknown${run}`, 'car-1'),
        payload: good,
        outcome: 'unknown_client',
        reason: /client_id/,
      },
      {
        topic: topicOf(acme.client_id, 'car-1', 'staging'),
        payload: good,
        outcome: 'bad_topic',
        reason: /environment/,
      },
      { topic: topicOf(acme.client_id, 'car 1'), payload: good, outcome: 'bad_topic', reason: /device_id/ },
    ];
    for (const c of cases) await publish(c.topic, c.payload);
    // One message after the bad ones: stored, so the consumer is still at work.
    const after = topicOf(acme.client_id, 'car-1');
    await publish(after, good);
    await storedReaches('car-1', 260);
    const seen = await until('every bad message logged', async () => {
      const bad = lines.filter((l) => l.msg === 'bad mqtt positions message');
      return bad.length >= cases.length ? bad : undefined;
    });
    for (const c of cases) {
      const line = seen.find(
        (l) => l.topic === c.topic && l.outcome === c.outcome && c.reason.test(l.reason ?? ''),
      );
      assert.ok(line, `${c.outcome} for ${c.topic}: ${JSON.stringify(seen)}`);
      assert.equal(line.level, 40, 'warn');
    }
    const counts = await messageCounts();
    // At least: the broker may carry other runs' messages to this group as well (their clients unknown here).
    for (const [outcome, count] of [
      ['bad_payload', 5],
      ['unknown_device', 2],
      ['unknown_client', 1],
      ['bad_topic', 2],
    ] as const)
      assert.ok(
        (counts[outcome] ?? 0) - (before[outcome] ?? 0) >= count,
        `${outcome}: ${JSON.stringify(counts)}`,
      );
  });

  test('a tracker’s own fields are kept as over HTTP; beyond the bounds the message is a bad payload naming the position', async () => {
    const topic = topicOf(acme.client_id, 'car-1');
    const at = unix('2025-06-10T12:45:00Z');
    const tracker = { altitude: 31.5, satellites: 11, hdop: 0.9, battery: 87, rssi: -71, ign_src: 'io' };
    await publish(topic, { positions: [{ time: at, lat: 51.5, lon: -0.14, heading: 90, ...tracker }] });
    await storedReaches('car-1', 261);
    const response = await call(
      'GET',
      `/devices/car-1/positions?from=${String(at)}&to=${String(at)}`,
      acme.sandbox,
    );
    const [position] = response.json<{ positions: Array<{ heading: number; attributes: object }> }>()
      .positions;
    assert.deepEqual([position?.heading, position?.attributes], [90, tracker]);

    const tooMany = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`io_${String(i)}`, i]));
    await publish(topic, { positions: [{ time: at + 1, lat: 51.5, lon: -0.14, ...tooMany }] });
    const line = await until('the message refused', async () =>
      lines.find(
        (l) => l.topic === topic && l.outcome === 'bad_payload' && /attributes/.test(l.reason ?? ''),
      ),
    );
    assert.match(line.reason ?? '', /^\/payload\/positions\/0 has 33 other attributes; at most 32/);
    assert.equal(await stored('car-1'), 261);
  });

  test('a payload beyond the positions route’s limits on a body’s shape is a bad payload, refused before it is parsed', async () => {
    const topic = topicOf(acme.client_id, 'car-2');
    const before = await stored('car-2');
    // A million bytes of keys, and arrays nested far deeper than any batch: each well within 4 MiB.
    const keys = `{${Array.from({ length: 100_000 }, (_, i) => `"k${String(i)}":0`).join(',')}}`;
    const deep = `{"positions":[{"time":1,"lat":51.5,"lon":-0.14,"x":${'['.repeat(5_000)}${']'.repeat(5_000)}}]}`;
    await publish(topic, keys);
    await publish(topic, deep);
    const refused = await until('both messages refused', async () => {
      const bad = lines.filter((l) => l.topic === topic && l.outcome === 'bad_payload');
      return bad.length >= 2 ? bad : undefined;
    });
    // Each message may be taken by another of the consumer's connections: in either order.
    assert.deepEqual(refused.map((l) => l.reason).sort(), [
      '/payload has more than 128 keys',
      // Named down to where the 17th level opens.
      `/payload/positions/0/x${'/0'.repeat(13)} nests objects and arrays more than 16 deep`,
    ]);
    assert.equal(await stored('car-2'), before);
  });

  test('a restarted consumer gets what was published while it was down, and nothing it had acknowledged', async () => {
    await t.close();
    running = false;
    lines.length = 0;
    const topic = topicOf(acme.client_id, 'car-2');
    await publish(topic, { positions: trace(unix('2025-06-10T12:50:00Z'), 40) });
    t = await startService();
    running = true;
    await storedReaches('car-2', 140);
    await sleep(500); // room for anything redelivered to show up
    const outcomes = lines.filter(
      (l) => l.outcome !== undefined && l.topic?.includes(acme.client_id) === true,
    );
    assert.deepEqual(
      outcomes.map((l) => [l.topic, l.outcome, l.accepted]),
      [[topic, 'stored', 40]],
    );
  });
});

/** A worker process (`ROLE=worker`) consuming over MQTT; resolves once it has started. */
async function startWorker(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; lines: () => LogLine[]; dataDir: string }> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-mqtt-worker-'));
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env['PATH'] ?? '',
      ROLE: 'worker',
      // A free port of its own for its metrics: several workers run at once.
      PORT: '0',
      ADMIN_API_KEY: TEST_ADMIN_KEY,
      DATA_DIR: dataDir,
      // Debug: each message's outcome is logged.
      LOG_LEVEL: 'debug',
      MQTT_URL,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: LogLine[] = [];
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
      lines.push(JSON.parse(buffer.slice(0, end)) as LogLine);
      buffer = buffer.slice(end + 1);
    }
  });
  await until(
    'the worker to start',
    async () => {
      assert.equal(child.exitCode, null, 'the worker exited before it started');
      return lines.some((l) => l.msg === 'milepost started') ? true : undefined;
    },
    30_000,
  );
  assert.ok(
    lines.some((l) => l.msg === 'consuming positions over mqtt'),
    JSON.stringify(lines),
  );
  return { child, lines: () => lines, dataDir };
}

async function stopWorker(worker: { child: ChildProcess; dataDir: string }, signal: NodeJS.Signals) {
  if (worker.child.exitCode === null && worker.child.signalCode === null) {
    const exited = once(worker.child, 'exit');
    worker.child.kill(signal);
    await exited;
  }
  await fs.rm(worker.dataDir, { recursive: true, force: true });
}

describe(
  'positions over MQTT, consumed by a worker process',
  { skip: noBroker || (!onPostgres && 'PostgreSQL only: the worker runs in a process of its own') },
  () => {
    const clock = fixedClock('2025-06-10T12:00:00Z');
    const clientIds: string[] = [];
    const workers: Array<{ child: ChildProcess; dataDir: string }> = [];
    let t: TestApp;
    let acme: Awaited<ReturnType<typeof createCompany>>;
    let admin: pg.Client;
    const call = caller(() => t);

    const stored = async (deviceId: string): Promise<number> => {
      const response = await call('GET', `/devices/${deviceId}/positions?limit=10000`, acme.sandbox);
      return response.json<{ positions: unknown[] }>().positions.length;
    };
    /** Holds a lock that every INSERT into positions waits for, until `release`. */
    const blockInserts = async () => {
      const locker = new pg.Client({ connectionString: t.container.database.connectionString });
      locker.on('error', () => undefined); // a failed test leaves it to the database's drop
      await locker.connect();
      await locker.query('begin');
      await locker.query('lock table positions in share mode');
      return {
        async release() {
          await locker.query('rollback');
          await locker.end();
        },
      };
    };
    const waitingInserts = async (): Promise<number> =>
      (await admin.query<{ count: number }>(`select count(*)::int as count ${lockWaitersOn('positions')}`))
        .rows[0]?.count ?? 0;
    /**
     * A worker alone in a share group of its client id's own. NOTE: Mosquitto (2.0.11) goes on giving a
     * group member whose process has stopped its share of the messages, kept in its session until it
     * returns, so a stopped test worker left in a group would hold some of the next test's messages.
     */
    const worker = async (clientId: string, env: Record<string, string> = {}) => {
      if (!clientIds.includes(clientId)) clientIds.push(clientId);
      const started = await startWorker({
        DATABASE_URL: t.container.database.connectionString ?? '',
        MQTT_CLIENT_ID: clientId,
        MQTT_SHARE_GROUP: `${clientId}-group`,
        ...env,
      });
      workers.push(started);
      return started;
    };

    before(async () => {
      // The API in process has no MQTT_URL: only the worker processes consume.
      t = await createTestApp({ overrides: { clock } });
      admin = new pg.Client({ connectionString: t.container.database.connectionString });
      await admin.connect();
      acme = await createCompany(t.app, 'Acme');
      for (const deviceId of ['kill-1', 'outage-1'])
        await make.device(t.app, acme, (await make.policy(t.app, acme)).reference, { deviceId });
    });
    after(async () => {
      for (const w of workers) await stopWorker(w, 'SIGKILL');
      await admin.end();
      await t.close();
      for (const id of clientIds) await removeSession(id);
    });

    test(
      'a worker killed between receive and commit loses nothing: restarted, it stores every position once',
      { timeout: 60_000 },
      async () => {
        const clientId = `milepost-test-kill-${run}`;
        const first = await worker(clientId);
        const topic = topicOf(acme.client_id, 'kill-1');
        const lock = await blockInserts();
        await publish(topic, { positions: trace(unix('2025-06-10T12:10:00Z'), 100) });
        // The worker has the message and waits to insert it: between receive and commit.
        await until('the worker to wait on its insert', async () =>
          (await waitingInserts()) > 0 ? true : undefined,
        );
        await stopWorker(first, 'SIGKILL');
        // Its statement dies with it, as it would with the whole machine, so nothing is committed.
        await admin.query(`select pg_terminate_backend(pid) ${lockWaitersOn('positions')}`);
        await lock.release();
        assert.equal(await stored('kill-1'), 0);
        // Published while no worker runs: kept by the broker for the client id.
        await publish(topic, { positions: trace(unix('2025-06-10T12:20:00Z'), 100) });

        const second = await worker(clientId);
        await until('both messages stored', async () =>
          (await stored('kill-1')) === 200 ? true : undefined,
        );
        await sleep(500); // room for anything sent twice to show up
        assert.equal(await stored('kill-1'), 200, 'each position once');
        // The message the first worker held was redelivered and stored whole: nothing of it was committed.
        assert.deepEqual(
          second
            .lines()
            .filter((l) => l.outcome !== undefined)
            .map((l) => [l.topic, l.outcome, l.accepted]),
          [
            [topic, 'stored', 100],
            [topic, 'stored', 100],
          ],
        );
        await stopWorker(second, 'SIGTERM');
      },
    );

    test(
      'a transient database failure is retried, not acknowledged, and the message is stored once it ends',
      { timeout: 60_000 },
      async () => {
        const clientId = `milepost-test-outage-${run}`;
        // A lock wait beyond 200 ms fails (55P03), as statements do while the database is unavailable.
        const started = await worker(clientId, { PGOPTIONS: '-c lock_timeout=200' });
        const topic = topicOf(acme.client_id, 'outage-1');
        const lock = await blockInserts();
        await publish(topic, { positions: trace(unix('2025-06-10T12:30:00Z'), 50) });
        const retried = await until('a retry', async () =>
          started.lines().find((l) => l.msg === 'mqtt positions message not stored; trying again'),
        );
        assert.equal(retried.transient, true);
        assert.equal(await stored('outage-1'), 0);
        await lock.release();
        await until('the message stored', async () => ((await stored('outage-1')) === 50 ? true : undefined));
        assert.ok(!started.lines().some((l) => l.msg === 'mqtt positions message given up'));
        await stopWorker(started, 'SIGTERM');
        // Acknowledged: a worker started again with the client id gets nothing more.
        const again = await worker(clientId);
        await sleep(1000);
        assert.ok(!again.lines().some((l) => l.topic === topic), JSON.stringify(again.lines()));
        assert.equal(await stored('outage-1'), 50);
        await stopWorker(again, 'SIGTERM');
      },
    );
  },
);
