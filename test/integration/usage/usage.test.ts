import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { fixedClock } from '../../../src/platform/clock.ts';
import { encodePolyline } from '../../../src/platform/geo/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { createProduct, drive as driveBetween, PLACES, unix } from '../../support/driving.ts';
import { make } from '../../support/factories.ts';
import { startSmtpServer } from '../../support/smtp.ts';
import { assertProblem, createAuthClient } from '../auth/auth-support.ts';

// Mileage budgets and the usage alerts journeys trigger, through the HTTP API on a real database. The
// example policy's term runs from 2025-06-01 (London) for a year. Journeys drive between London and
// Birmingham (about 101 miles each), so two in a day pass a 150-mile cap or budget.
type Company = Awaited<ReturnType<typeof createCompany>>;
interface Budget {
  policy_reference: string;
  distance_per_month: number;
  usage_unit: string;
  month: string;
  distance_this_month_in_metres: number;
  exceeded: boolean;
}
interface UsageEvent {
  type: string;
  data: Record<string, unknown>;
}

const clock = fixedClock('2025-11-20T12:00:00Z');
const { london: LONDON, birmingham: BIRMINGHAM } = PLACES;

let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let acme: Company;
/** A company with no products: its policies' `product_reference` names none (budgets in miles, no caps). */
let plain: Company;

before(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ env: { SMTP_URL: smtp.url }, overrides: { clock }, startJobs: true });
  acme = await createCompany(t.app, 'Acme Usage');
  plain = await createCompany(t.app, 'Plain Usage');
  for (const [reference, rules] of [
    ['ppm-daily', { daily_cap_distance: 150 }],
    ['ppm-annual', { daily_cap_distance: 150, annual_cap_distance: 300 }],
    ['ppm-quiet', { mileage_budget_alerts: false }],
    ['ppm-km', {}],
  ] as const) {
    await createProduct(t.app, acme.sandbox, reference, rules, reference === 'ppm-km' ? 'km' : 'mile');
  }
});
after(async () => {
  await t.close();
  await smtp.close();
});

let legs = 0;
/** A two-hour drive between London and Birmingham (alternating), starting at `startIso`. */
async function drive(company: Company, reference: string, startIso: string) {
  return ++legs % 2 === 0
    ? driveBetween(t.app, company.sandbox, reference, startIso, 'birmingham', 'london')
    : driveBetween(t.app, company.sandbox, reference, startIso, 'london', 'birmingham');
}

const setBudget = (
  company: Company | Record<string, string>,
  reference: string,
  payload: object,
): Promise<LightMyRequestResponse> =>
  t.app.inject({
    method: 'PUT',
    url: `/policys/${reference}/mileage-budget`,
    headers:
      typeof company['sandbox'] === 'object'
        ? (company as Company).sandbox
        : (company as Record<string, string>),
    payload,
  });

/** The usage events of a policy, oldest first. */
async function usageEvents(reference: string): Promise<UsageEvent[]> {
  const rows = await t.container.database.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('type', 'like', 'usage.%')
    .orderBy('sequence')
    .execute();
  return rows
    .map((r) => ({
      type: r.type,
      data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>,
    }))
    .filter((e) => e.data['policy_reference'] === reference);
}

async function budgetEmails(email: string) {
  return (await t.container.services.notifications.emailsTo(email)).filter(
    (e) => e.template === 'mileage-budget-exceeded',
  );
}

