import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { createOfflineGeocoder } from '../../../src/integrations/geocoding/index.ts';
import { createClaimService, type ClaimService } from '../../../src/modules/claims/index.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { caller, crashBody } from './claims-support.ts';

/**
 * A crash's commit wakes the claims worker (migration 0061's notification, through the change feed):
 * its draft claim opens at once, not at the loop's next pass. The loop here polls once an hour, so only
 * the wake can open the claim within the wait.
 */
const WAIT_MS = 5_000;
const clock = fixedClock('2025-06-10T12:00:00Z');
let t: TestApp;
let claims: ClaimService;
let acme: Awaited<ReturnType<typeof createCompany>>;
const call = caller(() => t);

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  for (const deviceId of ['car-1', 'car-2'])
    await make.device(t.app, acme, (await make.policy(t.app, acme)).reference, { deviceId });
  clock.set('2025-06-10T13:00:00Z');
  const { container } = t;
  // Loaded before the clock starts: the first lookup would otherwise load it (seconds on a busy machine).
  const geocoder = createOfflineGeocoder();
  await geocoder.warm();
  claims = createClaimService({
    db: container.database.db,
    clock,
    geocoder,
    notifications: container.services.notifications,
    changes: container.changes,
    pollIntervalMs: 3_600_000,
  });
  // Its first pass runs now, and finds nothing owed.
  await claims.registerWorkers();
});
after(async () => {
  await claims.stopWorkers(5_000);
  await t.close();
});

const claimOf = async (deviceId: string) =>
  t.container.database.db
    .selectFrom('claims')
    .innerJoin('crash_events', 'crash_events.id', 'claims.crash_event_id')
    .innerJoin('devices', 'devices.id', 'crash_events.device_id')
    .where('devices.device_id', '=', deviceId)
    .select(['claims.id', 'claims.state'])
    .executeTakeFirst();

async function claimWithin(deviceId: string, waitMs: number) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const claim = await claimOf(deviceId);
    if (claim !== undefined || Date.now() > deadline) return claim;
    await sleep(50);
  }
}

test('a crash stored wakes the claims worker: its draft claim opens long before the next pass', async () => {
  await sleep(500); // the first pass is over
  const nowS = Math.floor(clock.now().getTime() / 1000);
  const stored = await call('POST', '/telematics/events', acme.sandbox, crashBody('car-1', nowS - 10));
  assert.equal(stored.statusCode, 201, stored.body);
  const claim = await claimWithin('car-1', WAIT_MS);
  assert.equal(claim?.state, 'draft');
});

test('each crash wakes it: the next crash, an hour before the next pass, opens its claim as promptly', async () => {
  const nowS = Math.floor(clock.now().getTime() / 1000);
  const stored = await call('POST', '/telematics/events', acme.sandbox, crashBody('car-2', nowS - 5));
  assert.equal(stored.statusCode, 201, stored.body);
  assert.equal((await claimWithin('car-2', WAIT_MS))?.state, 'draft');
});
