import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { fixedClock } from '../../../src/platform/clock.ts';
import {
  finishTripCut,
  leasePendingDevices,
  releaseTripLeases,
  renewTripLeases,
} from '../../../src/modules/telematics/trip-cutting-repository.ts';
import { createTripCutting, TRIP_LEASE_MS } from '../../../src/modules/telematics/trip-cutting.ts';
import { createCompany, createTestApp, TEST_ADMIN_KEY, type TestApp } from '../../support/app.ts';
import { lockWaitersOn, onPostgres } from '../../support/database.ts';
import { make } from '../../support/factories.ts';
import { caller, type BatchResult } from './telematics-support.ts';

/**
 * Trip cutting's leases: a pass holds its devices for TRIP_LEASE_MS past its last heartbeat, renewed
 * while it works, so a killed worker's devices are cut by another within half a minute.
 */
const MAIN = path.resolve(import.meta.dirname, '../../../src/main.ts');
const clock = fixedClock('2025-06-10T06:00:00Z');
const unix = (iso: string): number => Date.parse(iso) / 1000;
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
const call = caller(() => t);
const db = () => t.container.database.db;

/** A one-minute drive from `startIso`, then parked with the ignition off: one finished trip. */
function drive(startIso: string) {
  const startS = unix(startIso);
  const moving = Array.from({ length: 60 }, (_, i) => ({
    time: startS + i,
    lat: 51.5 + i * 0.00009,
    lon: -0.14,
    speed_kmh: 36,
    ignition: true,
  }));
  return [
    ...moving,
    { time: startS + 61, lat: 51.5 + 60 * 0.00009, lon: -0.14, speed_kmh: 0, ignition: false },
  ];
}

async function deviceWithTrip(deviceId: string, startIso: string): Promise<string> {
  // Bound before the drive; the drive sent once it is over.
  clock.set(new Date(Date.parse(startIso) - 60_000));
  await make.device(t.app, acme, (await make.policy(t.app, acme)).reference, { deviceId });
  clock.set(new Date(Date.parse(startIso) + 120_000));
  const sent = await call('POST', '/telematics/positions', acme.sandbox, {
    device_id: deviceId,
    positions: drive(startIso),
  });
  assert.equal(sent.statusCode, 202, sent.body);
  assert.equal(sent.json<BatchResult>().accepted, 61);
  const row = await db()
    .selectFrom('devices')
    .select('id')
    .where('device_id', '=', deviceId)
    .executeTakeFirstOrThrow();
  return row.id;
}

const leaseOf = (rowId: string) =>
  db()
    .selectFrom('devices')
    .select(['trips_lease_until', 'trips_lease_id', 'trips_pending_from'])
    .where('id', '=', rowId)
    .executeTakeFirstOrThrow();

const deviceTrips = async (deviceId: string) =>
  db()
    .selectFrom('journeys')
    .select('provider_reference')
    .where('device_id', '=', deviceId)
    .where('source', '=', 'device')
    .where('is_void', '=', false)
    .execute();

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
});
after(async () => {
  await t.close();
});