describe('mileage budgets', () => {
  test('PUT sets the budget (200) in miles without a product, GET shows this month against it', async () => {
    const { reference } = await make.policy(t.app, plain);
    const none = await t.app.inject({
      method: 'GET',
      url: `/policys/${reference}/mileage-budget`,
      headers: plain.sandbox,
    });
    assertProblem(none, 404, 'NOT_FOUND');
    const journey = await drive(plain, reference, '2025-11-03T08:00:00Z');
    const put = await setBudget(plain, reference, { distance_per_month: 500 });
    assert.equal(put.statusCode, 200, put.body);
    const expected: Budget = {
      policy_reference: reference,
      distance_per_month: 500,
      usage_unit: 'mile',
      month: '2025-11',
      distance_this_month_in_metres: journey.distance_in_metres,
      exceeded: false,
    };
    assert.deepEqual(put.json(), expected);
    const get = await t.app.inject({
      method: 'GET',
      url: `/policys/${reference}/mileage-budget`,
      headers: plain.sandbox,
    });
    assert.equal(get.statusCode, 200, get.body);
    assert.deepEqual(get.json(), expected);
    const lower = await setBudget(plain, reference, { distance_per_month: 12.5 });
    assert.deepEqual(lower.json(), { ...expected, distance_per_month: 12.5, exceeded: true });
  });

  test('the unit is the product’s', async () => {
    const { reference } = await make.policy(t.app, acme, { policy: { product_reference: 'ppm-km' } });
    const put = await setBudget(acme, reference, { distance_per_month: 800 });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json<Budget>().usage_unit, 'km');
  });

  test('bad input is 422 naming the field', async () => {
    const { reference } = await make.policy(t.app, plain);
    for (const body of [
      { distance_per_month: 0 },
      { distance_per_month: -5 },
      { distance_per_month: '500' },
      {},
    ]) {
      const r = await setBudget(plain, reference, body);
      assertProblem(r, 422, 'VALIDATION_FAILED');
      const paths = r.json<{ errors: Array<{ path: string }> }>().errors.map((e) => e.path);
      assert.ok(
        paths.some((p) => p.startsWith('/body')),
        `${JSON.stringify(body)} → ${JSON.stringify(paths)}`,
      );
      if ('distance_per_month' in body) assert.ok(paths.includes('/body/distance_per_month'), String(paths));
    }
    const extra = await setBudget(plain, reference, { distance_per_month: 5, colour: 'red' });
    assertProblem(extra, 422, 'VALIDATION_FAILED');
  });

  test('another company’s policy, an unknown one, and no credentials', async () => {
    const { reference } = await make.policy(t.app, plain);
    assertProblem(await setBudget(acme, reference, { distance_per_month: 100 }), 404, 'NOT_FOUND');
    assertProblem(await setBudget(plain, 'no-such-policy', { distance_per_month: 100 }), 404, 'NOT_FOUND');
    assert.equal((await setBudget(plain, reference, { distance_per_month: 100 })).statusCode, 200);
    const theirs = await t.app.inject({
      method: 'GET',
      url: `/policys/${reference}/mileage-budget`,
      headers: acme.sandbox,
    });
    assertProblem(theirs, 404, 'NOT_FOUND');
    const anonymous = await t.app.inject({ method: 'GET', url: `/policys/${reference}/mileage-budget` });
    assert.equal(anonymous.statusCode, 401);
  });

  test('a policyholder sets and reads their own budget; another’s policy is 404', async () => {
    const auth = createAuthClient(t, smtp);
    const alice = await auth.loggedIn(plain.sandbox);
    const bob = await auth.loggedIn(plain.sandbox);
    const asAlice = { authorization: `Bearer ${alice.tokens.access_token}`, client_id: plain.client_id };
    const asBob = { authorization: `Bearer ${bob.tokens.access_token}` };
    const own = await setBudget(asAlice, alice.holder.policyReference, { distance_per_month: 300 });
    assert.equal(own.statusCode, 200, own.body);
    const read = await t.app.inject({
      method: 'GET',
      url: `/policys/${alice.holder.policyReference}/mileage-budget`,
      headers: asAlice,
    });
    assert.equal(read.json<Budget>().distance_per_month, 300);
    assertProblem(
      await setBudget(asBob, alice.holder.policyReference, { distance_per_month: 1 }),
      404,
      'NOT_FOUND',
    );
    const peek = await t.app.inject({
      method: 'GET',
      url: `/policys/${alice.holder.policyReference}/mileage-budget`,
      headers: asBob,
    });
    assertProblem(peek, 404, 'NOT_FOUND');
    const bad = await setBudget({ authorization: 'Bearer nope' }, alice.holder.policyReference, {
      distance_per_month: 1,
    });
    assert.equal(bad.statusCode, 401);
  });
});

