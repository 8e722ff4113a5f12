import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { encodePolyline } from '../../../src/platform/geo/index.ts';
import { createRetentionService } from '../../../src/modules/data-protection/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';

// Route retention: journeys whose statement was written more than ROUTE_RETENTION_DAYS (400) ago keep
// only their start → end; newer ones, and journeys not yet billed, keep their routes; a second run
// changes nothing; a run does a bounded number of batches.

const clock = fixedClock('2025-07-20T12:00:00Z');
const DAY_MS = 86_400_000;

let t: TestApp;
let reference: string;
const JUNE = [
  [51.5074, -0.1278, 51.5101, -0.134, 51.5155, -0.1419],
  [51.752, -1.2577, 51.74, -1.24, 51.7, -1.2, 51.6, -1.1],
  [52.4862, -1.8904, 52.47, -1.87, 52.45, -1.85],
];
const JULY = [51.45, -0.3, 51.46, -0.31, 51.47, -0.32];
const AUGUST = [51.3, -0.2, 51.31, -0.21, 51.32, -0.22];
let juneBilledAt: Date;

const routes = () =>
  t.container.database.db
    .selectFrom('journeys')
    .select(['route', 'point_count', 'start_at', 'distance_metres'])
    .where('policy_reference', '=', reference)
    .orderBy('start_at')
    .execute();

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  const acme = await createCompany(t.app, 'Acme Retention');
  reference = (await make.policy(t.app, acme, { proposer: { email: 'retention@example.com' } })).reference;
  /** Half an hour along `points` from `startIso`. */
  const journey = (startIso: string, points: number[]) =>
    make.journey(t.app, acme, reference, startIso, { points, durationSeconds: 1800 });
  for (const [k, points] of JUNE.entries()) await journey(`2025-06-1${String(k)}T08:00:00Z`, points);
  await journey('2025-07-10T08:00:00Z', JULY);
  // June billed on 2 July; July on 2 August; August's journey never billed.
  clock.set('2025-07-02T09:00:00Z');
  juneBilledAt = clock.now();
  await make.statement(t.app, acme, reference, '2025-06-30T22:59:59Z');
  clock.set('2025-08-15T09:00:00Z');
  await journey('2025-08-10T08:00:00Z', AUGUST);
  clock.set('2025-08-02T09:00:00Z');
  await make.statement(t.app, acme, reference, '2025-07-31T22:59:59Z');
});
after(() => t.close());

test('nothing is coarsened before ROUTE_RETENTION_DAYS have passed', async () => {
  const retention = t.container.services.retention;
  assert.equal(await retention.applyRouteRetention(new Date(juneBilledAt.getTime() + 400 * DAY_MS)), 0);
  assert.deepEqual(
    (await routes()).map((j) => j.point_count),
    [3, 4, 3, 3, 3],
  );
});

test('routes billed 401 days ago become start → end, in bounded batches; newer ones stay; idempotent', async () => {
  const now = new Date(juneBilledAt.getTime() + 401 * DAY_MS);
  const before = await routes();
  // One journey a batch, two batches a run: the three June journeys take two runs.
  const small = createRetentionService({
    db: t.container.database.db,
    routeRetentionDays: 400,
    batchSize: 1,
    maxBatchesPerRun: 2,
  });
  assert.equal(await small.applyRouteRetention(now), 2);
  assert.equal(await small.applyRouteRetention(now), 1);
  assert.equal(await small.applyRouteRetention(now), 0);
  // The service the container runs hourly (housekeeping) finds nothing left either.
  assert.equal(await t.container.services.retention.applyRouteRetention(now), 0);
  const after = await routes();
  for (const [k, points] of JUNE.entries()) {
    const journey = after[k];
    assert.ok(journey);
    assert.equal(journey.point_count, 2);
    assert.equal(journey.route, encodePolyline([points[0] ?? 0, points[1] ?? 0, ...points.slice(-2)], 5));
    assert.equal(journey.distance_metres, before[k]?.distance_metres, 'the distance billed stays');
  }
  assert.equal(after[3]?.route, encodePolyline(JULY, 5), 'billed 370 days ago: kept');
  assert.equal(after[4]?.route, encodePolyline(AUGUST, 5), 'never billed: kept');
  // July's turn comes 400 days after its own statement.
  const later = new Date(Date.parse('2025-08-02T09:00:00Z') + 401 * DAY_MS);
  assert.equal(await t.container.services.retention.applyRouteRetention(later), 1);
  const last = await routes();
  assert.equal(last[3]?.route, encodePolyline([JULY[0] ?? 0, JULY[1] ?? 0, ...JULY.slice(-2)], 5));
  assert.equal(last[4]?.point_count, 3, 'August is still not billed');
});
