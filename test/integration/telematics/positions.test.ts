import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { caller, type BatchResult, type DeviceBody, type Problem } from './telematics-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
interface PositionPage {
  device_id: string;
  positions: Array<{
    time: number;
    lat: number;
    lon: number;
    speed_kmh: number | null;
    ignition: boolean | null;
    odometer_metres: number | null;
    policy_reference: string;
  }>;
  next_from: number | null;
}

const clock = fixedClock('2025-06-10T12:00:00Z');
const unix = (iso: string): number => Date.parse(iso) / 1000;
let t: TestApp;
let acme: Company;
let other: Company;
let policy: string;
const call = caller(() => t);

/** `count` positions a second apart from `startS`, heading north from Westminster. */
const trace = (startS: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    time: startS + i,
    lat: 51.5 + i * 0.0001,
    lon: -0.14,
    speed_kmh: 36,
    ignition: true,
  }));

const storedCount = async (deviceId: string) =>
  (await call('GET', `/devices/${deviceId}/positions?limit=10000`, acme.sandbox)).json<PositionPage>()
    .positions.length;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
  policy = (await make.policy(t.app, acme)).reference;
  await make.device(t.app, acme, policy, { deviceId: 'car-1' });
  clock.set('2025-06-10T13:00:00Z');
});
after(async () => {
  await t.close();
});