describe('usage alerts at ingestion', () => {
  test('budget exceeded: one event and one email a month, again the next month', async () => {
    const { reference, email } = await make.policy(t.app, plain);
    assert.equal((await setBudget(plain, reference, { distance_per_month: 150 })).statusCode, 200);
    await drive(plain, reference, '2025-09-10T08:00:00Z');
    assert.deepEqual(await usageEvents(reference), []);
    const second = await drive(plain, reference, '2025-09-12T08:00:00Z');
    await drive(plain, reference, '2025-09-14T08:00:00Z');
    const events = await usageEvents(reference);
    assert.equal(events.length, 1, JSON.stringify(events));
    assert.equal(events[0]!.type, 'usage.budget_exceeded');
    assert.equal(events[0]!.data['month'], '2025-09');
    assert.equal(events[0]!.data['distance_per_month'], 150);
    assert.equal(events[0]!.data['usage_unit'], 'mile');
    assert.equal(events[0]!.data['journey_reference'], second.journey_reference);
    assert.ok(Number(events[0]!.data['distance_in_metres']) > 150 * 1609.344);

    const [received] = await smtp.waitFor(email, 2); // the welcome email, then the budget one
    assert.ok(received !== undefined);
    const sent = smtp.received.filter((m) => m.to.includes(email) && m.text.includes('mileage budget'));
    assert.equal(sent.length, 1);
    assert.match(sent[0]!.text, /Month: September 2025/);
    assert.match(sent[0]!.text, /Your budget: 150 miles/);
    assert.match(sent[0]!.text, /Driven so far this month: 20\d\.\d miles/);
    assert.equal((await budgetEmails(email)).length, 1);

    // October starts afresh.
    await drive(plain, reference, '2025-10-01T08:00:00Z');
    await drive(plain, reference, '2025-10-01T11:00:00Z');
    assert.deepEqual(
      (await usageEvents(reference)).map((e) => e.data['month']),
      ['2025-09', '2025-10'],
    );
    assert.equal((await budgetEmails(email)).length, 2);
  });

  test('no budget alert when the product turns them off', async () => {
    const { reference, email } = await make.policy(t.app, acme, {
      policy: { product_reference: 'ppm-quiet' },
    });
    assert.equal((await setBudget(acme, reference, { distance_per_month: 100 })).statusCode, 200);
    await drive(acme, reference, '2025-09-10T08:00:00Z');
    await drive(acme, reference, '2025-09-10T11:00:00Z');
    assert.deepEqual(await usageEvents(reference), []);
    assert.deepEqual(await budgetEmails(email), []);
    const view = await t.app.inject({
      method: 'GET',
      url: `/policys/${reference}/mileage-budget`,
      headers: acme.sandbox,
    });
    assert.equal(view.statusCode, 200);
    assert.equal(view.json<Budget>().exceeded, false, 'November has no journeys');
  });

  test('daily cap reached once a day, by London day of the start; again the next day', async () => {
    const { reference } = await make.policy(t.app, acme, { policy: { product_reference: 'ppm-daily' } });
    await drive(acme, reference, '2025-07-01T08:00:00Z');
    const over = await drive(acme, reference, '2025-07-01T11:00:00Z');
    await drive(acme, reference, '2025-07-01T14:00:00Z');
    // 23:30 UTC on 1 July is 00:30 on 2 July in London: a new day.
    await drive(acme, reference, '2025-07-01T23:30:00Z');
    assert.equal((await usageEvents(reference)).length, 1);
    const next = await drive(acme, reference, '2025-07-02T08:00:00Z');
    const events = await usageEvents(reference);
    assert.deepEqual(
      events.map((e) => [e.type, e.data['date'], e.data['journey_reference']]),
      [
        ['usage.daily_cap_reached', '2025-07-01', over.journey_reference],
        ['usage.daily_cap_reached', '2025-07-02', next.journey_reference],
      ],
    );
    assert.equal(events[0]!.data['daily_cap_distance'], 150);
    assert.equal(events[0]!.data['usage_unit'], 'mile');
  });

  test('annual cap reached once a policy year, each day counted at most at its daily cap', async () => {
    const { reference } = await make.policy(t.app, acme, { policy: { product_reference: 'ppm-annual' } });
    // Day 1: two drives (~202 miles) count 150; day 2: ~101 more, 251 counted (303 uncapped, over 300).
    await drive(acme, reference, '2025-08-01T08:00:00Z');
    await drive(acme, reference, '2025-08-01T11:00:00Z');
    const day2 = await drive(acme, reference, '2025-08-02T08:00:00Z');
    const annual = async () =>
      (await usageEvents(reference)).filter((e) => e.type === 'usage.annual_cap_reached');
    assert.deepEqual(await annual(), []);
    const day3 = await drive(acme, reference, '2025-08-03T08:00:00Z');
    await drive(acme, reference, '2025-08-04T08:00:00Z');
    const events = await annual();
    assert.equal(events.length, 1, JSON.stringify(events));
    assert.equal(events[0]!.data['journey_reference'], day3.journey_reference);
    assert.equal(events[0]!.data['policy_year_start'], '2025-05-31T23:00:00.000Z');
    assert.equal(events[0]!.data['annual_cap_distance'], 300);
    assert.equal(
      events[0]!.data['distance_in_metres'],
      241_401 + day2.distance_in_metres + day3.distance_in_metres,
      'day 1 counted at 150 miles (241,401 m)',
    );
  });

  test('a void journey is not counted', async () => {
    const { reference } = await make.policy(t.app, plain);
    assert.equal((await setBudget(plain, reference, { distance_per_month: 150 })).statusCode, 200);
    const first = await drive(plain, reference, '2025-08-10T08:00:00Z');
    const voided = await t.app.inject({
      method: 'POST',
      url: `/journeys/${first.journey_reference}/void`,
      headers: plain.sandbox,
      payload: { reason: 'phone left in a taxi' },
    });
    assert.equal(voided.statusCode, 200, voided.body);
    await drive(plain, reference, '2025-08-11T08:00:00Z');
    assert.deepEqual(await usageEvents(reference), []);
    const third = await drive(plain, reference, '2025-08-12T08:00:00Z');
    assert.deepEqual(
      (await usageEvents(reference)).map((e) => e.data['journey_reference']),
      [third.journey_reference],
    );
  });

  test('a journey batch alerts as single journeys do', async () => {
    const { reference } = await make.policy(t.app, acme, { policy: { product_reference: 'ppm-daily' } });
    const leg = (startIso: string, from: readonly number[], to: readonly number[]) => ({
      policy_reference: reference,
      route: encodePolyline([...from, ...to], 5),
      start_time: unix(startIso),
      end_time: unix(startIso) + 2 * 3600,
    });
    const r = await t.app.inject({
      method: 'POST',
      url: '/journeys/batch',
      headers: acme.sandbox,
      payload: {
        journeys: [
          leg('2025-09-20T08:00:00Z', LONDON, BIRMINGHAM),
          leg('2025-09-20T11:00:00Z', BIRMINGHAM, LONDON),
          leg('2025-09-20T14:00:00Z', LONDON, BIRMINGHAM),
        ],
      },
    });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json<{ created: number }>().created, 3);
    assert.deepEqual(
      (await usageEvents(reference)).map((e) => [e.type, e.data['date']]),
      [['usage.daily_cap_reached', '2025-09-20']],
    );
  });
});
