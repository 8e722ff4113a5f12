import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { scoringRules, tripScore } from '../../../src/modules/scores/rules/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { createProduct } from '../../support/driving.ts';
import { make } from '../../support/factories.ts';
import { startSmtpServer } from '../../support/smtp.ts';
import { assertProblem, createAuthClient } from '../auth/auth-support.ts';
import { caller, eventsOfType } from '../telematics/telematics-support.ts';
import { trace } from './score-support.ts';

// Driving scores through the HTTP API on a real database: positions are uploaded, the worker's trip cutting
// stores the trips as journeys and scores them in the same transaction, and the journeys and the policy's
// months carry the scores.
type Company = Awaited<ReturnType<typeof createCompany>>;
interface EventBody {
  event_reference: string;
  kind: string;
  occurred_at: string;
  speed_mph: number;
  acceleration_g: number | null;
}
interface JourneyBody {
  journey_reference: string;
  is_void: boolean;
  distance_in_metres: number;
  score: number | null;
  events: EventBody[];
}
interface Months {
  policy_reference: string;
  months: Array<{
    month: string;
    score: number | null;
    provisional: boolean;
    closed: boolean;
    distance_miles: number;
    scored_trips: number;
  }>;
}

const clock = fixedClock('2025-06-10T06:00:00Z');
let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let acme: Company;
let other: Company;
const call = caller(() => t);
const cut = () => t.container.services.telematics.cutPendingTrips(clock.now());

before(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ env: { SMTP_URL: smtp.url }, overrides: { clock } });
  acme = await createCompany(t.app, 'Acme Scores');
  other = await createCompany(t.app, 'Other Scores');
});
after(async () => {
  await t.close();
  await smtp.close();
});

async function send(company: Company, deviceId: string, positions: object[]): Promise<void> {
  for (let k = 0; k < positions.length; k += 1000) {
    const r = await call('POST', '/telematics/positions', company.sandbox, {
      device_id: deviceId,
      positions: positions.slice(k, k + 1000),
    });
    assert.equal(r.statusCode, 202, r.body);
  }
}

async function journeysOf(company: Company, policy: string): Promise<JourneyBody[]> {
  const r = await call('GET', `/journeys?policy_reference=${policy}&limit=500`, company.sandbox);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ journeys: JourneyBody[] }>().journeys;
}

async function months(company: Company | Record<string, string>, policy: string, query = '') {
  const headers = 'sandbox' in company ? company.sandbox : company;
  return call('GET', `/policys/${policy}/scores${query}`, headers as Record<string, string>);
}