describe('trip-cutting leases', () => {
  test('a device leased by a worker that then died is cut by another within 25 s of its last heartbeat, not before its lease ends', async () => {
    const rowId = await deviceWithTrip('lease-dead-1', '2025-06-10T06:10:00Z');
    // The dead worker's pass: it leased the device at T0 and was killed before its next heartbeat.
    const t0 = new Date('2025-06-10T06:20:00Z');
    clock.set(t0);
    const taken = await leasePendingDevices(db(), t0, {
      idleS: 300,
      recutS: 30,
      recutShare: 0.25,
      leaseId: randomUUID(),
      leaseUntil: new Date(t0.getTime() + TRIP_LEASE_MS),
      limit: 20,
    });
    assert.deepEqual(
      taken.map((d) => d.deviceId),
      ['lease-dead-1'],
    );

    const cut = (afterMs: number) =>
      t.container.services.telematics.cutPendingTrips(new Date(t0.getTime() + afterMs));
    assert.equal((await cut(10_000)).devices, 0, 'still leased 10 s on');
    const pass = await cut(25_000);
    assert.deepEqual([pass.devices, pass.stored, pass.failed], [1, 1, 0]);
    assert.equal((await deviceTrips('lease-dead-1')).length, 1);
    const lease = await leaseOf(rowId);
    assert.deepEqual(
      [lease.trips_lease_until, lease.trips_lease_id, lease.trips_pending_from],
      [null, null, null],
    );
  });

  test('renewing, finishing and giving back act only on the pass’s own lease', async () => {
    const rowId = await deviceWithTrip('lease-own-1', '2025-06-10T07:10:00Z');
    const t0 = new Date('2025-06-10T07:20:00Z');
    const mine = randomUUID();
    const theirs = randomUUID();
    const [device] = await leasePendingDevices(db(), t0, {
      idleS: 300,
      recutS: 30,
      recutShare: 0.25,
      leaseId: theirs,
      leaseUntil: new Date(t0.getTime() + TRIP_LEASE_MS),
      limit: 20,
    });
    assert.equal(device?.deviceId, 'lease-own-1');
    // A pass whose lease lapsed and was taken by `theirs` renews nothing, and its finish and release do nothing.
    assert.equal((await renewTripLeases(db(), mine, [rowId], new Date(t0.getTime() + 60_000))).size, 0);
    await finishTripCut(db(), device, mine, null, t0);
    await releaseTripLeases(db(), mine, [rowId]);
    const held = await leaseOf(rowId);
    assert.equal(held.trips_lease_id, theirs);
    assert.equal(held.trips_lease_until?.getTime(), t0.getTime() + TRIP_LEASE_MS);
    assert.notEqual(held.trips_pending_from, null);
    // Its holder renews it.
    assert.deepEqual(
      [...(await renewTripLeases(db(), theirs, [rowId], new Date(t0.getTime() + 60_000)))],
      [rowId],
    );
    assert.equal((await leaseOf(rowId)).trips_lease_until?.getTime(), t0.getTime() + 60_000);
    await releaseTripLeases(db(), theirs, [rowId]);
    assert.equal((await leaseOf(rowId)).trips_lease_id, null);
    // Given back, the device is another pass's to take; that pass's finish ends it.
    const [again] = await leasePendingDevices(db(), t0, {
      idleS: 300,
      recutS: 30,
      recutShare: 0.25,
      leaseId: mine,
      leaseUntil: new Date(t0.getTime() + TRIP_LEASE_MS),
      limit: 20,
    });
    assert.equal(again?.id, rowId);
    await finishTripCut(db(), again, mine, null, t0);
    assert.deepEqual(Object.values(await leaseOf(rowId)), [null, null, null]);
  });
});

