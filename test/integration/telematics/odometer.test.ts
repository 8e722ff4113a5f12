import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { billingRun, createProduct, drive, unix } from '../../support/driving.ts';
import { make } from '../../support/factories.ts';
import { caller, eventsOfType, type Problem } from './telematics-support.ts';

// Odometer readings (POST/GET /telematics/odometer) and what statements make of them under each
// `billing_distance_source`. The example policy's term runs from 2025-06-01 (London) for a year, billing
// day 1, usage 0.045 a mile. London to Birmingham is 162,831 m, London to Oxford 82,835 m.
interface Reading {
  reading_reference: string;
  policy_reference: string;
  device_id: string | null;
  reading_metres: number;
  time: string;
  source: string;
  created_at: string;
}
interface Odometer {
  start_reading_metres: number;
  start_reading_time: string;
  end_reading_metres: number;
  end_reading_time: string;
  odometer_distance_in_metres: number;
  gps_distance_in_metres: number;
  discrepancy_percent: number | null;
}
interface Statement {
  policy_version_reference: string;
  journey_count: number;
  distance_in_metres: number;
  usage_premium: number;
  journeys: Array<{
    journey_reference: string;
    distance_in_metres: number;
    usage_premium: number;
    source: string;
    route: string;
    start_at: string;
    end_at: string;
  }>;
  odometer: Odometer | null;
}
interface DiscrepancyEvent {
  policy_reference: string;
  policy_version_reference: string;
  discrepancy_percent: number;
  odometer_discrepancy_percent: number;
  odometer_distance_in_metres: number;
  gps_distance_in_metres: number;
}

const clock = fixedClock('2025-11-20T12:00:00Z');
const LONDON_BIRMINGHAM = 162_831;
const LONDON_OXFORD = 82_835;
const pence = (pounds: number) => Math.round(pounds * 100);

let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let other: Awaited<ReturnType<typeof createCompany>>;
const call = caller(() => t);
before(async () => {
  t = await createTestApp({ overrides: { clock }, startJobs: false });
  acme = await createCompany(t.app, 'Acme Odometer');
  other = await createCompany(t.app, 'Other Odometer');
});
after(() => t.close());

const send = (body: Record<string, unknown>, headers: Record<string, string> = acme.sandbox) =>
  call('POST', '/telematics/odometer', headers, { source: 'photo', ...body });

async function read(reference: string, iso: string, readingMetres: number): Promise<Reading> {
  const r = await send({ policy_reference: reference, reading_metres: readingMetres, time: iso });
  assert.equal(r.statusCode, 201, r.body);
  return r.json<Reading>();
}

const statementTo = (reference: string, endIso: string) =>
  make.statement<Statement>(t.app, acme, reference, endIso);

async function discrepancies(reference: string): Promise<DiscrepancyEvent[]> {
  return (await eventsOfType(t, 'telematics.odometer_discrepancy'))
    .map((e) => (typeof e.data === 'string' ? JSON.parse(e.data) : e.data) as DiscrepancyEvent)
    .filter((d) => d.policy_reference === reference);
}

const sumOfJourneys = (s: Statement) => s.journeys.reduce((sum, j) => sum + pence(j.usage_premium), 0);