describe('trips are scored as they are cut', () => {
  test('a trip with two harsh brakes carries exactly those events and the published score', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'score-1' });
    clock.set('2025-06-10T09:00:00Z');
    await send(acme, 'score-1', trace('2025-06-10T07:00:00Z', 2));
    assert.equal((await cut()).stored, 1);
    const [journey, ...rest] = await journeysOf(acme, policy);
    assert.ok(journey !== undefined);
    assert.equal(rest.length, 0);
    assert.deepEqual(
      journey.events.map((e) => e.kind),
      ['harsh_braking', 'harsh_braking'],
    );
    for (const e of journey.events) assert.ok(e.acceleration_g !== null && e.acceleration_g >= 0.31);
    const expected = tripScore(
      journey.events.map((e) => ({ kind: e.kind as 'harsh_braking' })),
      0,
      journey.distance_in_metres,
      scoringRules(undefined).weights,
    );
    assert.equal(journey.score, expected);
    // The single read carries the same.
    const one = await call('GET', `/journeys/${journey.journey_reference}`, acme.sandbox);
    assert.deepEqual(one.json<JourneyBody>().events, journey.events);
  });

  test('scores do not depend on the order positions arrive in: late positions re-cut and re-score the trip', async () => {
    const positions = trace('2025-06-10T10:00:00Z', 3, 11);
    const { reference: inOrder } = await make.policy(t.app, acme);
    await make.device(t.app, acme, inOrder, { deviceId: 'score-2a' });
    const { reference: late } = await make.policy(t.app, acme);
    await make.device(t.app, acme, late, { deviceId: 'score-2b' });
    clock.set('2025-06-10T12:00:00Z');
    await send(acme, 'score-2a', positions);
    // The other device's middle arrives after the trip was cut (a phone's buffer uploaded later), reversed.
    const third = Math.floor(positions.length / 3);
    await send(acme, 'score-2b', [...positions.slice(0, third), ...positions.slice(2 * third)]);
    await cut();
    await send(acme, 'score-2b', positions.slice(third, 2 * third).reverse());
    clock.set('2025-06-10T12:10:00Z');
    await cut();
    const [a] = (await journeysOf(acme, inOrder)).filter((j) => !j.is_void);
    const lateJourneys = await journeysOf(acme, late);
    const [b] = lateJourneys.filter((j) => !j.is_void);
    assert.ok(a !== undefined && b !== undefined);
    assert.ok(
      lateJourneys.some((j) => j.is_void),
      'the first cut was voided by the re-cut',
    );
    assert.equal(a.events.length, 3);
    assert.equal(b.score, a.score);
    const strip = (events: EventBody[]) => events.map(({ event_reference: _, ...rest }) => rest);
    assert.deepEqual(strip(b.events), strip(a.events));
    // The voided trip no longer counts in the month: one trip scored.
    const month = (await months(acme, late, '?from=2025-06&to=2025-06')).json<Months>().months[0];
    assert.equal(month?.scored_trips, 1);
    assert.equal(month.score, b.score);
  });

  test('a product’s driving_score rule sets the weights its trips are scored with', async () => {
    // A company of its own: once a company has products, its policies must name one.
    const strict = await createCompany(t.app, 'Strict Scores');
    await createProduct(t.app, strict.sandbox, 'ppm-strict', {
      driving_score: { weights: { harsh_braking: 10 } },
    });
    const { reference: policy } = await make.policy(t.app, strict, {
      policy: { product_reference: 'ppm-strict' },
    });
    await make.device(t.app, strict, policy, { deviceId: 'score-3' });
    clock.set('2025-06-10T15:00:00Z');
    await send(strict, 'score-3', trace('2025-06-10T14:00:00Z', 1));
    await cut();
    const [journey] = await journeysOf(strict, policy);
    assert.ok(journey !== undefined);
    assert.equal(journey.events.length, 1);
    assert.equal(
      journey.score,
      tripScore(
        [{ kind: 'harsh_braking' }],
        0,
        journey.distance_in_metres,
        scoringRules({ weights: { harsh_braking: 10 } }).weights,
      ),
    );
    const refused = await call('POST', '/products', strict.sandbox, {
      product_reference: 'ppm-bad',
      name: 'bad',
      usage_unit: 'mile',
      rules: { driving_score: { weights: { phone_use: 3 } } },
    });
    assertProblem(refused, 422, 'VALIDATION_FAILED');
  });
});

