import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { createProduct } from '../../support/driving.ts';
import { make } from '../../support/factories.ts';
import { caller, claimsPass, type Claim } from './claims-support.ts';

// Crashes detected in the positions of a trip when it is cut: stored as source `detected` and opened as a
// draft claim by the same first notice of loss as a device's crash report.
const clock = fixedClock('2025-06-10T06:00:00Z');
const unix = (iso: string): number => Date.parse(iso) / 1000;
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
const call = caller(() => t);

interface Fix {
  time: number;
  lat: number;
  lon: number;
  speed_kmh: number;
}

/** About 13.9 m a second north: 50 km/h. */
const DEGREES_A_SECOND = 0.000125;

/**
 * 120 s north at 50 km/h from `startS`, then the speed falls by `dropKmhPerSecond` each second to a stop,
 * then 60 s standing still where it stopped.
 */
function drive(startS: number, dropKmhPerSecond: number): Fix[] {
  const fixes: Fix[] = [];
  let lat = 51.5;
  let speed = 50;
  for (let i = 0; i < 120; i++) {
    fixes.push({ time: startS + i, lat, lon: -0.14, speed_kmh: speed });
    lat += DEGREES_A_SECOND;
  }
  let s = 120;
  while (speed > 0) {
    speed = Math.max(0, speed - dropKmhPerSecond);
    lat += (DEGREES_A_SECOND * speed) / 50;
    fixes.push({ time: startS + s++, lat, lon: -0.14, speed_kmh: speed });
  }
  for (let k = 0; k < 60; k++) fixes.push({ time: startS + s++, lat, lon: -0.14, speed_kmh: 0 });
  return fixes;
}

async function send(deviceId: string, positions: Fix[]): Promise<void> {
  const r = await call('POST', '/telematics/positions', acme.sandbox, { device_id: deviceId, positions });
  assert.equal(r.statusCode, 202, r.body);
  assert.equal(r.json<{ accepted: number }>().accepted, positions.length, r.body);
}

async function claimsOf(policy: string): Promise<Claim[]> {
  const r = await call('GET', `/policys/${policy}/claims`, acme.sandbox);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ claims: Claim[] }>().claims;
}

async function crashesOf(policy: string) {
  return t.container.database.db
    .selectFrom('crash_events')
    .select(['id', 'source', 'occurred_at', 'speed_kmh', 'peak_acceleration_g', 'delta_v_kmh'])
    .where('policy_reference', '=', policy)
    .execute();
}

const cut = () => t.container.services.telematics.cutPendingTrips(clock.now());

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
});
after(() => t.close());

describe('a crash in a trip’s positions opens a draft claim when the trip is cut', () => {
  let policy: string;
  let startS: number;
  let crashId: string;

  test('the trip is cut, the crash stored as detected, and the worker opens its draft claim', async () => {
    ({ reference: policy } = await make.policy(t.app, acme));
    await make.device(t.app, acme, policy, { deviceId: 'detect-1' });
    startS = unix('2025-06-10T07:00:00Z');
    // 50 km/h to a standstill in one second: about 1.4 g, far beyond braking.
    const fixes = drive(startS, 50);
    clock.set('2025-06-10T07:10:00Z');
    await send(
      'detect-1',
      fixes.filter((_, i) => i !== 60),
    );
    const pass = await cut();
    assert.equal(pass.stored, 1, JSON.stringify(pass));
    const crashes = await crashesOf(policy);
    assert.equal(crashes.length, 1);
    const [crash] = crashes;
    assert.ok(crash !== undefined);
    crashId = crash.id;
    assert.equal(crash.source, 'detected');
    assert.equal(crash.occurred_at.getTime(), (startS + 120) * 1000, 'at the fix that shows the drop');
    assert.equal(Number(crash.speed_kmh), 50);
    assert.equal(Number(crash.delta_v_kmh), 50);
    assert.ok(Number(crash.peak_acceleration_g) >= 1.4, String(crash.peak_acceleration_g));

    assert.equal((await claimsOf(policy)).length, 0, 'nothing before the claims worker runs');
    await claimsPass(t, clock);
    const claims = await claimsOf(policy);
    assert.equal(claims.length, 1);
    const [claim] = claims;
    assert.equal(claim?.state, 'draft');
    assert.equal(claim.source, 'crash');
    assert.equal(claim.speed_kmh, 50);
    assert.equal(claim.crash_file?.source, 'detected');
    assert.equal(claim.crash_file.crash_reference, crashId);
    assert.ok(claim.crash_file.positions.length > 0);
  });

  test('a re-cut of the same trip (a late position inside it) is still one crash and one claim', async () => {
    await send(
      'detect-1',
      drive(startS, 50).filter((_, i) => i === 60),
    );
    clock.set('2025-06-10T07:11:00Z');
    const pass = await cut();
    assert.equal(pass.voided, 1, JSON.stringify(pass));
    assert.equal(pass.stored, 1);
    const crashes = await crashesOf(policy);
    assert.deepEqual(
      crashes.map((c) => c.id),
      [crashId],
    );
    await claimsPass(t, clock);
    assert.equal((await claimsOf(policy)).length, 1);
  });

  test('ordinary hard braking to a stop (about 0.4 g) stores no crash and opens no claim', async () => {
    const { reference: other } = await make.policy(t.app, acme);
    await make.device(t.app, acme, other, { deviceId: 'detect-2' });
    const braking = unix('2025-06-10T08:00:00Z');
    clock.set('2025-06-10T08:10:00Z');
    await send('detect-2', drive(braking, 14));
    assert.equal((await cut()).stored, 1);
    assert.deepEqual(await crashesOf(other), []);
    await claimsPass(t, clock);
    assert.deepEqual(await claimsOf(other), []);
  });

  test('a product’s crash_detection rule sets the thresholds: braking at 0.4 g is a crash for a rule of 0.3 g', async () => {
    // A company of its own: once a company has products, its policies must name one.
    const careful = await createCompany(t.app, 'Careful Motor');
    await createProduct(t.app, careful.sandbox, 'ppm-sensitive', {
      crash_detection: { min_deceleration_g: 0.3 },
    });
    const { reference: sensitive } = await make.policy(t.app, careful, {
      policy: { product_reference: 'ppm-sensitive' },
    });
    await make.device(t.app, careful, sensitive, { deviceId: 'detect-3' });
    const braking = unix('2025-06-10T09:00:00Z');
    clock.set('2025-06-10T09:10:00Z');
    const r = await call('POST', '/telematics/positions', careful.sandbox, {
      device_id: 'detect-3',
      positions: drive(braking, 14),
    });
    assert.equal(r.statusCode, 202, r.body);
    assert.equal((await cut()).stored, 1);
    const crashes = await crashesOf(sensitive);
    assert.equal(crashes.length, 1);
    assert.equal(crashes[0]?.source, 'detected');
  });
});