describe('POST /telematics/odometer', () => {
  test('named by policy: 201, a repeat of the second 200 with the stored reading, miles kept as metres', async () => {
    const { reference } = await make.policy(t.app, acme);
    const r = await send({
      policy_reference: reference,
      reading_metres: 1_000_000,
      time: '2025-06-02T08:00:00.700Z',
    });
    assert.equal(r.statusCode, 201, r.body);
    const first = r.json<Reading>();
    assert.deepEqual(
      { ...first, reading_reference: '', created_at: '' },
      {
        reading_reference: '',
        policy_reference: reference,
        device_id: null,
        reading_metres: 1_000_000,
        time: '2025-06-02T08:00:00.000Z',
        source: 'photo',
        created_at: '',
      },
    );
    const again = await send({
      policy_reference: reference,
      reading_metres: 1_000_500,
      time: unix('2025-06-02T08:00:00Z'),
    });
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(again.json(), first);

    // 1,000.5 miles × 1,609.344 = 1,610,148.672 m → 1,610,149.
    const miles = await send({
      policy_reference: reference,
      reading_miles: 1000.5,
      time: '2025-07-01T08:00:00Z',
      source: 'mot',
    });
    assert.equal(miles.statusCode, 201, miles.body);
    assert.equal(miles.json<Reading>().reading_metres, 1_610_149);

    const list = await call(
      'GET',
      `/telematics/odometer?policy_reference=${reference}&limit=1`,
      acme.sandbox,
    );
    assert.equal(list.statusCode, 200, list.body);
    const page = list.json<{ readings: Reading[]; next_cursor: string | null }>();
    assert.deepEqual(page.readings, [first]);
    assert.ok(page.next_cursor !== null);
    const next = await call(
      'GET',
      `/telematics/odometer?policy_reference=${reference}&limit=1&after=${page.next_cursor}`,
      acme.sandbox,
    );
    const second = next.json<{ readings: Reading[]; next_cursor: string | null }>();
    assert.deepEqual(
      second.readings.map((x) => x.reading_metres),
      [1_610_149],
    );
    assert.equal(second.next_cursor, null);

    // Twelve digits of seconds past year 9999 are no cursor this service gives out.
    const crafted = await call(
      'GET',
      `/telematics/odometer?policy_reference=${reference}&after=999999999999`,
      acme.sandbox,
    );
    assert.equal(crafted.statusCode, 422, crafted.body);
  });

  test('named by device: the policy it was bound to at the time; none then is 422', async () => {
    const { reference } = await make.policy(t.app, acme);
    await make.device(t.app, acme, reference, {
      deviceId: `odo-${String(process.pid)}`,
      kind: 'connected_car',
    });
    const r = await send({
      device_id: `odo-${String(process.pid)}`,
      reading_metres: 5_000,
      time: unix('2025-11-20T12:00:00Z'),
      source: 'connected_car',
    });
    assert.equal(r.statusCode, 201, r.body);
    assert.equal(r.json<Reading>().policy_reference, reference);
    assert.equal(r.json<Reading>().device_id, `odo-${String(process.pid)}`);
    const before = await send({
      device_id: `odo-${String(process.pid)}`,
      reading_metres: 4_000,
      time: '2025-11-01T00:00:00Z',
    });
    assert.equal(before.statusCode, 422, before.body);
    assert.equal(before.json<Problem>().errors?.[0]?.path, '/body/time');
    // Another company's view of the device: unknown.
    const theirs = await send(
      { device_id: `odo-${String(process.pid)}`, reading_metres: 6_000, time: '2025-11-20T12:00:00Z' },
      other.sandbox,
    );
    assert.equal(theirs.statusCode, 404, theirs.body);
  });

  test('an odometer never goes back: below an earlier reading or above a later one is 422', async () => {
    const { reference } = await make.policy(t.app, acme);
    await read(reference, '2025-07-01T00:00:00Z', 10_000);
    await read(reference, '2025-09-01T00:00:00Z', 30_000);
    for (const [iso, metres] of [
      ['2025-08-01T00:00:00Z', 9_999],
      ['2025-08-01T00:00:00Z', 30_001],
      ['2025-10-01T00:00:00Z', 29_000],
      ['2025-06-15T00:00:00Z', 10_001],
    ] as const) {
      const r = await send({ policy_reference: reference, reading_metres: metres, time: iso });
      assert.equal(r.statusCode, 422, `${iso} ${String(metres)}: ${r.body}`);
      assert.equal(r.json<Problem>().code, 'ODOMETER_NOT_MONOTONIC');
    }
    // Equal to a neighbour is a car that stood still.
    await read(reference, '2025-08-01T00:00:00Z', 30_000);
  });

  test('a reading farther from its neighbour than a car drives at 300 km/h is 422 and stores nothing', async () => {
    const { reference } = await make.policy(t.app, acme);
    await read(reference, '2025-07-01T00:00:00Z', 10_000);
    await read(reference, '2025-07-03T00:00:00Z', 900_000);
    for (const body of [
      // Ten million kilometres a day later, or a reading in miles far beyond a day's drive: a typo.
      { reading_metres: 10_000_000_000, time: '2025-07-04T00:00:00Z', path: '/body/reading_metres' },
      { reading_miles: 40_000, time: '2025-07-04T00:00:00Z', path: '/body/reading_miles' },
      // An hour after the first reading: 302 km away is within reach (300 km/h, and 2 km), 303 km is not.
      { reading_metres: 10_000 + 303_000, time: '2025-07-01T01:00:00Z', path: '/body/reading_metres' },
    ]) {
      const { path, ...sent } = body;
      const r = await send({ policy_reference: reference, ...sent });
      assert.equal(r.statusCode, 422, r.body);
      assert.equal(r.json<Problem>().code, 'ODOMETER_IMPLAUSIBLE');
      assert.equal(r.json<Problem>().errors?.[0]?.path, path);
    }
    await read(reference, '2025-07-01T01:00:00Z', 10_000 + 302_000);
    const listed = await t.app.inject({
      url: `/telematics/odometer?policy_reference=${reference}`,
      headers: acme.sandbox,
    });
    assert.equal(listed.json<{ readings: unknown[] }>().readings.length, 3);
  });

  test('validation: exactly one of each pair, a readable time not in the future', async () => {
    const { reference } = await make.policy(t.app, acme);
    const cases: Array<Record<string, unknown>> = [
      { policy_reference: reference, device_id: 'x', reading_metres: 1, time: '2025-07-01T00:00:00Z' },
      { reading_metres: 1, time: '2025-07-01T00:00:00Z' },
      { policy_reference: reference, reading_metres: 1, reading_miles: 1, time: '2025-07-01T00:00:00Z' },
      { policy_reference: reference, time: '2025-07-01T00:00:00Z' },
      { policy_reference: reference, reading_metres: 1, time: '2025-07-01T00:00:00' },
      { policy_reference: reference, reading_metres: 1, time: unix('2025-11-20T12:05:01Z') },
      { policy_reference: reference, reading_metres: -1, time: '2025-07-01T00:00:00Z' },
      { policy_reference: reference, reading_metres: 1, time: '2025-07-01T00:00:00Z', source: 'guess' },
    ];
    for (const body of cases) {
      const r = await send(body);
      assert.equal(r.statusCode, 422, `${JSON.stringify(body)}: ${r.body}`);
    }
    const atSkew = await send({
      policy_reference: reference,
      reading_metres: 1,
      time: unix('2025-11-20T12:05:00Z'),
    });
    assert.equal(atSkew.statusCode, 201, atSkew.body);
  });

  test('another company’s or environment’s policy is 404; no credentials 401', async () => {
    const { reference } = await make.policy(t.app, acme);
    const body = { policy_reference: reference, reading_metres: 1, time: '2025-07-01T00:00:00Z' };
    assert.equal((await send(body, other.sandbox)).statusCode, 404);
    assert.equal((await send(body, acme.production)).statusCode, 404);
    assert.equal(
      (await call('GET', `/telematics/odometer?policy_reference=${reference}`, other.sandbox)).statusCode,
      404,
    );
    assert.equal((await send(body, {})).statusCode, 401);
  });
});

