import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { createProduct } from '../../support/driving.ts';
import { make } from '../../support/factories.ts';
import { caller, eventsOfType, type DeviceBody } from './telematics-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
interface JourneyBody {
  journey_reference: string;
  provider_reference: string | null;
  source: string;
  device_id: string | null;
  is_estimated: boolean;
  is_void: boolean;
  void_reason: string | null;
  distance_in_metres: number;
  usage_premium: number;
  start_at: number;
  end_at: number;
  start_lat: number | null;
  route: string;
}

// Monday 2 June 2025, in BST.
const clock = fixedClock('2025-06-02T08:00:00Z');
const unix = (iso: string): number => Date.parse(iso) / 1000;
let t: TestApp;
let acme: Company;
const call = caller(() => t);
const MILES_150 = 241_401; // 150 × 1,609.344 m, rounded down

/** A policy of `product` for `email`. */
const policyOf = async (product: string, email: string) =>
  (await make.policy(t.app, acme, { policy: { product_reference: product }, proposer: { email } })).reference;

async function journeysOf(policy: string): Promise<JourneyBody[]> {
  const r = await call('GET', `/journeys?policy_reference=${policy}&limit=500`, acme.sandbox);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ journeys: JourneyBody[] }>().journeys;
}

const check = () => t.container.services.telematics.checkSilentDevices(clock.now());
const device = async (id: string) => (await call('GET', `/devices/${id}`, acme.sandbox)).json<DeviceBody>();

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  await createProduct(t.app, acme.sandbox, 'tracked', {
    device_offline: { after_hours: 24, estimated_distance_per_day: 150, grace_days: 2 },
  });
  await createProduct(t.app, acme.sandbox, 'untracked', {});
});
after(async () => {
  await t.close();
});