describe('POST /telematics/positions', () => {
  test('a batch is stored (202); the same batch again stores nothing new and counts duplicates', async () => {
    const positions = trace(unix('2025-06-10T12:10:00Z'), 500);
    const first = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'car-1',
      positions,
    });
    assert.equal(first.statusCode, 202, first.body);
    assert.deepEqual(first.json<BatchResult>(), { accepted: 500, duplicates: 0, rejected: [] });
    const again = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'car-1',
      positions,
    });
    assert.deepEqual(again.json<BatchResult>(), { accepted: 0, duplicates: 500, rejected: [] });
    assert.equal(await storedCount('car-1'), 500);
    const device = (await call('GET', '/devices/car-1', acme.sandbox)).json<DeviceBody>();
    assert.equal(device.last_seen_at, new Date((unix('2025-06-10T12:10:00Z') + 499) * 1000).toISOString());
    assert.equal(device.status, 'online');
  });

  test('ISO 8601 times are the same positions as their UNIX seconds; all fields come back', async () => {
    const iso = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'car-1',
      positions: [
        {
          time: '2025-06-10T13:30:00.250+01:00',
          lat: 51.4,
          lon: -0.2,
          speed_kmh: 12.5,
          heading: 270,
          accuracy_m: 3,
          ignition: false,
          odometer_metres: 123_456_789,
        },
      ],
    });
    assert.deepEqual(iso.json<BatchResult>(), { accepted: 1, duplicates: 0, rejected: [] });
    const same = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'car-1',
      positions: [{ time: unix('2025-06-10T12:30:00Z'), lat: 0, lon: 0 }],
    });
    assert.deepEqual(same.json<BatchResult>(), { accepted: 0, duplicates: 1, rejected: [] });
    const page = (
      await call(
        'GET',
        `/devices/car-1/positions?from=${unix('2025-06-10T12:30:00Z')}&to=${unix('2025-06-10T12:30:00Z')}`,
        acme.sandbox,
      )
    ).json<PositionPage>();
    assert.deepEqual(page.positions, [
      {
        time: unix('2025-06-10T12:30:00Z'),
        lat: 51.4,
        lon: -0.2,
        speed_kmh: 12.5,
        heading: 270,
        accuracy_m: 3,
        ignition: false,
        odometer_metres: 123_456_789,
        attributes: {},
        policy_reference: policy,
        received_at: '2025-06-10T13:00:00.000Z',
      },
    ]);
  });

  test('positions outside a binding, in the future or out of range are refused one by one', async () => {
    const result = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'car-1',
      positions: [
        { time: unix('2025-06-10T11:59:59Z'), lat: 51.5, lon: -0.1 }, // before bound_at
        { time: unix('2025-06-10T13:05:00Z'), lat: 51.5, lon: -0.1 }, // within the 5 minutes of skew
        { time: unix('2025-06-10T13:05:01Z'), lat: 51.5, lon: -0.1 },
        { time: unix('2025-06-10T12:40:00Z'), lat: 95, lon: -0.1 },
        { time: unix('2025-06-10T12:40:01Z'), lat: 51.5, lon: 181 },
        { time: '10 June 2025', lat: 51.5, lon: -0.1 },
        { time: '2025-06-31T12:40:00Z', lat: 51.5, lon: -0.1 }, // no such day (not 1 July)
        { time: '2025-06-10T12:40:60Z', lat: 51.5, lon: -0.1 },
      ],
    });
    assert.equal(result.statusCode, 202, result.body);
    const body = result.json<BatchResult>();
    assert.equal(body.accepted, 1);
    assert.deepEqual(
      body.rejected.map((r) => [r.index, r.reason]),
      [
        [0, 'outside_binding'],
        [2, 'in_future'],
        [3, 'out_of_range'],
        [4, 'out_of_range'],
        [5, 'invalid_time'],
        [6, 'invalid_time'],
        [7, 'invalid_time'],
      ],
    );
    assert.match(body.rejected[0]?.message ?? '', /not bound/);

    // After unbinding, later positions are refused; earlier ones still belong to the binding.
    const { reference: policy2 } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy2, { deviceId: 'car-2', kind: 'phone' });
    clock.set('2025-06-10T14:00:00Z');
    await call('DELETE', '/devices/car-2', acme.sandbox);
    clock.set('2025-06-10T15:00:00Z');
    const late = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'car-2',
      positions: [
        { time: unix('2025-06-10T13:59:59Z'), lat: 51.5, lon: -0.1 },
        { time: unix('2025-06-10T14:00:00Z'), lat: 51.5, lon: -0.1 },
      ],
    });
    assert.deepEqual(
      late.json<BatchResult>().rejected.map((r) => [r.index, r.reason]),
      [[1, 'outside_binding']],
    );
    assert.equal(late.json<BatchResult>().accepted, 1);
    assert.equal((await call('GET', '/devices/car-2', acme.sandbox)).json<DeviceBody>().status, 'unbound');
    clock.set('2025-06-10T13:00:00Z');
  });

  test('a binding ended or made after a device’s positions were stored governs its next batch', async () => {
    const { reference: first } = await make.policy(t.app, acme);
    await make.device(t.app, acme, first, { deviceId: 'car-3' });
    const post = (positions: ReadonlyArray<{ time: number; lat: number; lon: number }>) =>
      call('POST', '/telematics/positions', acme.sandbox, { device_id: 'car-3', positions });
    const at = (iso: string) => ({ time: unix(iso), lat: 51.5, lon: -0.1 });
    // The service now remembers the device with its open binding.
    clock.set('2025-06-10T13:20:00Z');
    assert.deepEqual((await post([at('2025-06-10T13:10:00Z')])).json<BatchResult>(), {
      accepted: 1,
      duplicates: 0,
      rejected: [],
    });

    clock.set('2025-06-10T14:00:00Z');
    await call('DELETE', '/devices/car-3', acme.sandbox);
    clock.set('2025-06-10T15:00:00Z');
    const afterUnbinding = (
      await post([at('2025-06-10T13:30:00Z'), at('2025-06-10T14:10:00Z')])
    ).json<BatchResult>();
    assert.equal(afterUnbinding.accepted, 1);
    assert.deepEqual(
      afterUnbinding.rejected.map((r) => [r.index, r.reason]),
      [[1, 'outside_binding']],
    );

    const { reference: second } = await make.policy(t.app, acme);
    await make.device(t.app, acme, second, { deviceId: 'car-3' });
    clock.set('2025-06-10T15:30:00Z');
    assert.deepEqual((await post([at('2025-06-10T15:10:00Z')])).json<BatchResult>(), {
      accepted: 1,
      duplicates: 0,
      rejected: [],
    });
    const page = (
      await call('GET', `/devices/car-3/positions?from=${unix('2025-06-10T13:00:00Z')}`, acme.sandbox)
    ).json<PositionPage>();
    assert.deepEqual(
      page.positions.map((p) => [p.time, p.policy_reference]),
      [
        [unix('2025-06-10T13:10:00Z'), first],
        [unix('2025-06-10T13:30:00Z'), first],
        [unix('2025-06-10T15:10:00Z'), second],
      ],
    );
    clock.set('2025-06-10T13:00:00Z');
  });

  test('10,000 positions are taken in one request; 10,001 are refused with 422 naming /body/positions', async () => {
    const start = unix('2025-06-09T00:00:00Z');
    await make.device(t.app, acme, (await make.policy(t.app, acme)).reference, { deviceId: 'bulk' });
    // Bound at 13:00 today: move the clock to cover a trace starting later.
    const from = unix('2025-06-10T13:00:00Z');
    clock.set('2025-06-10T16:00:00Z');
    const full = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'bulk',
      positions: trace(from, 10_000),
    });
    assert.equal(full.statusCode, 202, full.body.slice(0, 500));
    assert.equal(full.json<BatchResult>().accepted, 10_000);
    const tooMany = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'bulk',
      positions: trace(start, 10_001),
    });
    assert.equal(tooMany.statusCode, 422, tooMany.body.slice(0, 500));
    assert.equal(tooMany.json<Problem>().code, 'VALIDATION_FAILED');
    assert.ok(
      tooMany.json<Problem>().errors?.some((e) => e.path === '/body/positions' && /10000/.test(e.message)),
    );
    assert.equal(await storedCount('bulk'), 10_000);

    // Pages: limit and next_from.
    const page1 = (
      await call('GET', `/devices/bulk/positions?limit=4000&from=${from}`, acme.sandbox)
    ).json<PositionPage>();
    assert.equal(page1.positions.length, 4000);
    assert.equal(page1.next_from, from + 4000);
    const last = (
      await call(
        'GET',
        `/devices/bulk/positions?limit=10000&from=${from + 8000}&to=${from + 8999}`,
        acme.sandbox,
      )
    ).json<PositionPage>();
    assert.equal(last.positions.length, 1000);
    assert.equal(last.next_from, null);
    assert.deepEqual([last.positions[0]?.time, last.positions.at(-1)?.time], [from + 8000, from + 8999]);
    const defaultPage = (await call('GET', '/devices/bulk/positions', acme.sandbox)).json<PositionPage>();
    assert.equal(defaultPage.positions.length, 1000);
    clock.set('2025-06-10T13:00:00Z');
  });

  test('malformed bodies are 422; another company’s device is 404; no credentials 401', async () => {
    for (const body of [
      { device_id: 'car-1', positions: [] },
      { device_id: 'car-1', positions: [{ time: 1, lat: '51.5', lon: 0 }] },
      // A field of its own may be a number, a string or a boolean, not an object.
      { device_id: 'car-1', positions: [{ time: 1, lat: 51.5, lon: 0, colour: { name: 'red' } }] },
      { device_id: 'car-1', positions: [{ time: 1, lat: 51.5, lon: 0 }], colour: 'red' },
      { device_id: 'car-1' },
    ]) {
      const response = await call('POST', '/telematics/positions', acme.sandbox, body);
      assert.equal(response.statusCode, 422, JSON.stringify(body));
    }
    const foreign = await call('POST', '/telematics/positions', other.sandbox, {
      device_id: 'car-1',
      positions: trace(unix('2025-06-10T12:20:00Z'), 2),
    });
    assert.equal(foreign.statusCode, 404, foreign.body);
    assert.equal((await call('GET', '/devices/car-1/positions', other.sandbox)).statusCode, 404);
    assert.equal(
      (await call('POST', '/telematics/positions', {}, { device_id: 'car-1', positions: trace(0, 1) }))
        .statusCode,
      401,
    );
    assert.equal((await call('GET', '/devices/car-1/positions?limit=10001', acme.sandbox)).statusCode, 422);
  });
});