describe('GET /policys/:ref/scores', () => {
  test('months with their distance-weighted score, provisional until over with 50 miles; a month closes once', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'score-4' });
    clock.set('2025-06-12T09:00:00Z');
    await send(acme, 'score-4', trace('2025-06-12T07:00:00Z', 1, 3));
    await send(acme, 'score-4', trace('2025-06-12T08:00:00Z', 0, 4));
    await cut();
    const trips = (await journeysOf(acme, policy)).filter((j) => j.score !== null);
    assert.equal(trips.length, 2);
    const r = await months(acme, policy, '?from=2025-05&to=2025-06');
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json<Months>();
    assert.equal(body.policy_reference, policy);
    assert.deepEqual(
      body.months.map((m) => m.month),
      ['2025-05', '2025-06'],
    );
    assert.deepEqual(body.months[0], {
      month: '2025-05',
      score: null,
      provisional: true,
      closed: false,
      distance_miles: 0,
      scored_trips: 0,
      disputed: false,
    });
    const june = body.months[1];
    const metres = trips.reduce((s, j) => s + j.distance_in_metres, 0);
    const weighted = trips.reduce((s, j) => s + Math.round((j.score ?? 0) * 10) * j.distance_in_metres, 0);
    assert.equal(june?.score, Math.floor(weighted / metres + 0.5) / 10);
    assert.equal(june.provisional, true);
    assert.equal(june.scored_trips, 2);

    // July: June is over and closes once, announced; still provisional (under 50 miles).
    clock.set('2025-07-01T00:30:00Z');
    const scores = t.container.services.scores;
    assert.ok((await scores.closeMonths(clock.now())) >= 1);
    assert.equal(await scores.closeMonths(clock.now()), 0);
    const closed = (await eventsOfType(t, 'score.month_closed')).filter(
      (e) => (e.data as { policy_reference: string }).policy_reference === policy,
    );
    assert.equal(closed.length, 1);
    assert.deepEqual(closed[0]?.data, {
      policy_reference: policy,
      month: '2025-06',
      score: june.score,
      provisional: true,
      distance_miles: Math.round((metres / 1609.344) * 100) / 100,
      scored_trips: 2,
    });
    const after = (await months(acme, policy, '?from=2025-06&to=2025-06')).json<Months>().months[0];
    assert.equal(after?.closed, true);
  });

  test('bad months and ranges are 422; another company’s policy and an unknown one are 404', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    for (const query of [
      '?from=2025-13',
      '?to=25-06',
      '?from=2025-07&to=2025-06',
      '?from=2020-01&to=2025-06',
      '?colour=red',
    ])
      assertProblem(await months(acme, policy, query), 422, 'VALIDATION_FAILED');
    assertProblem(await months(other, policy), 404, 'NOT_FOUND');
    assertProblem(await months(acme, 'no-such-policy'), 404, 'NOT_FOUND');
    const anonymous = await t.app.inject({ method: 'GET', url: `/policys/${policy}/scores` });
    assert.equal(anonymous.statusCode, 401);
  });

  test('the calendar’s ends: 9999-12 is one month, the default range stops at 1000-01, and earlier years are 422', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    const monthsOf = async (query: string) => {
      const r = await months(acme, policy, query);
      assert.equal(r.statusCode, 200, r.body);
      return r.json<{ months: Array<{ month: string }> }>().months.map((m) => m.month);
    };
    // 10000-01 sorts before 9999-12 as text: this was refused as more than 36 months.
    assert.deepEqual(await monthsOf('?from=9999-12&to=9999-12'), ['9999-12']);
    assert.deepEqual(await monthsOf('?from=9999-11&to=9999-12'), ['9999-11', '9999-12']);
    // The API's years are 1000–9999: the default eleven months before 1000-01 stop there.
    assert.deepEqual(await monthsOf('?to=1000-01'), ['1000-01']);
    assert.deepEqual(await monthsOf('?to=1000-03'), ['1000-01', '1000-02', '1000-03']);
    for (const query of ['?to=0000-01', '?from=0999-12&to=1000-01', '?from=0099-01'])
      assert.equal((await months(acme, policy, query)).statusCode, 422, query);
  });

  test('a policyholder reads their own policy’s scores; another policyholder’s answers 404', async () => {
    // Welcome emails go out through the worker: an app of its own with jobs running (and no manual cuts).
    const withJobs = await createTestApp({
      env: { SMTP_URL: smtp.url },
      overrides: { clock },
      startJobs: true,
    });
    try {
      const company = await createCompany(withJobs.app, 'Holders Scores');
      const auth = createAuthClient(withJobs, smtp);
      const alice = await auth.loggedIn(company.sandbox);
      const bob = await auth.loggedIn(company.sandbox);
      const asAlice = { authorization: `Bearer ${alice.tokens.access_token}`, client_id: company.client_id };
      const asBob = { authorization: `Bearer ${bob.tokens.access_token}`, client_id: company.client_id };
      const read = (headers: Record<string, string>) =>
        withJobs.app.inject({
          method: 'GET',
          url: `/policys/${alice.holder.policyReference}/scores`,
          headers,
        });
      const own = await read(asAlice);
      assert.equal(own.statusCode, 200, own.body);
      assert.equal(own.json<Months>().months.length, 12);
      assertProblem(await read(asBob), 404, 'NOT_FOUND');
    } finally {
      await withJobs.close();
    }
  });
});
