import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { usagePremiumPence } from '../../../src/modules/journeys/index.ts';
import { billingDateIn, londonMidnight } from '../../../src/modules/statements/rules/statement-period.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { seedPolicies } from '../../../src/seed.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';

// The seed's journeys (`npm run cli -- seed --policies N --journeys J`): J a policy in its current
// billing period, none overlapping, rated as the journeys module rates them, and billed in full by
// the next billing run.

const clock = fixedClock('2025-07-01T02:00:00Z');
let t: TestApp;
before(async () => {
  t = await createTestApp({ overrides: { clock } });
});
after(async () => {
  await t.close();
});

interface SeededJourney {
  policy_id: string;
  billing_day: number;
  current_start_at: Date;
  version_id: string;
  policy_version_id: string;
  start_at: Date;
  end_at: Date;
  created_at: Date;
  distance_metres: number;
  usage_rate: string;
  distance_unit: string;
  usage_premium_pence: number;
}

test('journeys fall in each policy’s current period up to now, none overlapping, rated at the version’s rate', async () => {
  const db = t.container.database.db;
  const at = new Date('2025-03-15T10:30:00Z');
  const seeded = await seedPolicies(db, { policies: 40, journeys: 6, at, batchSize: 15 });
  assert.equal(seeded.policies, 40);
  assert.equal(seeded.journeys, 240);
  const rows = (
    await sql<SeededJourney>`
      select p.id as policy_id, p.billing_day, p.current_start_at, v.id as version_id, j.policy_version_id,
        j.start_at, j.end_at, j.created_at, j.distance_metres, j.usage_rate::text as usage_rate,
        j.distance_unit, j.usage_premium_pence
      from policies p
      join companies c on c.id = p.company_id and c.company_reference = ${seeded.companyReference}
      join policy_versions v on v.policy_id = p.id and v.version_type = 'nb'
      join journeys j on j.policy_id = p.id
      order by p.id, j.start_at`.execute(db)
  ).rows;
  const byPolicy = Map.groupBy(rows, (r) => r.policy_id);
  assert.equal(byPolicy.size, 40);
  for (const journeys of byPolicy.values()) {
    assert.equal(journeys.length, 6);
    const first = journeys[0] as SeededJourney;
    // The latest billing date before 15 March (Europe/London), or the term's start if later.
    const march = billingDateIn(2025, 3, first.billing_day);
    const billedOn = march < '2025-03-15' ? march : billingDateIn(2025, 2, first.billing_day);
    const periodStart = Math.max(londonMidnight(billedOn).getTime(), first.current_start_at.getTime());
    let previousEnd = periodStart;
    for (const j of journeys) {
      assert.ok(j.start_at.getTime() >= previousEnd, 'in the period, after the journey before');
      assert.ok(j.end_at > j.start_at);
      assert.ok(
        j.end_at.getTime() <= at.getTime() && j.created_at.getTime() <= at.getTime(),
        'not after now',
      );
      assert.equal(j.start_at.getTime() % 1000, 0, 'whole seconds');
      assert.equal(j.policy_version_id, j.version_id);
      assert.equal(
        j.usage_premium_pence,
        usagePremiumPence(j.usage_rate, j.distance_metres, j.distance_unit === 'km' ? 'km' : 'mile'),
      );
      previousEnd = j.end_at.getTime();
    }
  }
});

test('a billing day’s policies with their month of journeys: the run bills every journey, sums equal', async () => {
  const db = t.container.database.db;
  const seeded = await seedPolicies(db, {
    policies: 25,
    journeys: 30,
    startOn: '2025-06-01',
    at: new Date('2025-07-01T00:00:00+01:00'),
  });
  assert.equal(seeded.journeys, 25 * 30);
  // The first test's policies may be due that day too: the figures below are this company's.
  const run = await t.container.services.statements.runBillingDay('2025-07-01');
  assert.equal(run.failed, 0);
  const sums = (
    await sql<{ statements: number; journeys: string; distance: string; premium: string; expected: string }>`
      select count(*)::int as statements, sum(s.journey_count)::text as journeys,
        sum(s.distance_metres)::text as distance, sum(s.usage_premium_pence)::text as premium,
        (select sum(j.usage_premium_pence)::text from journeys j join policies p on p.id = j.policy_id
          join companies c on c.id = p.company_id where c.company_reference = ${seeded.companyReference}) as expected
      from statements s
      join policies p on p.id = s.policy_id
      join companies c on c.id = p.company_id and c.company_reference = ${seeded.companyReference}
      where s.billing_date = '2025-07-01'`.execute(db)
  ).rows[0];
  const journeyDistance = (
    await sql<{ distance: string }>`
      select sum(j.distance_metres)::text as distance from journeys j join policies p on p.id = j.policy_id
      join companies c on c.id = p.company_id where c.company_reference = ${seeded.companyReference}`.execute(
      db,
    )
  ).rows[0];
  assert.equal(sums?.statements, 25);
  assert.equal(sums.journeys, String(25 * 30));
  assert.equal(sums.distance, journeyDistance?.distance);
  assert.equal(sums.premium, sums.expected);
});

test('a product named by the seed is on the policies and their snapshots', async () => {
  const db = t.container.database.db;
  const seeded = await seedPolicies(db, { policies: 3, productReference: 'capped' });
  const rows = (
    await sql<{ column: string | null; snapshot: string | null }>`
      select p.product_reference as column, v.snapshot #>> '{policy,product_reference}' as snapshot
      from policies p join companies c on c.id = p.company_id and c.company_reference = ${seeded.companyReference}
      join policy_versions v on v.policy_id = p.id`.execute(db)
  ).rows;
  assert.deepEqual(
    rows,
    Array.from({ length: 3 }, () => ({ column: 'capped', snapshot: 'capped' })),
  );
  await assert.rejects(seedPolicies(db, { policies: 1, journeys: -1 }), /journeys must be/);
  await assert.rejects(seedPolicies(db, { policies: 1, startOn: '2025-02-30' }), /startOn/);
});

test('the tables a seed fills have the planner’s statistics when it ends', async () => {
  const db = t.container.database.db;
  await seedPolicies(db, { policies: 30, journeys: 2, at: new Date('2025-03-15T10:30:00Z') });
  // Statistics exist only once the table is analyzed; neither database's autovacuum runs in the test.
  const analyzed = await sql<{ tablename: string }>`
    select distinct tablename from pg_stats
    where schemaname = 'public' and tablename in ('policies', 'policy_versions', 'journeys')`.execute(db);
  assert.deepEqual(analyzed.rows.map((r) => r.tablename).sort(), ['journeys', 'policies', 'policy_versions']);
});
