import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { caller, eventsOfType, type DeviceBody, type Problem } from './telematics-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;

const clock = fixedClock('2025-06-10T12:00:00Z');
let t: TestApp;
let acme: Company;
let other: Company;
const call = caller(() => t);

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
});
after(async () => {
  await t.close();
});

describe('devices', () => {
  test('bind: 201 with the binding, Location and device.bound; the same binding again is 200 and changes nothing', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    const bound = await call('POST', '/devices', acme.sandbox, {
      device_id: 'obd-1',
      policy_reference: policy,
      kind: 'obd',
      vin: 'WVWZZZ1KZAW000001',
    });
    assert.equal(bound.statusCode, 201, bound.body);
    assert.equal(bound.headers['location'], '/devices/obd-1');
    const device = bound.json<DeviceBody>();
    assert.equal(device.policy_reference, policy);
    assert.equal(device.status, 'online', 'just bound: not silent yet');
    assert.equal(device.last_seen_at, null);
    assert.deepEqual(device.bindings, [
      { policy_reference: policy, bound_at: '2025-06-10T12:00:00.000Z', unbound_at: null },
    ]);
    const events = (await eventsOfType(t, 'device.bound')).map((e) => e.data);
    assert.deepEqual(events.at(-1), {
      device_id: 'obd-1',
      kind: 'obd',
      policy_reference: policy,
      bound_at: '2025-06-10T12:00:00.000Z',
    });

    clock.advance(60_000);
    const again = await call('POST', '/devices', acme.sandbox, {
      device_id: 'obd-1',
      policy_reference: policy,
      kind: 'obd',
    });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json<DeviceBody>().bindings.length, 1);
    assert.equal(again.json<DeviceBody>().vin, null, 'kind and vin as last sent');
    assert.equal((await eventsOfType(t, 'device.bound')).length, events.length);
  });

  test('rebinding keeps history: one active device per policy and one policy per device', async () => {
    const { reference: first } = await make.policy(t.app, acme);
    const { reference: second } = await make.policy(t.app, acme);
    const unboundBefore = (await eventsOfType(t, 'device.unbound')).length;
    assert.equal(
      (await call('POST', '/devices', acme.sandbox, { device_id: 'a', policy_reference: first, kind: 'obd' }))
        .statusCode,
      201,
    );
    clock.advance(3_600_000);
    // The device moves to the second policy: its binding to the first ends.
    const moved = await call('POST', '/devices', acme.sandbox, {
      device_id: 'a',
      policy_reference: second,
      kind: 'obd',
    });
    assert.equal(moved.statusCode, 201, moved.body);
    assert.deepEqual(
      moved.json<DeviceBody>().bindings.map((b) => [b.policy_reference, b.unbound_at]),
      [
        [first, clock.now().toISOString()],
        [second, null],
      ],
    );
    clock.advance(3_600_000);
    // Another device on the second policy: device a's binding ends.
    const replaced = await call('POST', '/devices', acme.sandbox, {
      device_id: 'b',
      policy_reference: second,
      kind: 'phone',
    });
    assert.equal(replaced.statusCode, 201, replaced.body);
    const a = (await call('GET', '/devices/a', acme.sandbox)).json<DeviceBody>();
    assert.equal(a.status, 'unbound');
    assert.equal(a.policy_reference, null);
    assert.equal(a.bindings.length, 2);
    assert.equal(a.bindings[1]?.unbound_at, clock.now().toISOString());
    const unbound = (await eventsOfType(t, 'device.unbound')).slice(unboundBefore).map((e) => e.data);
    assert.deepEqual(unbound, [
      { device_id: 'a', policy_reference: first, unbound_at: '2025-06-10T13:01:00.000Z' },
      { device_id: 'a', policy_reference: second, unbound_at: '2025-06-10T14:01:00.000Z' },
    ]);

    const listed = await call('GET', `/devices?policy_reference=${second}`, acme.sandbox);
    assert.equal(listed.statusCode, 200, listed.body);
    assert.deepEqual(
      listed.json<{ devices: DeviceBody[] }>().devices.map((d) => [d.device_id, d.policy_reference]),
      [
        ['a', null],
        ['b', second],
      ],
    );
    const page = await call('GET', '/devices?limit=1', acme.sandbox);
    const cursor = page.json<{ next_cursor: string | null }>().next_cursor;
    assert.equal(cursor, 'a');
    const next = await call('GET', `/devices?limit=1&after=${cursor}`, acme.sandbox);
    assert.deepEqual(
      next.json<{ devices: DeviceBody[] }>().devices.map((d) => d.device_id),
      ['b'],
    );
  });

  test('DELETE unbinds now (device.unbound); again it answers the device unchanged', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'c', kind: 'connected_car' });
    clock.advance(60_000);
    const removed = await call('DELETE', '/devices/c', acme.sandbox);
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal(removed.json<DeviceBody>().status, 'unbound');
    assert.equal(removed.json<DeviceBody>().bindings[0]?.unbound_at, clock.now().toISOString());
    const count = (await eventsOfType(t, 'device.unbound')).length;
    const again = await call('DELETE', '/devices/c', acme.sandbox);
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), removed.json());
    assert.equal((await eventsOfType(t, 'device.unbound')).length, count);
    // Bound again later: a new binding, the old one kept.
    const rebound = await call('POST', '/devices', acme.sandbox, {
      device_id: 'c',
      policy_reference: policy,
      kind: 'connected_car',
    });
    assert.equal(rebound.statusCode, 201);
    assert.equal(rebound.json<DeviceBody>().bindings.length, 2);
  });

  test('another company’s or environment’s device and policy are 404; a cancelled policy is 409', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'mine' });
    for (const headers of [other.sandbox, acme.production]) {
      assert.equal((await call('GET', '/devices/mine', headers)).statusCode, 404);
      assert.equal((await call('DELETE', '/devices/mine', headers)).statusCode, 404);
      assert.equal((await call('GET', '/devices/mine/positions', headers)).statusCode, 404);
      assert.equal((await call('GET', `/devices?policy_reference=${policy}`, headers)).statusCode, 404);
      const foreign = await call('POST', '/devices', headers, {
        device_id: 'mine',
        policy_reference: policy,
        kind: 'obd',
      });
      assert.equal(foreign.statusCode, 404, foreign.body);
    }
    assert.deepEqual(
      (await call('GET', '/devices', other.sandbox)).json<{ devices: unknown[] }>().devices,
      [],
    );
    const { reference: cancelled } = await make.policy(t.app, acme);
    const cancel = await call('DELETE', `/policys/${cancelled}`, acme.sandbox, { reason: 'sold the car' });
    assert.equal(cancel.statusCode, 200, cancel.body);
    const refused = await call('POST', '/devices', acme.sandbox, {
      device_id: 'late',
      policy_reference: cancelled,
      kind: 'obd',
    });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(refused.json<Problem>().code, 'POLICY_NOT_ACTIVE');
    assert.equal((await call('GET', '/devices/late', acme.sandbox)).statusCode, 404, 'nothing stored');
  });

  test('validation: unknown fields, a bad kind or device id, and no credentials', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    const bad = await call('POST', '/devices', acme.sandbox, {
      device_id: 'has space',
      policy_reference: policy,
      kind: 'tachograph',
      colour: 'red',
    });
    assert.equal(bad.statusCode, 422);
    const paths = bad.json<Problem>().errors?.map((e) => e.path) ?? [];
    for (const path of ['/body/device_id', '/body/kind', '/body/colour'])
      assert.ok(
        paths.some((p) => p.startsWith(path)),
        `${path} in ${paths.join(', ')}`,
      );
    assert.equal((await call('GET', '/devices', {})).statusCode, 401);
    assert.equal(
      (await call('GET', '/devices/mine', { client_id: acme.client_id, client_secret: 'wrong' })).statusCode,
      401,
    );
  });

  test('the OpenAPI document lists the routes and the device events', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { tags: string[] }>>;
      webhooks: Record<string, unknown>;
    }>();
    for (const path of [
      '/devices',
      '/devices/{device_id}',
      '/devices/{device_id}/positions',
      '/telematics/positions',
    ])
      assert.ok(doc.paths[path], path);
    assert.deepEqual(doc.paths['/telematics/positions']?.['post']?.tags, ['telematics']);
    assert.ok(doc.webhooks['device.bound']);
    assert.ok(doc.webhooks['device.unbound']);
  });
});
