import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { connectAsync, type MqttClient } from 'mqtt';
import pg from 'pg';
import { EVENT_CONNECTIONS } from '../../src/modules/telematics/telematics-mqtt.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { lockWaitersOn, onPostgres } from '../support/database.ts';
import { make } from '../support/factories.ts';
import { startService, type Service } from './service-processes.ts';

/**
 * First notice of loss across a crash: crash events are published over MQTT to a worker process whose
 * inserts are held by a lock, so that it has the messages and has committed nothing; it is killed
 * (SIGKILL) there. More crashes (each device's twice, the second within 2 minutes) are published while
 * no worker runs. A second worker with the same MQTT client id resumes the session: the broker sends
 * what was never acknowledged again. Afterwards each device has exactly one crash and each crash
 * exactly one claim: none lost, none twice.
 */
const DEVICES = Number(process.env['RELIABILITY_CLAIM_DEVICES'] ?? 8);
const MQTT_URL = process.env['MQTT_TEST_URL'] ?? 'mqtt://127.0.0.1:1883';
const run = `${String(process.pid)}-${randomBytes(4).toString('hex')}`;

let t: TestApp;
let publisher: MqttClient | undefined;
const services: Service[] = [];
let clientId = '';
const deviceIds: string[] = [];

before(async () => {
  if (!onPostgres) return;
  t = await createTestApp();
  const company = await createCompany(t.app, 'Crash Claims Mutual');
  clientId = company.client_id;
  for (let i = 0; i < DEVICES; i++) {
    const policy = await make.livePolicy(t.app, company.sandbox);
    deviceIds.push((await make.device(t.app, company.sandbox, policy.reference)).device_id);
  }
});

after(async () => {
  for (const service of services) service.child.kill('SIGKILL');
  await publisher?.endAsync();
  if (onPostgres) await t.close();
});

async function tally() {
  const rows = await sql<{ crashes: number; claims: number; devices: number; twice: number }>`
    select (select count(*)::int from crash_events) as crashes,
      (select count(*)::int from claims) as claims,
      (select count(distinct device_id)::int from crash_events) as devices,
      (select count(*)::int from (
        select 1 from claims group by crash_event_id having count(*) > 1) d) as twice`.execute(
    t.container.database.db,
  );
  return rows.rows[0]!;
}

/** Polls `probe` until it returns a value other than undefined. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Holds every insert into crash_events (a share lock) until released: a worker waits between message and commit. */
async function blockCrashInserts() {
  const locker = new pg.Client({ connectionString: t.container.database.connectionString });
  locker.on('error', () => undefined);
  await locker.connect();
  await locker.query('begin');
  await locker.query('lock table crash_events in share mode');
  return {
    async release() {
      await locker.query('rollback');
      await locker.end();
    },
  };
}

async function waitingInserts(admin: pg.Client): Promise<number> {
  const r = await admin.query<{ count: number }>(
    `select count(*)::int as count ${lockWaitersOn('crash_events')}`,
  );
  return r.rows[0]?.count ?? 0;
}

/** A worker process consuming MQTT, once its connections are subscribed. */
async function worker(env: Record<string, string>): Promise<Service> {
  const url = t.container.database.connectionString ?? '';
  const service = await startService('worker', url, env);
  services.push(service);
  await until('the worker to subscribe', async () => {
    const text = await (await fetch(`${service.base}/metrics`)).text();
    const subscribed =
      /^milepost_mqtt_connected\{lane="positions"\} 2$/m.test(text) &&
      new RegExp(`^milepost_mqtt_connected\\{lane="events"\\} ${String(EVENT_CONNECTIONS)}$`, 'm').test(text);
    return subscribed ? true : undefined;
  });
  return service;
}

async function publishCrash(deviceId: string, timeS: number): Promise<void> {
  publisher ??= await connectAsync(MQTT_URL, { clientId: `claims-crash-pub-${run}`, protocolVersion: 5 });
  const payload = {
    type: 'crash',
    time: timeS,
    lat: 51.5,
    lon: -0.12,
    speed_kmh: 52,
    peak_acceleration_g: 7,
  };
  await publisher.publishAsync(
    `milepost/${clientId}/sandbox/devices/${deviceId}/events`,
    JSON.stringify(payload),
    {
      qos: 1,
    },
  );
}

test(
  'kill -9 between the crash message and its commit: after a restart one claim a crash, never two',
  { skip: !onPostgres && 'PostgreSQL only: the worker runs in a process of its own', timeout: 300_000 },
  async (context) => {
    const env = {
      MQTT_URL,
      MQTT_CLIENT_ID: `claims-crash-${run}`,
      MQTT_SHARE_GROUP: `claims-crash-${run}`,
      MQTT_CONNECTIONS: '2',
    };
    const admin = new pg.Client({ connectionString: t.container.database.connectionString });
    await admin.connect();
    try {
      const first = await worker(env);
      // After every binding began (a crash before it belongs to no policy).
      const nowS = Math.floor(Date.now() / 1000);
      const held = deviceIds.slice(0, 2);
      const lock = await blockCrashInserts();
      for (const deviceId of held) await publishCrash(deviceId, nowS);
      // The worker has the messages and waits to insert them: between receive and commit.
      await until('the worker to wait on its inserts', async () =>
        (await waitingInserts(admin)) > 0 ? true : undefined,
      );
      first.child.kill('SIGKILL');
      // Its statements die with it, as they would with the whole machine: nothing is committed.
      await admin.query(`select pg_terminate_backend(pid) ${lockWaitersOn('crash_events')}`);
      await lock.release();
      assert.deepEqual(await tally(), { crashes: 0, claims: 0, devices: 0, twice: 0 });
      // Published while no worker runs (kept by the broker for the client id), each twice within 2 minutes.
      for (const deviceId of deviceIds)
        for (const offsetS of [0, 45]) await publishCrash(deviceId, nowS + offsetS);

      const started = Date.now();
      await worker(env);
      await until(
        'a claim for every device’s crash',
        async () => {
          const now = await tally();
          return now.crashes >= DEVICES && now.claims >= DEVICES ? true : undefined;
        },
        180_000,
      );
      await sleep(3000); // room for anything sent twice to show up
      context.diagnostic(
        `all claimed ${String(Math.round((Date.now() - started) / 1000))} s after the restart`,
      );
      assert.deepEqual(await tally(), { crashes: DEVICES, claims: DEVICES, devices: DEVICES, twice: 0 });
    } finally {
      await admin.end();
    }
  },
);
