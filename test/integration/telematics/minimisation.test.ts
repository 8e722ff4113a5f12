import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { assertProblem } from '../auth/auth-support.ts';
import { trace } from '../scores/score-support.ts';
import { caller } from './telematics-support.ts';

// PUT /admin/companies/:ref/telematics {minimise_positions}: a company that minimises keeps each trip's
// journey (coarsened route), events and score, and its raw positions are gone once it is cut and scored;
// positions arriving late inside such a trip are dropped and the trip stands.
type Company = Awaited<ReturnType<typeof createCompany>>;
interface JourneyBody {
  journey_reference: string;
  is_void: boolean;
  score: number | null;
  route: string | null;
  events: Array<{ kind: string }>;
}

const clock = fixedClock('2025-06-10T06:00:00Z');
let t: TestApp;
let minimal: Company;
let keeper: Company;
const call = caller(() => t);

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  minimal = await createCompany(t.app, 'Minimal Positions');
  keeper = await createCompany(t.app, 'Keeper Positions');
});
after(async () => {
  await t.close();
});

const settings = (reference: string, method: 'GET' | 'PUT', payload?: object, headers = t.adminHeaders) =>
  t.app.inject({
    method,
    url: `/admin/companies/${reference}/telematics`,
    headers,
    ...(payload === undefined ? {} : { payload }),
  });

async function positionsOf(deviceId: string): Promise<number> {
  const row = await t.container.database.db
    .selectFrom('positions')
    .innerJoin('devices', 'devices.id', 'positions.device_id')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('devices.device_id', '=', deviceId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

async function journeysOf(company: Company, policy: string): Promise<JourneyBody[]> {
  const r = await call('GET', `/journeys?policy_reference=${policy}`, company.sandbox);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ journeys: JourneyBody[] }>().journeys;
}

async function drive(company: Company, deviceId: string, positions: object[]): Promise<void> {
  const r = await call('POST', '/telematics/positions', company.sandbox, { device_id: deviceId, positions });
  assert.equal(r.statusCode, 202, r.body);
  await t.container.services.telematics.cutPendingTrips(clock.now());
}

describe('data minimisation of raw positions', () => {
  test('the setting: off by default, set by an admin, 422 for a bad body, 404 for an unknown company', async () => {
    assert.deepEqual((await settings(minimal.company_reference, 'GET')).json(), {
      minimise_positions: false,
    });
    const set = await settings(minimal.company_reference, 'PUT', { minimise_positions: true });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual((await settings(minimal.company_reference, 'GET')).json(), { minimise_positions: true });
    for (const bad of [{}, { minimise_positions: 'yes' }, { minimise_positions: true, extra: 1 }])
      assertProblem(await settings(minimal.company_reference, 'PUT', bad), 422, 'VALIDATION_FAILED');
    assertProblem(await settings('no-such-company', 'GET'), 404, 'NOT_FOUND');
    assert.equal((await settings(minimal.company_reference, 'GET', undefined, {})).statusCode, 401);
  });

  test('a minimised trip keeps its journey, route, events and score; its positions are gone', async () => {
    await settings(minimal.company_reference, 'PUT', { minimise_positions: true });
    const { reference: policy } = await make.policy(t.app, minimal);
    await make.device(t.app, minimal, policy, { deviceId: 'minimal-1' });
    const { reference: kept } = await make.policy(t.app, keeper);
    await make.device(t.app, keeper, kept, { deviceId: 'keeper-1' });
    clock.set('2025-06-10T09:00:00Z');
    const positions = trace('2025-06-10T07:00:00Z', 2);
    await drive(minimal, 'minimal-1', positions);
    await drive(keeper, 'keeper-1', positions);

    const [journey, ...others] = await journeysOf(minimal, policy);
    assert.ok(journey !== undefined);
    assert.equal(others.length, 0);
    assert.equal(journey.events.length, 2);
    assert.ok(journey.score !== null && journey.route !== null);
    assert.equal(await positionsOf('minimal-1'), 0);
    // A company that has not chosen it keeps them, and scores the same.
    const [control] = await journeysOf(keeper, kept);
    assert.equal(await positionsOf('keeper-1'), positions.length);
    assert.equal(control?.score, journey.score);
    const months = await call('GET', `/policys/${policy}/scores?from=2025-06&to=2025-06`, minimal.sandbox);
    assert.equal(months.json<{ months: Array<{ scored_trips: number }> }>().months[0]?.scored_trips, 1);

    // Late positions inside the minimised trip (a phone's buffer, uploaded after): dropped, the trip stands.
    clock.set('2025-06-10T10:00:00Z');
    await drive(minimal, 'minimal-1', positions.slice(100, 300));
    const after = await journeysOf(minimal, policy);
    assert.deepEqual(after, [journey]);
    assert.equal(await positionsOf('minimal-1'), 0);

    // A later trip is cut and minimised as any other.
    clock.set('2025-06-10T13:00:00Z');
    await drive(minimal, 'minimal-1', trace('2025-06-10T11:00:00Z', 0, 5));
    const later = (await journeysOf(minimal, policy)).filter((j) => !j.is_void);
    assert.equal(later.length, 2);
    assert.equal(await positionsOf('minimal-1'), 0);
  });
});
