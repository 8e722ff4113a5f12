import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { connectAsync, type MqttClient } from 'mqtt';
import pg from 'pg';
import { EVENT_CONNECTIONS } from '../../../src/modules/telematics/telematics-mqtt.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createLogger } from '../../../src/platform/logging.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { lockWaitersOn, onPostgres } from '../../support/database.ts';
import { make } from '../../support/factories.ts';
import { MQTT_URL, noMqttBroker } from '../../support/mqtt-broker.ts';
import { crashBody } from './claims-support.ts';

/**
 * Crash events over MQTT (`milepost/{client_id}/{environment}/devices/{device_id}/events`) against a
 * real broker (Mosquitto on 127.0.0.1:1883, or MQTT_TEST_URL): the consumer stores the crash and
 * acknowledges it, and the worker running beside it opens one draft claim.
 */
const run = `${String(process.pid)}-${randomBytes(4).toString('hex')}`;
const WAIT_MS = 15_000;

const noBroker = noMqttBroker();

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface LogLine {
  msg: string;
  topic?: string;
  outcome?: string;
  reason?: string;
}

describe('crash events over MQTT', { skip: noBroker }, () => {
  const clock = fixedClock('2025-06-10T12:00:00Z');
  const clientId = `milepost-claims-test-${run}`;
  const lines: LogLine[] = [];
  let t: TestApp;
  let publisher: MqttClient;
  let acme: Awaited<ReturnType<typeof createCompany>>;
  const topic = (deviceId: string) => `milepost/${acme.client_id}/sandbox/devices/${deviceId}/events`;
  const nowS = () => Math.floor(clock.now().getTime() / 1000);
  const claimsOfCrashes = async () =>
    t.container.database.db
      .selectFrom('claims')
      .innerJoin('crash_events', 'crash_events.id', 'claims.crash_event_id')
      .select(['claims.id', 'claims.state', 'crash_events.source'])
      .execute();

  before(async () => {
    // The positions connection's session as a version that took both kinds on one set of connections
    // left it: subscribed to the events too. The consumer drops that subscription when it connects.
    const earlier = await connectAsync(MQTT_URL, {
      clientId: `${clientId}.0`,
      clean: false,
      protocolVersion: 5,
      reconnectPeriod: 0,
      properties: { sessionExpiryInterval: 300 },
    });
    await earlier.subscribeAsync(`$share/claims-${run}/milepost/+/+/devices/+/events`, { qos: 1 });
    await earlier.endAsync();
    t = await createTestApp({
      startJobs: true,
      env: { MQTT_URL, MQTT_CLIENT_ID: clientId, MQTT_SHARE_GROUP: `claims-${run}`, MQTT_CONNECTIONS: '1' },
      overrides: {
        clock,
        logger: createLogger('debug', {
          write: (line: string) => {
            const parsed = JSON.parse(line) as LogLine;
            if (parsed.msg.includes('mqtt')) lines.push(parsed);
          },
        }),
      },
    });
    acme = await createCompany(t.app, 'Acme');
    for (const deviceId of ['car-1', 'car-2', 'car-3', 'car-4'])
      await make.device(t.app, acme, (await make.policy(t.app, acme)).reference, { deviceId });
    clock.set('2025-06-10T13:00:00Z');
    publisher = await connectAsync(MQTT_URL, {
      clientId: `claims-publisher-${run}`,
      protocolVersion: 5,
      reconnectPeriod: 0,
    });
  });
  after(async () => {
    await publisher.endAsync();
    await t.close();
    // The consumer's broker sessions go with it: its positions connection and its events lane's.
    const ids = [
      `${clientId}.0`,
      ...Array.from({ length: EVENT_CONNECTIONS }, (_, i) => `${clientId}.events.${String(i)}`),
    ];
    for (const id of ids) {
      const session = await connectAsync(MQTT_URL, {
        clientId: id,
        clean: true,
        protocolVersion: 5,
        reconnectPeriod: 0,
        properties: { sessionExpiryInterval: 0 },
      });
      await session.endAsync();
    }
  });

  test('a crash published to the device’s events topic opens one draft claim; a second report is the same crash', async () => {
    const { device_id: _ignored, ...payload } = crashBody('car-1', nowS() - 10);
    await publisher.publishAsync(topic('car-1'), JSON.stringify(payload), { qos: 1 });
    const claims = await until('the draft claim', async () => {
      const rows = await claimsOfCrashes();
      return rows.length > 0 ? rows : undefined;
    });
    assert.deepEqual(
      claims.map((c) => [c.state, c.source]),
      [['draft', 'device']],
    );
    await publisher.publishAsync(topic('car-1'), JSON.stringify({ ...payload, time: payload.time + 60 }), {
      qos: 1,
    });
    const duplicate = await until('the duplicate’s outcome', async () =>
      lines.find((l) => l.topic === topic('car-1') && l.outcome === 'duplicate'),
    );
    assert.equal(duplicate.outcome, 'duplicate');
    await sleep(1500);
    assert.equal((await claimsOfCrashes()).length, 1, 'one claim for one crash');
  });

  test('a bad crash message is logged, acknowledged and stores nothing', async () => {
    await publisher.publishAsync(
      topic('car-1'),
      JSON.stringify({ type: 'crash', time: nowS(), lat: 95, lon: 0 }),
      {
        qos: 1,
      },
    );
    const bad = await until('the bad message’s outcome', async () =>
      lines.find((l) => l.topic === topic('car-1') && l.outcome === 'bad_payload'),
    );
    assert.match(bad.reason ?? '', /\/payload\/lat/);
    await publisher.publishAsync(topic('car-9'), JSON.stringify(crashBody('car-9', nowS())), { qos: 1 });
    await until('the unknown device’s outcome', async () =>
      lines.find((l) => l.topic === topic('car-9') && l.outcome === 'unknown_device'),
    );
    const stored = await t.container.database.db.selectFrom('crash_events').select('id').execute();
    assert.equal(stored.length, 1);
  });
  test(
    'crashes are not held up by positions: with the positions connection stuck on a message, their claims open',
    { skip: !onPostgres && 'PostgreSQL only: a lock from another connection holds the positions insert' },
    async () => {
      const { db, connectionString } = t.container.database;
      const storedPositions = async () =>
        (
          await db
            .selectFrom('positions')
            .innerJoin('devices', 'devices.id', 'positions.device_id')
            .where('devices.device_id', '=', 'car-1')
            .select((eb) => eb.fn.countAll<number | string>().as('count'))
            .executeTakeFirstOrThrow()
        ).count;
      const claimsOf = async (deviceIds: string[]) =>
        db
          .selectFrom('claims')
          .innerJoin('crash_events', 'crash_events.id', 'claims.crash_event_id')
          .innerJoin('devices', 'devices.id', 'crash_events.device_id')
          .where('devices.device_id', 'in', deviceIds)
          .select(['devices.device_id', 'claims.state'])
          .execute();
      // Every insert into positions waits for this lock: the one positions connection holds its message.
      const locker = new pg.Client({ connectionString });
      locker.on('error', () => undefined);
      await locker.connect();
      await locker.query('begin');
      await locker.query('lock table positions in share mode');
      try {
        const positionsTopic = `milepost/${acme.client_id}/sandbox/devices/car-1/positions`;
        const startS = Math.floor(Date.parse('2025-06-10T12:30:00Z') / 1000);
        const positions = Array.from({ length: 20 }, (_, i) => ({ time: startS + i, lat: 51.5, lon: -0.14 }));
        await publisher.publishAsync(positionsTopic, JSON.stringify({ positions }), { qos: 1 });
        await until('the positions insert to wait', async () => {
          const waiting = await locker.query<{ count: number }>(
            `select count(*)::int as count ${lockWaitersOn('positions')}`,
          );
          return (waiting.rows[0]?.count ?? 0) > 0 ? true : undefined;
        });
        const crashed = ['car-2', 'car-3', 'car-4'];
        for (const deviceId of crashed) {
          const { device_id: _ignored, ...payload } = crashBody(deviceId, nowS() - 5);
          await publisher.publishAsync(topic(deviceId), JSON.stringify(payload), { qos: 1 });
        }
        const opened = await until('a draft claim for each crash', async () => {
          const rows = await claimsOf(crashed);
          return rows.length === crashed.length ? rows : undefined;
        });
        assert.deepEqual(
          opened.map((c) => c.state),
          ['draft', 'draft', 'draft'],
        );
        assert.equal(Number(await storedPositions()), 0, 'the positions message still waits');
      } finally {
        await locker.query('rollback');
        await locker.end();
      }
      // Released, the positions message is stored: it waited, and was not lost.
      await until('the positions stored', async () =>
        Number(await storedPositions()) === 20 ? true : undefined,
      );
    },
  );
});