describe(
  'trip-cutting leases across processes',
  { skip: !onPostgres && 'PostgreSQL only: another connection holds a lock, another process is killed' },
  () => {
    let admin: pg.Client;
    before(async () => {
      admin = new pg.Client({ connectionString: t.container.database.connectionString });
      await admin.connect();
    });
    after(async () => {
      await admin.end();
    });

    /** Holds a lock that every read of journeys waits for (a cut reads them first), until `release`. */
    const blockJourneys = async () => {
      const locker = new pg.Client({ connectionString: t.container.database.connectionString });
      locker.on('error', () => undefined);
      await locker.connect();
      await locker.query('begin');
      await locker.query('lock table journeys in access exclusive mode');
      return {
        async release() {
          await locker.query('rollback');
          await locker.end();
        },
      };
    };
    const waitingOnJourneys = async (): Promise<number> =>
      (await admin.query<{ count: number }>(`select count(*)::int as count ${lockWaitersOn('journeys')}`))
        .rows[0]?.count ?? 0;
    async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!(await probe())) {
        assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
        await sleep(50);
      }
    }

    test('a live pass’s heartbeat keeps its lease however long the cut takes; the lease ends with the cut', async () => {
      const rowId = await deviceWithTrip('lease-live-1', '2025-06-10T08:10:00Z');
      const leaseMs = 400;
      const cutting = createTripCutting({
        db: db(),
        clock,
        journeys: t.container.services.journeys,
        tripEndIdleMinutes: 5,
        leaseMs,
      });
      const now = new Date('2025-06-10T08:20:00Z');
      const lock = await blockJourneys();
      let passing: ReturnType<typeof cutting.cutPendingTrips> | undefined;
      try {
        passing = cutting.cutPendingTrips(now);
        await until('the cut to wait on journeys', async () => (await waitingOnJourneys()) > 0);
        await sleep(4 * leaseMs);
        const lease = await leaseOf(rowId);
        assert.ok(
          (lease.trips_lease_until?.getTime() ?? 0) >= now.getTime() + 4 * leaseMs,
          `renewed past ${String(4 * leaseMs)} ms: ${String(lease.trips_lease_until?.toISOString())}`,
        );
        // Another worker, at a time past the first lease's end, finds nothing to take.
        const other = await t.container.services.telematics.cutPendingTrips(
          new Date(now.getTime() + 2 * leaseMs),
        );
        assert.equal(other.devices, 0);
      } finally {
        await lock.release();
      }
      const pass = await passing;
      assert.deepEqual([pass.devices, pass.stored, pass.failed], [1, 1, 0]);
      const lease = await leaseOf(rowId);
      assert.deepEqual([lease.trips_lease_until, lease.trips_lease_id], [null, null]);
    });

    test(
      'after kill -9 of a worker mid-cut, its device is cut by another within 25 s, not at once',
      { timeout: 90_000 },
      async () => {
        const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-lease-worker-'));
        let worker: ChildProcess | undefined;
        const rowId = await deviceWithTrip('lease-kill-1', '2025-06-10T09:10:00Z');
        const lock = await blockJourneys();
        try {
          worker = spawn(process.execPath, [MAIN], {
            env: {
              PATH: process.env['PATH'] ?? '',
              ROLE: 'worker',
              ADMIN_API_KEY: TEST_ADMIN_KEY,
              DATA_DIR: dataDir,
              DATABASE_URL: t.container.database.connectionString ?? '',
              LOG_LEVEL: 'info',
            },
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let out = '';
          worker.stdout?.on('data', (chunk: Buffer) => {
            out += chunk.toString();
          });
          await until('the worker to start', async () => {
            assert.equal(worker?.exitCode, null, `the worker exited: ${out}`);
            return out.includes('milepost started');
          });
          // The worker leases the device, then waits to read its journeys: mid-cut.
          await until(
            'the worker to lease the device and wait mid-cut',
            async () => (await leaseOf(rowId)).trips_lease_id !== null && (await waitingOnJourneys()) > 0,
          );
          const exited = once(worker, 'exit');
          worker.kill('SIGKILL');
          await exited;
          const killedAtMs = Date.now();
          // Its statements die with it, as they would with the machine.
          await admin.query(`select pg_terminate_backend(pid) ${lockWaitersOn('journeys')}`);
          await lock.release();

          const cut = (afterMs: number) =>
            t.container.services.telematics.cutPendingTrips(new Date(killedAtMs + afterMs));
          assert.equal((await cut(5_000)).devices, 0, 'its lease still holds 5 s after the kill');
          const pass = await cut(25_000);
          assert.deepEqual([pass.devices, pass.stored, pass.failed], [1, 1, 0]);
          assert.equal((await deviceTrips('lease-kill-1')).length, 1);
        } finally {
          if (worker !== undefined && worker.exitCode === null && worker.signalCode === null) {
            const exited = once(worker, 'exit');
            worker.kill('SIGKILL');
            await exited;
          }
          await lock.release().catch(() => undefined);
          await fs.rm(dataDir, { recursive: true, force: true });
        }
      },
    );
  },
);