describe('silent devices', () => {
  test('an offline week: offline after a day (event, email), estimates after the grace days, online again; a day whose data arrives late loses its estimate', async () => {
    const email = `silent.${String(process.pid)}@example.com`;
    const policy = await policyOf('tracked', email);
    await make.device(t.app, acme, policy, { deviceId: 'quiet-1' });
    // It reports on Monday evening, then falls silent.
    clock.set('2025-06-02T17:31:00Z');
    const sent = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'quiet-1',
      positions: [{ time: unix('2025-06-02T17:30:00Z'), lat: 51.5, lon: -0.14, speed_kmh: 0 }],
    });
    assert.equal(sent.statusCode, 202, sent.body);

    clock.set('2025-06-03T17:00:00Z');
    assert.deepEqual(await check(), { checked: 1, wentOffline: 0, cameOnline: 0, estimates: 0 });
    assert.equal((await device('quiet-1')).status, 'online');

    // 24 hours after its last position it is offline: the event and the email, once.
    clock.set('2025-06-03T17:30:00Z');
    assert.equal((await check()).wentOffline, 1);
    assert.equal((await check()).wentOffline, 0);
    assert.equal((await device('quiet-1')).status, 'offline');
    const offline = (await eventsOfType(t, 'device.offline')).map((e) => e.data as Record<string, unknown>);
    assert.equal(offline.length, 1);
    assert.equal(offline[0]?.['device_id'], 'quiet-1');
    assert.equal(offline[0]['last_seen_at'], '2025-06-02T17:30:00.000Z');
    const emails = await t.container.services.notifications.emailsTo(email);
    assert.equal(emails.filter((e) => e.template === 'device-offline').length, 1);

    // Tuesday and Wednesday are grace days; Thursday to Saturday are estimated once each has ended.
    clock.set('2025-06-05T23:30:00Z');
    assert.equal((await check()).estimates, 1);
    clock.set('2025-06-08T09:00:00Z');
    assert.equal((await check()).estimates, 2);
    assert.equal((await check()).estimates, 0);
    const estimates = (await journeysOf(policy)).filter((j) => j.source === 'estimate');
    assert.deepEqual(
      estimates.map((j) => j.provider_reference),
      ['estimate:quiet-1:2025-06-05', 'estimate:quiet-1:2025-06-06', 'estimate:quiet-1:2025-06-07'],
    );
    for (const j of estimates) {
      assert.equal(j.is_estimated, true);
      assert.equal(j.device_id, 'quiet-1');
      assert.equal(j.distance_in_metres, MILES_150);
      assert.equal(j.route, '');
      assert.equal(j.start_lat, 51.5); // where it was last seen
      assert.equal(j.end_at - j.start_at, 86_400);
      assert.ok(j.usage_premium > 0);
    }

    // Friday's data turns up (the phone had it buffered): Friday's estimate is voided; the device is online.
    const late = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'quiet-1',
      positions: [{ time: unix('2025-06-06T10:00:00Z'), lat: 51.5, lon: -0.14, speed_kmh: 0 }],
    });
    assert.equal(late.statusCode, 202, late.body);
    // Data of two days ago does not end a silence of a day's worth: still offline, no event.
    assert.equal((await device('quiet-1')).status, 'offline');
    assert.equal((await eventsOfType(t, 'device.online')).length, 0);
    await t.container.services.telematics.cutPendingTrips(clock.now());
    const after = await journeysOf(policy);
    const friday = after.find((j) => j.provider_reference === 'estimate:quiet-1:2025-06-06');
    assert.equal(friday?.is_void, true);
    assert.match(friday.void_reason ?? '', /Positions arrived/);
    assert.equal(after.filter((j) => j.source === 'estimate' && !j.is_void).length, 2);

    clock.set('2025-06-08T09:01:00Z');
    const pass = await check();
    // Silent since Friday 11:00 (BST) for less than its day's worth: no; since Friday it is 46 hours: still offline.
    assert.equal(pass.cameOnline, 0);
    const now = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'quiet-1',
      positions: [{ time: unix('2025-06-08T09:00:30Z'), lat: 51.5, lon: -0.14, speed_kmh: 0 }],
    });
    assert.equal(now.statusCode, 202, now.body);
    // Online at once, its event recorded before the request is answered: not at the next minute’s check.
    assert.equal((await device('quiet-1')).status, 'online');
    const online = (await eventsOfType(t, 'device.online')).map((e) => e.data as Record<string, unknown>);
    assert.equal(online.length, 1);
    assert.equal(online[0]?.['device_id'], 'quiet-1');
    assert.equal(online[0]['policy_reference'], policy);
    assert.equal(online[0]['last_seen_at'], '2025-06-08T09:00:30.000Z');
    assert.equal((await check()).cameOnline, 0);
    assert.equal((await eventsOfType(t, 'device.online')).length, 1);
  });

  test('the offline email names the policyholder’s account, so an erasure finds it', async () => {
    const email = `silent.named.${String(process.pid)}@example.com`;
    const policy = await policyOf('tracked', email);
    clock.set('2025-06-20T08:00:00Z');
    await make.device(t.app, acme, policy, { deviceId: 'quiet-3' });
    clock.set('2025-06-21T09:00:00Z');
    await check();
    assert.equal((await device('quiet-3')).status, 'offline');
    const queued = await t.container.database.db
      .selectFrom('outbox_emails as o')
      .leftJoin('users as u', 'u.id', 'o.user_id')
      .select('u.email')
      .where('o.recipient', '=', email)
      .where('o.template', '=', 'device-offline')
      .execute();
    assert.deepEqual(queued, [{ email }]);
  });

  test('without the product rule a device goes offline after 24 hours, with no email and no estimate', async () => {
    const email = `silent.plain.${String(process.pid)}@example.com`;
    const policy = await policyOf('untracked', email);
    clock.set('2025-06-10T08:00:00Z');
    await make.device(t.app, acme, policy, { deviceId: 'quiet-2', kind: 'phone' });
    clock.set('2025-06-14T08:00:00Z');
    const pass = await check();
    assert.ok(pass.wentOffline >= 1);
    assert.equal((await device('quiet-2')).status, 'offline');
    assert.equal((await journeysOf(policy)).length, 0);
    const emails = await t.container.services.notifications.emailsTo(email);
    assert.equal(emails.filter((e) => e.template === 'device-offline').length, 0);

    // It reports again: online as the positions are stored.
    const before = (await eventsOfType(t, 'device.online')).length;
    const sent = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'quiet-2',
      positions: [{ time: unix('2025-06-14T07:59:00Z'), lat: 51.5, lon: -0.14 }],
    });
    assert.equal(sent.statusCode, 202, sent.body);
    assert.equal((await device('quiet-2')).status, 'online');
    const online = (await eventsOfType(t, 'device.online')).slice(before);
    assert.deepEqual(
      online.map((e) => (e.data as Record<string, unknown>)['device_id']),
      ['quiet-2'],
    );
  });
});
