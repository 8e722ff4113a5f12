import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { billingRun as billingRunOf, drive, type Place } from '../../support/driving.ts';
import { make } from '../../support/factories.ts';

// The worked example of the documentation ("Worked example: a month with capped days, free distance and
// a late upload"): every figure its tables show is asserted here as a literal, so a change to the rules
// or to rating that moves a figure fails this test before the documentation goes stale.
//
// Product: daily cap 150 miles, 20 free miles per statement. Policy: the example policy (term from
// 2025-06-01 London, billing day 1, usage 0.045 a mile, subscription 29.99 a month). Journeys are
// straight two-point routes between fixed coordinates, so their distances never vary:
//   London → Birmingham and back: 162,831 m (101.18 miles), 4.55 each;  London → Oxford: 82,835 m, 2.32.
// 30 October: one trip out, billed by October's statement; the trip back is uploaded on 2 November,
// after that statement, and November's statement bills it against the room October left on the day.
// 3 and 17 November: capped days of November's own journeys.

interface CappedDay {
  date: string;
  distance_driven_in_metres: number;
  distance_charged_in_metres: number;
  credit: number;
}
interface Journey {
  journey_reference: string;
  distance_in_metres: number;
  total_miles: number;
  usage_rate: number;
  usage_premium: number;
  /** Seconds since the epoch in a journey's own view; ISO 8601 text among a statement's journeys. */
  start_at: number | string;
}
interface Statement {
  statement_start_date: string;
  statement_end_date: string;
  journey_count: number;
  distance_in_metres: number;
  total_miles: number;
  usage_premium: number;
  subscription_premium: number;
  total_premium: number;
  capped_days: CappedDay[];
  cap_credit: number;
  annual_cap_credit: number;
  free_distance_credit: number;
  minimum_top_up: number;
  credits_used: number;
  brought_forward: number;
  carried_forward: number;
  billed_premium: number;
  journeys: Journey[];
}

const clock = fixedClock('2025-10-30T20:00:00Z');
const ROUTES = {
  'london-birmingham': ['london', 'birmingham'],
  'birmingham-london': ['birmingham', 'london'],
  'london-oxford': ['london', 'oxford'],
} as const satisfies Record<string, readonly [Place, Place]>;

let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
before(async () => {
  t = await createTestApp({ overrides: { clock }, startJobs: false });
  acme = await createCompany(t.app, 'Acme Worked Example');
});
after(() => t.close());

function journeyOf(reference: string, startIso: string, route: keyof typeof ROUTES): Promise<Journey> {
  const [from, to] = ROUTES[route];
  return drive<Journey>(t.app, acme.sandbox, reference, startIso, from, to);
}

async function billingRun(date: string) {
  assert.equal((await billingRunOf(t.app, t.adminHeaders, date)).failed, 0);
}

