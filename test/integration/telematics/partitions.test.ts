import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.ts';
import { listPositionPartitions } from '../../../src/modules/telematics/index.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { caller, type BatchResult } from './telematics-support.ts';

// A time far from today's partitions (made by the migration), so the months here start out missing.
const clock = fixedClock('2031-03-10T12:00:00Z');
const unix = (iso: string): number => Date.parse(iso) / 1000;
let t: TestApp;
const call = caller(() => t);

before(async () => {
  t = await createTestApp({ overrides: { clock } });
});
after(async () => {
  await t.close();
});

const ours = async () =>
  (await listPositionPartitions(t.container.database.db)).filter((n) => n >= 'positions_p2031');
const rowsIn = async (table: string) =>
  Number(
    (
      await sql<{ n: number }>`select count(*)::int as n from ${sql.id(table)}`.execute(
        t.container.database.db,
      )
    ).rows[0]?.n,
  );

test('POSITION_RETENTION_DAYS: default 400, validated', () => {
  assert.equal(loadConfig({}).positionRetentionDays, 400);
  assert.equal(loadConfig({ POSITION_RETENTION_DAYS: '30' }).positionRetentionDays, 30);
  assert.throws(() => loadConfig({ POSITION_RETENTION_DAYS: '0' }), /POSITION_RETENTION_DAYS/);
  assert.throws(() => loadConfig({ POSITION_RETENTION_DAYS: 'a year' }), /POSITION_RETENTION_DAYS/);
});

test('without a monthly partition, positions land in DEFAULT; maintenance creates months ahead, moving them, and drops expired months', async () => {
  // The example policy's term is 2025: bind while it is active, then send positions dated 2031.
  clock.set('2025-06-10T12:00:00Z');
  const company = await createCompany(t.app, 'Partitions');
  const { reference: policy } = await make.policy(t.app, company);
  await make.device(t.app, company, policy, { deviceId: 'p-1' });
  clock.set('2031-03-10T12:00:00Z');
  assert.deepEqual(await ours(), []);
  const sent = await call('POST', '/telematics/positions', company.sandbox, {
    device_id: 'p-1',
    positions: [
      { time: unix('2031-03-01T00:00:00Z'), lat: 51.5, lon: -0.1 },
      { time: unix('2031-03-10T11:00:00Z'), lat: 51.5, lon: -0.1 },
      { time: unix('2031-02-28T23:59:59Z'), lat: 51.5, lon: -0.1 },
    ],
  });
  assert.deepEqual(sent.json<BatchResult>(), { accepted: 3, duplicates: 0, rejected: [] });

  const first = await t.container.services.telematics.maintainPartitions(clock.now());
  assert.deepEqual(first.created, ['positions_p2031_03', 'positions_p2031_04', 'positions_p2031_05']);
  assert.deepEqual(await ours(), ['positions_p2031_03', 'positions_p2031_04', 'positions_p2031_05']);
  assert.equal(await rowsIn('positions_p2031_03'), 2, 'March rows moved out of DEFAULT into March');
  // Idempotent: nothing more to do at the same time.
  const again = await t.container.services.telematics.maintainPartitions(clock.now());
  assert.deepEqual([again.created, again.dropped], [[], []]);
  // Inserts after attaching go to the month, and resending is still a no-op across partitions.
  const resent = await call('POST', '/telematics/positions', company.sandbox, {
    device_id: 'p-1',
    positions: [
      { time: unix('2031-03-01T00:00:00Z'), lat: 51.5, lon: -0.1 },
      { time: unix('2031-03-10T11:30:00Z'), lat: 51.5, lon: -0.1 },
    ],
  });
  assert.deepEqual(resent.json<BatchResult>(), { accepted: 1, duplicates: 1, rejected: [] });
  assert.equal(await rowsIn('positions_p2031_03'), 3);

  // 400 days after the end of May 2031 (2032-07-04), March and April 2031 are past retention; May is not.
  const later = await t.container.services.telematics.maintainPartitions(new Date('2032-07-04T00:00:00Z'));
  assert.deepEqual(later.dropped, ['positions_p2031_03', 'positions_p2031_04']);
  assert.deepEqual(later.created, ['positions_p2032_07', 'positions_p2032_08', 'positions_p2032_09']);
  assert.equal(later.deletedDefaultRows, 1, 'the February row left in DEFAULT is past retention too');
  const left = await ours();
  assert.ok(left.includes('positions_p2031_05') && !left.includes('positions_p2031_03'), left.join());
  const page = await call('GET', '/devices/p-1/positions', company.sandbox);
  assert.deepEqual(page.json<{ positions: unknown[] }>().positions, []);
});