describe('statements under each billing_distance_source', () => {
  test('gps: the block is shown, nothing is reconciled (billing run)', async () => {
    await createProduct(t.app, acme.sandbox, 'odo-gps', { billing_distance_source: 'gps' });
    const { reference } = await make.policy(t.app, acme, { policy: { product_reference: 'odo-gps' } });
    await read(reference, '2025-06-01T06:00:00Z', 10_000_000);
    await drive(t.app, acme.sandbox, reference, '2025-06-10T08:00:00Z', 'london', 'birmingham');
    await read(reference, '2025-06-30T20:00:00Z', 10_200_000);
    assert.equal((await billingRun(t.app, t.adminHeaders, '2025-07-01')).failed, 0);
    const list = await call('GET', `/statements?policy_reference=${reference}`, acme.sandbox);
    const [s] = list.json<{ statements: Statement[] }>().statements;
    assert.ok(s !== undefined);
    assert.equal(s.journey_count, 1);
    assert.deepEqual(s.odometer, {
      start_reading_metres: 10_000_000,
      start_reading_time: '2025-06-01T06:00:00.000Z',
      end_reading_metres: 10_200_000,
      end_reading_time: '2025-06-30T20:00:00.000Z',
      odometer_distance_in_metres: 200_000,
      gps_distance_in_metres: LONDON_BIRMINGHAM,
      discrepancy_percent: 18.58,
    });
    const one = await call('GET', `/statements/${s.policy_version_reference}`, acme.sandbox);
    assert.deepEqual(one.json<Statement>().odometer, s.odometer);
    // Without odometer_discrepancy_percent, no event.
    assert.deepEqual(await discrepancies(reference), []);
  });

  test('odometer: the excess is billed as a reconciliation journey; the next statement chains from its end reading', async () => {
    await createProduct(t.app, acme.sandbox, 'odo-odometer', {
      billing_distance_source: 'odometer',
      odometer_discrepancy_percent: 5,
    });
    const { reference } = await make.policy(t.app, acme, { policy: { product_reference: 'odo-odometer' } });
    await read(reference, '2025-06-01T06:00:00Z', 10_000_000);
    await drive(t.app, acme.sandbox, reference, '2025-06-10T08:00:00Z', 'london', 'birmingham');
    await read(reference, '2025-06-30T10:00:00Z', 10_200_000);
    const june = await statementTo(reference, '2025-06-30T12:00:00Z');
    assert.equal(june.journey_count, 2);
    const reconciliation = june.journeys.find((j) => j.source === 'odometer_reconciliation');
    assert.ok(reconciliation !== undefined);
    assert.equal(reconciliation.distance_in_metres, 200_000 - LONDON_BIRMINGHAM);
    assert.equal(reconciliation.route, '');
    assert.equal(reconciliation.start_at, '2025-06-30T10:00:00.000Z');
    assert.equal(reconciliation.end_at, reconciliation.start_at);
    assert.equal(june.distance_in_metres, 200_000);
    assert.equal(pence(june.usage_premium), sumOfJourneys(june));
    assert.equal(june.odometer?.discrepancy_percent, 18.58);
    const journey = await call('GET', `/journeys/${reconciliation.journey_reference}`, acme.sandbox);
    assert.equal(journey.statusCode, 200, journey.body);
    assert.equal(journey.json<{ duration_in_seconds: number }>().duration_in_seconds, 0);

    // 10 km driven without GPS just after the June reading, then Oxford, then 1 km more.
    await read(reference, '2025-06-30T13:00:00Z', 10_210_000);
    await drive(t.app, acme.sandbox, reference, '2025-07-10T08:00:00Z', 'london', 'oxford');
    await read(reference, '2025-07-31T10:00:00Z', 10_200_000 + 10_000 + LONDON_OXFORD + 1_000);
    const july = await statementTo(reference, '2025-07-31T12:00:00Z');
    // From June's end reading (not the nearer one after it), so nothing is compared or billed twice.
    assert.equal(july.odometer?.start_reading_time, '2025-06-30T10:00:00.000Z');
    assert.equal(july.odometer.gps_distance_in_metres, LONDON_OXFORD);
    assert.deepEqual(
      july.journeys.map((j) => [j.source, j.distance_in_metres]),
      [
        ['api', LONDON_OXFORD],
        ['odometer_reconciliation', 11_000],
      ],
    );
    assert.equal(pence(july.usage_premium), sumOfJourneys(july));

    // Both beyond 5 %: one event each, with the statement's reference.
    const events = await discrepancies(reference);
    assert.deepEqual(
      events.map((e) => [e.policy_version_reference, e.discrepancy_percent, e.odometer_discrepancy_percent]),
      [
        [june.policy_version_reference, 18.58, 5],
        [july.policy_version_reference, 11.72, 5],
      ],
    );

    // A statement without readings near its end shows none.
    const august = await statementTo(reference, '2025-08-31T12:00:00Z');
    assert.equal(august.odometer, null);
    assert.equal(august.journey_count, 0);
  });

  test('greater: an odometer below GPS adds nothing; above, the excess is billed; the event only beyond the threshold', async () => {
    await createProduct(t.app, acme.sandbox, 'odo-greater', {
      billing_distance_source: 'greater',
      odometer_discrepancy_percent: 10,
    });
    const { reference: below } = await make.policy(t.app, acme, {
      policy: { product_reference: 'odo-greater' },
    });
    await read(below, '2025-06-01T06:00:00Z', 10_000_000);
    await drive(t.app, acme.sandbox, below, '2025-06-10T08:00:00Z', 'london', 'birmingham');
    await read(below, '2025-06-30T10:00:00Z', 10_160_000);
    const s = await statementTo(below, '2025-06-30T12:00:00Z');
    assert.equal(s.journey_count, 1);
    assert.equal(s.distance_in_metres, LONDON_BIRMINGHAM);
    assert.equal(s.odometer?.discrepancy_percent, -1.77);
    assert.deepEqual(await discrepancies(below), []);

    const { reference: above } = await make.policy(t.app, acme, {
      policy: { product_reference: 'odo-greater' },
    });
    await read(above, '2025-06-01T06:00:00Z', 10_000_000);
    await drive(t.app, acme.sandbox, above, '2025-06-10T08:00:00Z', 'london', 'birmingham');
    await read(above, '2025-06-30T10:00:00Z', 10_200_000);
    const a = await statementTo(above, '2025-06-30T12:00:00Z');
    assert.equal(a.distance_in_metres, 200_000);
    assert.equal(pence(a.usage_premium), sumOfJourneys(a));
    const events = await discrepancies(above);
    assert.equal(events.length, 1);
    assert.deepEqual(
      [
        events[0]?.odometer_distance_in_metres,
        events[0]?.gps_distance_in_metres,
        events[0]?.discrepancy_percent,
      ],
      [200_000, LONDON_BIRMINGHAM, 18.58],
    );
  });
});
