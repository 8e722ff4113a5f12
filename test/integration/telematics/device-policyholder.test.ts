import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { assertProblem, startAuthApp, type Headers } from '../auth/auth-support.ts';
import type { DeviceBody } from './telematics-support.ts';

// The device reads with a policyholder's access token: their own policies' devices only. The example
// policy's term starts on 2025-06-01 (London).
type Company = Awaited<ReturnType<typeof createCompany>>;
type Rig = Awaited<ReturnType<typeof startAuthApp>>;
type LoggedIn = Awaited<ReturnType<Rig['client']['loggedIn']>>;

const clock = fixedClock('2025-06-10T12:00:00Z');
let rig: Rig;
let acme: Company;
let alice: LoggedIn;
let bob: LoggedIn;
let asAlice: Headers;
let asBob: Headers;

const get = (url: string, headers: Headers = {}) => rig.t.app.inject({ method: 'GET', url, headers });

before(async () => {
  rig = await startAuthApp(clock);
  acme = await createCompany(rig.t.app, 'Acme');
  alice = await rig.client.loggedIn(acme.sandbox);
  bob = await rig.client.loggedIn(acme.sandbox);
  // The web app sends its public client_id with the token; a bare token works too.
  asAlice = { authorization: `Bearer ${alice.tokens.access_token}`, client_id: acme.client_id };
  asBob = { authorization: `Bearer ${bob.tokens.access_token}` };
  await make.device(rig.t.app, acme, alice.holder.policyReference, { deviceId: 'alice-obd' });
  await make.device(rig.t.app, acme, bob.holder.policyReference, { deviceId: 'bob-obd' });
});
after(async () => {
  await rig.close();
});

describe('devices with a policyholder’s token', () => {
  test('own policy: the list and the device answer 200', async () => {
    const list = await get(`/devices?policy_reference=${alice.holder.policyReference}`, asAlice);
    assert.equal(list.statusCode, 200, list.body);
    const { devices } = list.json<{ devices: DeviceBody[] }>();
    assert.deepEqual(
      devices.map((d) => [d.device_id, d.policy_reference, d.status]),
      [['alice-obd', alice.holder.policyReference, 'online']],
    );
    const one = await get('/devices/alice-obd', asAlice);
    assert.equal(one.statusCode, 200, one.body);
    assert.equal(one.json<DeviceBody>().kind, 'obd');
    assert.equal(one.json<DeviceBody>().bindings[0]?.bound_at, '2025-06-10T12:00:00.000Z');
  });

  test('another policyholder’s policy or device answers 404', async () => {
    assertProblem(
      await get(`/devices?policy_reference=${bob.holder.policyReference}`, asAlice),
      404,
      'NOT_FOUND',
    );
    assertProblem(await get('/devices/bob-obd', asAlice), 404, 'NOT_FOUND');
    assertProblem(await get('/devices/alice-obd', asBob), 404, 'NOT_FOUND');
    assertProblem(await get('/devices/nobody-at-all', asBob), 404, 'NOT_FOUND');
  });

  test('no token or a bad one answers 401; a policyholder must name the policy', async () => {
    assert.equal((await get(`/devices?policy_reference=${alice.holder.policyReference}`)).statusCode, 401);
    assert.equal((await get('/devices/alice-obd')).statusCode, 401);
    assert.equal((await get('/devices/alice-obd', { authorization: 'Bearer nope' })).statusCode, 401);
    const unnamed = await get('/devices', asAlice);
    assertProblem(unnamed, 422, 'VALIDATION_FAILED');
    assert.match(unnamed.body, /\/querystring\/policy_reference/);
  });

  test('a policyholder cannot bind, unbind or read positions', async () => {
    const bound = await rig.t.app.inject({
      method: 'POST',
      url: '/devices',
      headers: asAlice,
      payload: { device_id: 'x', policy_reference: alice.holder.policyReference, kind: 'obd' },
    });
    assert.equal(bound.statusCode, 401);
    const unbound = await rig.t.app.inject({ method: 'DELETE', url: '/devices/alice-obd', headers: asAlice });
    assert.equal(unbound.statusCode, 401);
    assert.equal((await get('/devices/alice-obd/positions?from=0&to=1', asAlice)).statusCode, 401);
  });

  test('a device moved to another policyholder shows its former holder only their own binding', async () => {
    await make.device(rig.t.app, acme, alice.holder.policyReference, { deviceId: 'moving' });
    clock.advance(60_000); // less than the access token lives
    await make.device(rig.t.app, acme, bob.holder.policyReference, { deviceId: 'moving' });
    const sighted = await rig.t.app.inject({
      method: 'POST',
      url: '/telematics/positions',
      headers: acme.sandbox,
      payload: {
        device_id: 'moving',
        positions: [{ time: Math.floor(clock.now().getTime() / 1000), lat: 51.5, lon: -0.12 }],
      },
    });
    assert.equal(sighted.json<{ accepted: number }>().accepted, 1, sighted.body);
    const theirs = await get('/devices/moving', asAlice);
    assert.equal(theirs.statusCode, 200, theirs.body);
    const seen = theirs.json<DeviceBody>();
    assert.equal(seen.policy_reference, null);
    assert.equal(seen.status, 'unbound');
    assert.equal(seen.last_seen_at, null, 'seen while bound to someone else');
    assert.deepEqual(
      seen.bindings.map((b) => b.policy_reference),
      [alice.holder.policyReference],
    );
    const now = (await get('/devices/moving', asBob)).json<DeviceBody>();
    assert.equal(now.policy_reference, bob.holder.policyReference);
    assert.equal(now.last_seen_at, clock.now().toISOString());
    assert.deepEqual(
      now.bindings.map((b) => b.policy_reference),
      [bob.holder.policyReference],
    );
    // A client still sees the whole history.
    const all = (await get('/devices/moving', acme.sandbox)).json<DeviceBody>();
    assert.equal(all.bindings.length, 2);
  });

  test('the OpenAPI document lists client credentials and the policyholder token on the reads only', async () => {
    const doc = (await get('/openapi.json')).json<{
      paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
    }>();
    const schemes = (path: string, method: string) =>
      (doc.paths[path]?.[method]?.security ?? []).map((s) => Object.keys(s).sort().join('+'));
    const both = ['clientId+clientSecret', 'policyholderToken'];
    assert.deepEqual(schemes('/devices', 'get'), both);
    assert.deepEqual(schemes('/devices/{device_id}', 'get'), both);
    assert.deepEqual(schemes('/devices', 'post'), ['clientId+clientSecret']);
    assert.deepEqual(schemes('/devices/{device_id}', 'delete'), ['clientId+clientSecret']);
  });
});