/** The policy's statements, oldest first. */
async function statements(reference: string): Promise<Statement[]> {
  const r = await t.app.inject({
    url: `/statements?policy_reference=${reference}&limit=50`,
    headers: acme.sandbox,
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ statements: Statement[] }>().statements.reverse();
}

/** What the documentation's journey table shows of a journey. */
const row = (j: Journey) => ({
  start_at: new Date(typeof j.start_at === 'number' ? j.start_at * 1000 : j.start_at).toISOString(),
  distance_in_metres: j.distance_in_metres,
  total_miles: j.total_miles,
  usage_rate: j.usage_rate,
  usage_premium: j.usage_premium,
});

describe('worked example', () => {
  test('November 2025: two capped days, 20 free miles and a late upload onto 30 October', async () => {
    // The product and the policy, on 30 October 2025.
    const product = await t.app.inject({
      method: 'POST',
      url: '/products',
      headers: acme.sandbox,
      payload: {
        product_reference: 'pay-by-mile-capped',
        name: 'Pay-by-mile, capped daily, 20 free miles',
        usage_unit: 'mile',
        rules: { daily_cap_distance: 150, free_distance_per_statement: 20 },
      },
    });
    assert.equal(product.statusCode, 201, product.body);
    const { reference } = await make.policy(t.app, acme, {
      policy: { product_reference: 'pay-by-mile-capped' },
    });

    // J1, 30 October (GMT: the London day is the UTC day), uploaded the same evening.
    const j1 = await journeyOf(reference, '2025-10-30T08:00:00Z', 'london-birmingham');

    // 1 November: the billing runs of the term so far; October's statement is issued.
    clock.set('2025-11-01T12:00:00Z');
    for (const date of ['2025-07-01', '2025-08-01', '2025-09-01', '2025-10-01', '2025-11-01'])
      await billingRun(date);
    const october = (await statements(reference)).at(-1);
    assert.ok(october !== undefined);
    const octoberFigures = {
      statement_start_date: '2025-09-30T23:00:00.000Z', // 1 October 00:00 BST
      statement_end_date: '2025-10-31T23:59:59.000Z',
      journey_count: 1,
      distance_in_metres: 162_831,
      usage_premium: 4.55,
      subscription_premium: 29.99,
      total_premium: 34.54,
      capped_days: [],
      cap_credit: 0,
      annual_cap_credit: 0,
      free_distance_credit: 0.9, // 20 miles = 32,187 m of J1: 90.0003p → 90p
      minimum_top_up: 0,
      credits_used: 0,
      brought_forward: 0,
      billed_premium: 33.64, // 29.99 + 4.55 − 0.90
    };
    const octoberView = (s: Statement) =>
      Object.fromEntries(Object.keys(octoberFigures).map((k) => [k, s[k as keyof Statement]]));
    assert.deepEqual(octoberView(october), octoberFigures);

    // J2, the trip back of 30 October, uploaded on 2 November: a late upload.
    clock.set('2025-11-02T09:00:00Z');
    const j2 = await journeyOf(reference, '2025-10-30T17:00:00Z', 'birmingham-london');
    // November's own journeys, each day uploaded that evening.
    clock.set('2025-11-03T20:00:00Z');
    const j3 = await journeyOf(reference, '2025-11-03T08:00:00Z', 'london-birmingham');
    const j4 = await journeyOf(reference, '2025-11-03T17:00:00Z', 'birmingham-london');
    clock.set('2025-11-17T20:00:00Z');
    const j5 = await journeyOf(reference, '2025-11-17T07:00:00Z', 'london-birmingham');
    const j6 = await journeyOf(reference, '2025-11-17T12:00:00Z', 'birmingham-london');
    const j7 = await journeyOf(reference, '2025-11-17T17:00:00Z', 'london-oxford');

    const longTrip = {
      distance_in_metres: 162_831,
      total_miles: 101.18,
      usage_rate: 0.045,
      usage_premium: 4.55,
    };
    assert.deepEqual([j1, j2, j3, j4, j5, j6, j7].map(row), [
      { start_at: '2025-10-30T08:00:00.000Z', ...longTrip },
      { start_at: '2025-10-30T17:00:00.000Z', ...longTrip },
      { start_at: '2025-11-03T08:00:00.000Z', ...longTrip },
      { start_at: '2025-11-03T17:00:00.000Z', ...longTrip },
      { start_at: '2025-11-17T07:00:00.000Z', ...longTrip },
      { start_at: '2025-11-17T12:00:00.000Z', ...longTrip },
      {
        start_at: '2025-11-17T17:00:00.000Z',
        distance_in_metres: 82_835,
        total_miles: 51.47,
        usage_rate: 0.045,
        usage_premium: 2.32,
      },
    ]);

    // 1 December: November's statement.
    clock.set('2025-12-01T12:00:00Z');
    await billingRun('2025-12-01');
    const all = await statements(reference);
    const november = all.at(-1);
    assert.ok(november !== undefined);
    // October's statement stands as it was issued: the late upload is not added to it.
    assert.deepEqual(octoberView(all.at(-2) ?? november), octoberFigures);

    // The late upload J2 is billed by November's statement, with November's own journeys.
    assert.deepEqual(
      november.journeys.map((j) => j.journey_reference),
      [j2, j3, j4, j5, j6, j7].map((j) => j.journey_reference),
    );
    assert.deepEqual(november.journeys.map(row), [j2, j3, j4, j5, j6, j7].map(row));
    assert.deepEqual(
      {
        statement_start_date: november.statement_start_date,
        statement_end_date: november.statement_end_date,
        journey_count: november.journey_count,
        distance_in_metres: november.distance_in_metres,
        total_miles: november.total_miles,
      },
      {
        statement_start_date: '2025-11-01T00:00:00.000Z',
        statement_end_date: '2025-11-30T23:59:59.000Z',
        journey_count: 6,
        distance_in_metres: 896_990, // 5 × 162,831 + 82,835
        total_miles: 557.36,
      },
    );
    // Daily caps: 150 miles = 241,401 m.
    // 30 Oct: October charged J1's 162,831 m; room 78,570 m; J2's last 84,261 m credited: 235.6p → 2.36.
    // 3 Nov: J3 + J4 = 325,662 m; the latest, J4, credited 84,261 m: 2.36.
    // 17 Nov: J5 + J6 + J7 = 408,497 m, 167,096 m over: J7 in full (2.32), then 84,261 m of J6 (2.36).
    assert.deepEqual(november.capped_days, [
      {
        date: '2025-10-30',
        distance_driven_in_metres: 325_662,
        distance_charged_in_metres: 241_401,
        credit: 2.36,
      },
      {
        date: '2025-11-03',
        distance_driven_in_metres: 325_662,
        distance_charged_in_metres: 241_401,
        credit: 2.36,
      },
      {
        date: '2025-11-17',
        distance_driven_in_metres: 408_497,
        distance_charged_in_metres: 241_401,
        credit: 4.68,
      },
    ]);
    assert.deepEqual(
      {
        usage_premium: november.usage_premium,
        subscription_premium: november.subscription_premium,
        total_premium: november.total_premium,
        cap_credit: november.cap_credit,
        annual_cap_credit: november.annual_cap_credit,
        free_distance_credit: november.free_distance_credit,
        minimum_top_up: november.minimum_top_up,
        credits_used: november.credits_used,
        brought_forward: november.brought_forward,
        carried_forward: november.carried_forward,
        billed_premium: november.billed_premium,
      },
      {
        usage_premium: 25.07, // 5 × 4.55 + 2.32
        subscription_premium: 29.99,
        total_premium: 55.06,
        cap_credit: 9.4, // 2.36 + 2.36 + 4.68
        annual_cap_credit: 0,
        // The first 32,187 m still charged, in journey order: the first of J2's 78,570 m still charged.
        // J2 has 84,261 m credited already, so 326p − 236p (the premiums of 116,448 m and 84,261 m).
        free_distance_credit: 0.9,
        minimum_top_up: 0,
        credits_used: 0,
        brought_forward: 0,
        carried_forward: 0,
        billed_premium: 44.76, // 55.06 − 9.40 − 0.90
      },
    );
  });
});
