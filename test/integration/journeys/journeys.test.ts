import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { asTenant, createClientAuth, type Tenant } from '../../../src/modules/companies/index.ts';
import { journeyRoutes, usagePremiumPence } from '../../../src/modules/journeys/index.ts';
import { storeJourney } from '../../../src/modules/journeys/journey-repository.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { AppError } from '../../../src/platform/errors.ts';
import { encodePolyline, decodePolyline, routeDistanceMetres } from '../../../src/platform/geo/index.ts';
import { installProblemHandling } from '../../../src/platform/http/problem.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { onPostgres } from '../../support/database.ts';
import { make, type MadePolicy } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
interface JourneyBody {
  journey_reference: string;
  provider_reference: string | null;
  policy_reference: string;
  policy_version_reference: string;
  route: string;
  distance_in_metres: number;
  distance_units: string;
  total_miles: number;
  total_kms: number;
  usage_rate: number;
  usage_premium: number;
  start_lat: number;
  start_long: number;
  end_lat: number;
  end_long: number;
  start_at: number;
  end_at: number;
  start_name: string | null;
  end_name: string | null;
  start_postcode: string | null;
  end_postcode: string | null;
  is_void: boolean;
  void_reason: string | null;
  statement_version_reference: string | null;
  [key: string]: unknown;
}
interface Problem {
  code: string;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
}

// The example policy's term is 2025-06-01 to 2026-05-31 (London); "now" is mid-September 2025.
const NOW = '2025-09-15T12:00:00Z';
const clock = fixedClock(NOW);
const unix = (iso: string): number => Date.parse(iso) / 1000;

let t: TestApp;
let acme: Company;
let other: Company;
let acmeTenant: Tenant;

before(async () => {
  t = await createTestApp({ overrides: { clock }, startJobs: true });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
  const row = await t.container.database.db
    .selectFrom('companies')
    .select('id')
    .where('company_reference', '=', acme.company_reference)
    .executeTakeFirstOrThrow();
  acmeTenant = asTenant(row.id, 'sandbox');
});
after(async () => {
  await t.close();
});

/** A straight route of `count` points from one place to another, as a tracker would sample it. */
function routeBetween(from: [number, number], to: [number, number], count = 20, precision: 5 | 6 = 5) {
  const points: number[] = [];
  for (let k = 0; k < count; k++) {
    const f = k / (count - 1);
    points.push(from[0] + (to[0] - from[0]) * f, from[1] + (to[1] - from[1]) * f);
  }
  return encodePolyline(points, precision);
}

const BUCKINGHAM_PALACE: [number, number] = [51.501, -0.1416];
const STRAND: [number, number] = [51.5115, -0.116];
const GLASGOW_CENTRAL: [number, number] = [55.8609, -4.2514];
const GLASGOW_WEST_END: [number, number] = [55.8724, -4.2889];

function journey(policyReference: string, overrides: Record<string, unknown> = {}) {
  return {
    route: routeBetween(BUCKINGHAM_PALACE, STRAND),
    start_time: unix('2025-09-10T08:00:00Z'),
    end_time: unix('2025-09-10T08:20:00Z'),
    policy_reference: policyReference,
    ...overrides,
  };
}

async function postJourney(headers: Record<string, string>, body: unknown) {
  return t.app.inject({ method: 'POST', url: '/journeys', headers, payload: body as object });
}

async function eventsOfType(type: string) {
  return t.container.database.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('type', '=', type)
    .orderBy('sequence')
    .execute();
}

describe('POST /journeys', () => {
  test('201 with every field derived: distance on the ellipsoid, premium, places, version in force', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const body = journey(policy.policy_reference, { provider_reference: 'trip-1' });
    const r = await postJourney(acme.sandbox, body);
    assert.equal(r.statusCode, 201, r.body);
    const j = r.json<JourneyBody>();

    const decoded = decodePolyline(body.route, 5);
    assert.ok(decoded.ok);
    const metres = routeDistanceMetres(decoded.points, decoded.count);
    assert.match(j.journey_reference, /^[0-9a-f-]{36}$/);
    assert.equal(j.provider_reference, 'trip-1');
    assert.equal(j.policy_reference, policy.policy_reference);
    assert.equal(j.policy_version_reference, policy.policy_version_reference);
    assert.equal(j.route, body.route);
    assert.equal(j.distance_in_metres, metres);
    assert.ok(metres > 2000 && metres < 2200, `${metres} m`);
    assert.equal(j.distance_units, 'miles');
    assert.equal(j.total_miles, Math.round((metres / 1609.344) * 100) / 100);
    assert.equal(j.total_kms, Math.round(metres / 10) / 100);
    assert.equal(j.usage_rate, 0.045);
    assert.equal(j.usage_premium, usagePremiumPence('0.045', metres, 'mile') / 100);
    assert.equal(j.start_lat, BUCKINGHAM_PALACE[0]);
    assert.equal(j.start_long, BUCKINGHAM_PALACE[1]);
    assert.equal(j.end_lat, STRAND[0]);
    assert.equal(j.end_long, STRAND[1]);
    assert.equal(j.start_at, body.start_time);
    assert.equal(j.end_at, body.end_time);
    assert.equal(j['duration_in_seconds'], 1200);
    // Both ends in London: each named by its part of the town.
    assert.equal(j.start_name, 'Victoria');
    assert.equal(j.end_name, 'Covent Garden');
    assert.match(j.start_postcode ?? '', /^SW1/);
    assert.match(j.end_postcode ?? '', /^WC2/);
    assert.equal(j.is_void, false);
    assert.equal(j.void_reason, null);
    assert.equal(j.statement_version_reference, null);
    // A client's journey: not from a device, not estimated, nothing bridged.
    assert.equal(j['source'], 'api');
    assert.equal(j['device_id'], null);
    assert.equal(j['is_estimated'], false);
    assert.equal(j['gap_distance_in_metres'], 0);

    const created = (await eventsOfType('journey.created')).find(
      (e) => (e.data as { journey_reference: string }).journey_reference === j.journey_reference,
    );
    assert.ok(created, 'a journey.created event');
    assert.deepEqual(
      { ...(created.data as Record<string, unknown>) },
      {
        journey_reference: j.journey_reference,
        provider_reference: 'trip-1',
        policy_reference: policy.policy_reference,
        policy_version_reference: policy.policy_version_reference,
        start_at: '2025-09-10T08:00:00.000Z',
        end_at: '2025-09-10T08:20:00.000Z',
        distance_in_metres: metres,
        usage_premium: j.usage_premium,
        source: 'api',
        device_id: null,
      },
    );
  });

  test('Glasgow: G postcodes and Glasgow’s names; precision 6 is read as such', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const r = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        route: routeBetween(GLASGOW_CENTRAL, GLASGOW_WEST_END, 50, 6),
        precision: 6,
      }),
    );
    assert.equal(r.statusCode, 201, r.body);
    const j = r.json<JourneyBody>();
    assert.match(j.start_postcode ?? '', /^G\d/);
    assert.match(j.end_postcode ?? '', /^G\d/);
    // In one city: the centre has nothing finer than "Glasgow"; the West End is Partick.
    assert.equal(j.start_name, 'Glasgow');
    assert.equal(j.end_name, 'Partick');
    assert.equal(j['precision'], 6);
    assert.equal(j.start_lat, GLASGOW_CENTRAL[0]);
  });

  test('a journey abroad or at sea has null places', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const r = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, { route: routeBetween([48.8566, 2.3522], [48.86, 2.34]) }),
    );
    assert.equal(r.statusCode, 201, r.body);
    const j = r.json<JourneyBody>();
    assert.deepEqual([j.start_name, j.start_postcode, j.end_name, j.end_postcode], [null, null, null, null]);
  });

  test('each invalid route or time → 422 naming the field', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const now = unix(NOW);
    const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['undecodable', { route: '_p~iF~ps|U _ulL' }, '/body/route', /not part of an encoded polyline/],
      ['truncated', { route: '_p~iF~ps|U_' }, '/body/route', /ends inside a value/],
      ['one point', { route: encodePolyline([51.5, -0.1], 5) }, '/body/route', /at least 2 points/],
      [
        'out of range',
        { route: encodePolyline([89.9, 0, 89.99, 0], 5) + '_seK?' },
        '/body/route',
        /latitude/,
      ],
      ['empty route', { route: '' }, '/body/route', /.+/],
      [
        'end before start',
        { start_time: unix('2025-09-10T08:00:00Z'), end_time: unix('2025-09-10T07:00:00Z') },
        '/body/end_time',
        /after start_time/,
      ],
      ['end at start', { end_time: unix('2025-09-10T08:00:00Z') }, '/body/end_time', /after start_time/],
      ['in the future', { start_time: now - 60, end_time: now + 301 }, '/body/end_time', /future/],
      ['precision 7', { precision: 7 }, '/body/precision', /.+/],
      ['time in milliseconds', { end_time: Date.now() }, '/body/end_time', /.+/],
      ['time as a string', { start_time: '1757491200' }, '/body/start_time', /.+/],
      ['unknown field', { colour: 'red' }, '/body/colour', /not a known field/],
    ];
    for (const [name, overrides, path, message] of cases) {
      const r = await postJourney(acme.sandbox, journey(policy.policy_reference, overrides));
      assert.equal(r.statusCode, 422, `${name}: ${r.body}`);
      const problem = r.json<Problem>();
      assert.equal(problem.code, 'VALIDATION_FAILED', name);
      const error = problem.errors?.find((e) => e.path === path);
      assert.ok(error, `${name}: ${path} in ${JSON.stringify(problem.errors)}`);
      assert.match(error.message, message, name);
    }
    const missing = await postJourney(acme.sandbox, { route: journey('x').route });
    assert.equal(missing.statusCode, 422);
    const paths = missing.json<Problem>().errors?.map((e) => e.path) ?? [];
    for (const path of ['/body/start_time', '/body/end_time', '/body/policy_reference'])
      assert.ok(paths.includes(path), `${path} in ${paths.join(', ')}`);
  });

  test('more than 100,000 points → 422; the skew allowance takes a journey ending 5 minutes ahead', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const points: number[] = [];
    for (let k = 0; k <= 100_000; k++) points.push(51.5 + (k % 2) * 1e-5, -0.1);
    const tooMany = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, { route: encodePolyline(points, 5) }),
    );
    assert.equal(tooMany.statusCode, 422);
    assert.match(tooMany.json<Problem>().detail, /more than 100000 points/);

    const now = unix(NOW);
    const ahead = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, { start_time: now - 600, end_time: now + 300 }),
    );
    assert.equal(ahead.statusCode, 201, ahead.body);
  });

  test('outside the policy’s cover → 422 JOURNEY_OUTSIDE_COVER', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const before = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-05-31T08:00:00Z'),
        end_time: unix('2025-05-31T08:20:00Z'),
      }),
    );
    assert.equal(before.statusCode, 422, before.body);
    assert.equal(before.json<Problem>().code, 'JOURNEY_OUTSIDE_COVER');

    // A policy whose term starts next month: nothing is on cover yet.
    const pending = (
      await make.policy(t.app, acme, {
        policy: {
          start_date: unix('2025-10-01T00:00:00Z'),
          end_date: unix('2026-10-01T00:00:00Z'),
          inception_date: unix('2025-10-01T00:00:00Z'),
        },
      })
    ).body;
    const early = await postJourney(acme.sandbox, journey(pending.policy_reference));
    assert.equal(early.statusCode, 422);
    assert.equal(early.json<Problem>().code, 'JOURNEY_OUTSIDE_COVER');
  });

  test('unknown policy → 404; another tenant’s or environment’s policy → 404', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const unknown = await postJourney(acme.sandbox, journey('no-such-policy'));
    assert.equal(unknown.statusCode, 404);
    const elsewhere = await postJourney(other.sandbox, journey(policy.policy_reference));
    assert.equal(elsewhere.statusCode, 404);
    const production = await postJourney(acme.production, journey(policy.policy_reference));
    assert.equal(production.statusCode, 404);
    const noCredentials = await postJourney({}, journey(policy.policy_reference));
    assert.equal(noCredentials.statusCode, 401);
  });

  test('overlapping another journey of the policy → 409 JOURNEY_OVERLAP; touching is fine; void ones do not count', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const first = await postJourney(acme.sandbox, journey(policy.policy_reference));
    assert.equal(first.statusCode, 201);
    const firstRef = first.json<JourneyBody>().journey_reference;

    const overlapping: Array<[string, string]> = [
      ['2025-09-10T08:10:00Z', '2025-09-10T08:30:00Z'], // runs on past the start of the first
      ['2025-09-10T07:50:00Z', '2025-09-10T08:01:00Z'], // ends inside it
      ['2025-09-10T08:05:00Z', '2025-09-10T08:06:00Z'], // inside it
      ['2025-09-10T07:00:00Z', '2025-09-10T09:00:00Z'], // around it
    ];
    for (const [start, end] of overlapping) {
      const r = await postJourney(
        acme.sandbox,
        journey(policy.policy_reference, { start_time: unix(start), end_time: unix(end) }),
      );
      assert.equal(r.statusCode, 409, `${start}–${end}: ${r.body}`);
      const problem = r.json<Problem>();
      assert.equal(problem.code, 'JOURNEY_OVERLAP');
      assert.match(problem.detail, new RegExp(firstRef));
    }

    const touchingAfter = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-09-10T08:20:00Z'),
        end_time: unix('2025-09-10T08:40:00Z'),
      }),
    );
    assert.equal(touchingAfter.statusCode, 201, touchingAfter.body);
    const touchingBefore = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-09-10T07:40:00Z'),
        end_time: unix('2025-09-10T08:00:00Z'),
      }),
    );
    assert.equal(touchingBefore.statusCode, 201, touchingBefore.body);

    // A late upload far back in time is checked against its own neighbours.
    const earlier = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-08-01T08:00:00Z'),
        end_time: unix('2025-08-01T09:00:00Z'),
      }),
    );
    assert.equal(earlier.statusCode, 201);

    // Another policy's journeys never overlap this one's.
    const { body: second } = await make.policy(t.app, acme);
    assert.equal((await postJourney(acme.sandbox, journey(second.policy_reference))).statusCode, 201);

    const voided = await t.app.inject({
      method: 'POST',
      url: `/journeys/${firstRef}/void`,
      headers: acme.sandbox,
      payload: { reason: 'uploaded twice' },
    });
    assert.equal(voided.statusCode, 200);
    const replacement = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-09-10T08:05:00Z'),
        end_time: unix('2025-09-10T08:15:00Z'),
      }),
    );
    assert.equal(replacement.statusCode, 201, replacement.body);
  });

  test('a journey reaching into a long earlier one is caught past the void journeys inside it', async () => {
    // store_journey (migration 0016) looks at the latest non-void journey starting before the new one;
    // a void journey starting later than that one must not hide it.
    const { body: policy } = await make.policy(t.app, acme);
    const post = (start: string, end: string) =>
      postJourney(
        acme.sandbox,
        journey(policy.policy_reference, { start_time: unix(start), end_time: unix(end) }),
      );
    const inside = await post('2025-09-10T08:00:00Z', '2025-09-10T08:10:00Z');
    assert.equal(inside.statusCode, 201);
    const voided = await t.app.inject({
      method: 'POST',
      url: `/journeys/${inside.json<JourneyBody>().journey_reference}/void`,
      headers: acme.sandbox,
      payload: { reason: 'duplicate of the long journey' },
    });
    assert.equal(voided.statusCode, 200);
    const long = await post('2025-09-10T07:00:00Z', '2025-09-10T12:00:00Z');
    assert.equal(long.statusCode, 201, long.body);

    const reaching = await post('2025-09-10T11:00:00Z', '2025-09-10T12:30:00Z');
    assert.equal(reaching.statusCode, 409, reaching.body);
    assert.match(reaching.json<Problem>().detail, new RegExp(long.json<JourneyBody>().journey_reference));
    assert.equal((await post('2025-09-10T12:00:00Z', '2025-09-10T12:30:00Z')).statusCode, 201);
  });

  test('the same provider_reference again returns the stored journey (200); other policies are separate', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const body = journey(policy.policy_reference, { provider_reference: 'device-42/trip-7' });
    const first = await postJourney(acme.sandbox, body);
    assert.equal(first.statusCode, 201);
    const again = await postJourney(acme.sandbox, body);
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(again.json(), first.json());
    // Even with another body: the key decides.
    const changed = await postJourney(acme.sandbox, {
      ...body,
      start_time: body.start_time + 7200,
      end_time: body.end_time + 7200,
    });
    assert.equal(changed.statusCode, 200);
    assert.equal(changed.json<JourneyBody>().journey_reference, first.json<JourneyBody>().journey_reference);

    const { body: second } = await make.policy(t.app, acme);
    const elsewhere = await postJourney(acme.sandbox, { ...body, policy_reference: second.policy_reference });
    assert.equal(elsewhere.statusCode, 201);
    assert.notEqual(
      elsewhere.json<JourneyBody>().journey_reference,
      first.json<JourneyBody>().journey_reference,
    );
    const rows = await t.container.database.db
      .selectFrom('journeys')
      .select('id')
      .where('provider_reference', '=', 'device-42/trip-7')
      .execute();
    assert.equal(rows.length, 2);
  });

  test('store_journey touches one month of journeys: its reference and overlap checks read journey_keys', async () => {
    // Months of an earlier year, as a database some years old holds them; a check that read journeys
    // would reach (and lock) every one of them, as neither a reference nor a look back names a month.
    const db = t.container.database.db;
    for (let month = 1; month <= 12; month++) {
      const from = `2024-${String(month).padStart(2, '0')}-01T00:00:00Z`;
      const to =
        month === 12 ? '2025-01-01T00:00:00Z' : `2024-${String(month + 1).padStart(2, '0')}-01T00:00:00Z`;
      await sql`${sql.raw(`create table if not exists journeys_p2024_${String(month).padStart(2, '0')}
        partition of journeys for values from ('${from}') to ('${to}')`)}`.execute(db);
    }
    const { body: made } = await make.policy(t.app, acme);
    const policy = await db
      .selectFrom('policies')
      .select(['id', 'version_count'])
      .where('policy_reference', '=', made.policy_reference)
      .executeTakeFirstOrThrow();
    const version = await db
      .selectFrom('policy_versions')
      .select('id')
      .where('policy_id', '=', policy.id)
      .orderBy('sequence')
      .executeTakeFirstOrThrow();
    const stored = (providerReference: string, startIso: string) =>
      db.transaction().execute(async (trx) => {
        const startAt = new Date(startIso);
        const outcome = await storeJourney(
          { trx },
          acmeTenant,
          {
            id: randomUUID(),
            policyId: policy.id,
            policyReference: made.policy_reference,
            policyVersionId: version.id,
            providerReference,
            route: routeBetween(BUCKINGHAM_PALACE, STRAND),
            precision: 5,
            pointCount: 20,
            startAt,
            endAt: new Date(startAt.getTime() + 600_000),
            distanceMetres: 2_000,
            distanceUnit: 'mile',
            usageRate: '0.045',
            usagePremiumPence: 6,
            start: { lat: null, lng: null, name: null, postcode: null },
            end: { lat: null, lng: null, name: null, postcode: null },
            createdAt: new Date(NOW),
            source: 'api',
            deviceId: null,
            gapDistanceMetres: 0,
          },
          { versionCount: policy.version_count },
          { type: 'journey.created', data: {} },
        );
        const locked = await sql<{ name: string }>`
          select distinct relation::regclass::text as name from pg_locks
          where pid = pg_backend_pid() and locktype = 'relation'`.execute(trx);
        return { outcome, locked: locked.rows.map((r) => r.name) };
      });
    const first = await stored('keys-1', '2025-09-11T08:00:00Z');
    assert.equal(typeof first.outcome, 'object');
    assert.ok(first.locked.includes('journey_keys'), first.locked.join(', '));
    // The journey's own month is DEFAULT or, once the partition job has run on the test's clock, 2025-09.
    assert.deepEqual(
      first.locked.filter((name) => /^journeys_p/.test(name) && name !== 'journeys_p2025_09'),
      [],
      `no month of journeys but the journey's own: ${first.locked.join(', ')}`,
    );
    // The checks still hold: the reference again, or an overlap, stores nothing.
    assert.equal((await stored('keys-1', '2025-09-12T08:00:00Z')).outcome, 'TAKEN');
    assert.equal((await stored('keys-2', '2025-09-11T08:05:00Z')).outcome, 'TAKEN');
    assert.equal(typeof (await stored('keys-2', '2025-09-11T08:10:00Z')).outcome, 'object');
  });

  test(`50 concurrent identical submissions store exactly one journey${onPostgres ? ' (PostgreSQL)' : ''}`, async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const body = journey(policy.policy_reference, { provider_reference: 'burst' });
    const responses = await Promise.all(Array.from({ length: 50 }, () => postJourney(acme.sandbox, body)));
    const statuses = responses.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 200).length, 49, statuses.join(','));
    assert.equal(new Set(responses.map((r) => r.json<JourneyBody>().journey_reference)).size, 1);
    const rows = await t.container.database.db
      .selectFrom('journeys')
      .select('id')
      .where('provider_reference', '=', 'burst')
      .execute();
    assert.equal(rows.length, 1);
    const events = (await eventsOfType('journey.created')).filter(
      (e) => (e.data as { provider_reference: string | null }).provider_reference === 'burst',
    );
    assert.equal(events.length, 1, 'one event');
  });

  test('50 concurrent different journeys on one policy: all stored, none overlapping', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const base = unix('2025-09-01T00:00:00Z');
    // Pairs of journeys that overlap each other: exactly one of each pair can be stored.
    const bodies = Array.from({ length: 50 }, (_, k) =>
      journey(policy.policy_reference, {
        start_time: base + Math.floor(k / 2) * 3600 + (k % 2) * 60,
        end_time: base + Math.floor(k / 2) * 3600 + 600 + (k % 2) * 60,
      }),
    );
    const responses = await Promise.all(bodies.map((b) => postJourney(acme.sandbox, b)));
    const statuses = responses.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 201).length, 25, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 409).length, 25, statuses.join(','));
    // What is stored: 25 journeys, each ending at or before the next one starts.
    const stored = await t.container.database.db
      .selectFrom('journeys')
      .innerJoin('policies', 'policies.id', 'journeys.policy_id')
      .select(['journeys.start_at', 'journeys.end_at'])
      .where('policies.policy_reference', '=', policy.policy_reference)
      .orderBy('journeys.start_at')
      .execute();
    assert.equal(stored.length, 25);
    for (let i = 1; i < stored.length; i++)
      assert.ok(
        stored[i - 1]!.end_at <= stored[i]!.start_at,
        `journeys ${String(i - 1)} and ${String(i)} overlap`,
      );
  });
});

describe('rating against policy versions', () => {
  test('an adjustment mid-period changes the rate from its effective time; a late upload keeps the old rate', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const effective = unix('2025-09-01T00:00:00Z');
    // From the example as it stands (its proposer too), not the policy's own input.
    const { versions } = (
      await make.adjustment(
        t.app,
        acme,
        { reference: policy.policy_reference, input: examplePolicyInput() },
        { pricing: { usage_rate: 0.06 }, effective_date: effective },
      )
    ).body;
    const mta = versions.find((v) => v.version_type === 'mta');
    assert.ok(mta);

    // Uploaded after the adjustment, driven before it: the old rate, the nb version.
    const beforeIt = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-08-31T23:30:00Z'),
        end_time: unix('2025-09-01T00:10:00Z'),
      }),
    );
    assert.equal(beforeIt.statusCode, 201, beforeIt.body);
    const old = beforeIt.json<JourneyBody>();
    assert.equal(old.usage_rate, 0.045);
    assert.equal(old.policy_version_reference, policy.policy_version_reference);
    assert.equal(old.usage_premium, usagePremiumPence('0.045', old.distance_in_metres, 'mile') / 100);

    const afterIt = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-09-01T00:10:00Z'),
        end_time: unix('2025-09-01T00:30:00Z'),
      }),
    );
    assert.equal(afterIt.statusCode, 201, afterIt.body);
    const adjusted = afterIt.json<JourneyBody>();
    assert.equal(adjusted.usage_rate, 0.06);
    assert.equal(adjusted.policy_version_reference, mta.policy_version_reference);
    assert.equal(
      adjusted.usage_premium,
      usagePremiumPence('0.06', adjusted.distance_in_metres, 'mile') / 100,
    );
    assert.notEqual(adjusted.usage_premium, old.usage_premium);
  });

  test('a policy priced per kilometre rates in kilometres', async () => {
    const policy = (await make.policy(t.app, acme, { pricing: { usage_rate: 0.03, usage_unit: 'km' } })).body;
    const r = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, { route: routeBetween(GLASGOW_CENTRAL, [55.95, -3.19], 200) }),
    );
    assert.equal(r.statusCode, 201, r.body);
    const j = r.json<JourneyBody>();
    assert.equal(j.distance_units, 'kms');
    assert.equal(j.usage_rate, 0.03);
    assert.ok(j.distance_in_metres > 60_000);
    assert.equal(j.usage_premium, usagePremiumPence('0.03', j.distance_in_metres, 'km') / 100);
  });

  test('cancelled: journeys from the cancellation → 409 POLICY_NOT_ACTIVE; earlier ones are still taken', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    await t.container.services.policies.cancel(acmeTenant, policy.policy_reference, {
      effective_date: unix('2025-09-05T00:00:00Z'),
      reason: 'sold the car',
    });
    const afterIt = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-09-05T00:00:00Z'),
        end_time: unix('2025-09-05T00:20:00Z'),
      }),
    );
    assert.equal(afterIt.statusCode, 409, afterIt.body);
    assert.equal(afterIt.json<Problem>().code, 'POLICY_NOT_ACTIVE');
    const lateUpload = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-09-04T23:00:00Z'),
        end_time: unix('2025-09-04T23:30:00Z'),
        provider_reference: 'late',
      }),
    );
    assert.equal(lateUpload.statusCode, 201, lateUpload.body);
    assert.equal(lateUpload.json<JourneyBody>().policy_version_reference, policy.policy_version_reference);
  });

  test('lapsed: journeys from the end of the term → 409; a journey stored before still answers 200', async () => {
    // Bought and driven before its term ended; the test's present is after the end.
    clock.set('2025-08-31T12:00:00Z');
    const policy = (
      await make.policy(t.app, acme, {
        policy: {
          auto_renew: false,
          start_date: unix('2024-09-01T00:00:00Z'),
          end_date: unix('2025-09-01T00:00:00Z'),
          inception_date: unix('2024-09-01T00:00:00Z'),
        },
      })
    ).body;
    const stored = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-08-30T10:00:00Z'),
        end_time: unix('2025-08-30T10:30:00Z'),
        provider_reference: 'before-lapse',
      }),
    );
    clock.set(NOW);
    assert.equal(stored.statusCode, 201, stored.body);
    const outside = await postJourney(acme.sandbox, journey(policy.policy_reference));
    assert.equal(outside.json<Problem>().code, 'JOURNEY_OUTSIDE_COVER', 'ended but not lapsed yet');

    const { lapsed } = await t.container.services.policies.endTerms(clock.now());
    assert.ok(lapsed >= 1);
    const afterLapse = await postJourney(acme.sandbox, journey(policy.policy_reference));
    assert.equal(afterLapse.statusCode, 409);
    assert.equal(afterLapse.json<Problem>().code, 'POLICY_NOT_ACTIVE');
    const late = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-08-31T10:00:00Z'),
        end_time: unix('2025-08-31T10:30:00Z'),
      }),
    );
    assert.equal(late.statusCode, 201, 'a late upload from inside the term');
    const repeat = await postJourney(
      acme.sandbox,
      journey(policy.policy_reference, {
        start_time: unix('2025-08-30T10:00:00Z'),
        end_time: unix('2025-08-30T10:30:00Z'),
        provider_reference: 'before-lapse',
      }),
    );
    assert.equal(repeat.statusCode, 200);
  });
});

describe('GET /journeys and GET /journeys/:journey_reference', () => {
  let policy: MadePolicy['body'];
  const refs: string[] = [];

  before(async () => {
    policy = (await make.policy(t.app, acme)).body;
    for (let day = 1; day <= 5; day++) {
      const start = unix(`2025-09-0${day}T08:00:00Z`);
      const r = await postJourney(
        acme.sandbox,
        journey(policy.policy_reference, { start_time: start, end_time: start + 900 }),
      );
      assert.equal(r.statusCode, 201, r.body);
      refs.push(r.json<JourneyBody>().journey_reference);
    }
  });

  test('pages by start with a cursor, within [from, to]', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: Record<string, string> = { policy_reference: policy.policy_reference, limit: '2' };
      if (cursor !== null) query['after'] = cursor;
      const r = await t.app.inject({ method: 'GET', url: '/journeys', headers: acme.sandbox, query });
      assert.equal(r.statusCode, 200, r.body);
      const page = r.json<{ journeys: JourneyBody[]; next_cursor: string | null }>();
      seen.push(...page.journeys.map((j) => j.journey_reference));
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null);
    assert.deepEqual(seen, refs);
    assert.equal(pages, 3);

    const window = await t.app.inject({
      method: 'GET',
      url: '/journeys',
      headers: acme.sandbox,
      query: {
        policy_reference: policy.policy_reference,
        from: String(unix('2025-09-02T08:00:00Z')),
        to: String(unix('2025-09-04T08:00:00Z')),
      },
    });
    assert.deepEqual(
      window.json<{ journeys: JourneyBody[] }>().journeys.map((j) => j.journey_reference),
      refs.slice(1, 4),
    );
  });

  test('reads one journey; full fields', async () => {
    const r = await t.app.inject({ method: 'GET', url: `/journeys/${refs[0]!}`, headers: acme.sandbox });
    assert.equal(r.statusCode, 200, r.body);
    const j = r.json<JourneyBody>();
    assert.equal(j.journey_reference, refs[0]);
    assert.equal(j.policy_reference, policy.policy_reference);
    assert.equal(j.start_name, 'Victoria');
  });

  test('validation: no policy_reference, a bad cursor, a bad limit → 422', async () => {
    for (const query of [
      {},
      { policy_reference: policy.policy_reference, after: 'not-a-cursor' },
      // Integers no Date holds, and a year before 1 that PostgreSQL cannot store, each with a real id.
      ...[8_640_000_000_000_001, -62_198_755_200_001, Number.MAX_SAFE_INTEGER].map((ms) => ({
        policy_reference: policy.policy_reference,
        after: Buffer.from(JSON.stringify([ms, '01a22bea-326e-7ed2-9892-9f729215f369'])).toString(
          'base64url',
        ),
      })),
      { policy_reference: policy.policy_reference, limit: '0' },
      { policy_reference: policy.policy_reference, from: 'yesterday' },
    ]) {
      const r = await t.app.inject({ method: 'GET', url: '/journeys', headers: acme.sandbox, query });
      assert.equal(r.statusCode, 422, `${JSON.stringify(query)}: ${r.body}`);
      if ('after' in query)
        assert.match(r.json<{ detail: string }>().detail, /not one this service gave out/);
    }
  });

  test('authorisation: another tenant or environment gets 404; no credentials 401', async () => {
    for (const headers of [other.sandbox, acme.production]) {
      const one = await t.app.inject({ method: 'GET', url: `/journeys/${refs[0]!}`, headers });
      assert.equal(one.statusCode, 404);
      const list = await t.app.inject({
        method: 'GET',
        url: '/journeys',
        headers,
        query: { policy_reference: policy.policy_reference },
      });
      assert.equal(list.statusCode, 404);
    }
    const notUuid = await t.app.inject({ method: 'GET', url: '/journeys/not-a-uuid', headers: acme.sandbox });
    assert.equal(notUuid.statusCode, 404);
    const anonymous = await t.app.inject({ method: 'GET', url: `/journeys/${refs[0]!}` });
    assert.equal(anonymous.statusCode, 401);
  });
});

describe('POST /journeys/:journey_reference/void', () => {
  test('marks it void with an audit record and an event; again changes nothing', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const created = (await postJourney(acme.sandbox, journey(policy.policy_reference))).json<JourneyBody>();
    clock.advance(60_000);
    const r = await t.app.inject({
      method: 'POST',
      url: `/journeys/${created.journey_reference}/void`,
      headers: { ...acme.sandbox, 'x-request-id': 'void-request-1' },
      payload: { reason: 'duplicate from the phone app' },
    });
    assert.equal(r.statusCode, 200, r.body);
    const j = r.json<JourneyBody>();
    assert.equal(j.is_void, true);
    assert.equal(j.void_reason, 'duplicate from the phone app');
    assert.equal(j['voided_at'], clock.now().toISOString());
    assert.equal(j.usage_premium, created.usage_premium, 'the premium stays on record');

    const audit = await t.container.database.db
      .selectFrom('journey_voids')
      .selectAll()
      .where('journey_id', '=', j.journey_reference)
      .execute();
    assert.equal(audit.length, 1);
    assert.equal(audit[0]!.reason, 'duplicate from the phone app');
    assert.equal(audit[0]!.request_id, 'void-request-1');
    assert.equal(audit[0]!.billed_statement_version_id, null);

    const again = await t.app.inject({
      method: 'POST',
      url: `/journeys/${created.journey_reference}/void`,
      headers: acme.sandbox,
      payload: { reason: 'another reason' },
    });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json<JourneyBody>().void_reason, 'duplicate from the phone app');
    const events = (await eventsOfType('journey.voided')).filter(
      (e) => (e.data as { journey_reference: string }).journey_reference === j.journey_reference,
    );
    assert.equal(events.length, 1);
    assert.equal((events[0]!.data as { billed: boolean }).billed, false);

    const listed = await t.app.inject({
      method: 'GET',
      url: '/journeys',
      headers: acme.sandbox,
      query: { policy_reference: policy.policy_reference },
    });
    assert.equal(listed.json<{ journeys: JourneyBody[] }>().journeys[0]!.is_void, true);
  });

  test('a journey already billed records that a credit is owed', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const created = (await postJourney(acme.sandbox, journey(policy.policy_reference))).json<JourneyBody>();
    const statement = await t.app.inject({
      method: 'POST',
      url: '/statements',
      headers: acme.sandbox,
      payload: { policy_reference: policy.policy_reference },
    });
    assert.equal(statement.statusCode, 201, statement.body);
    const billedBy = statement.json<{ policy_version_reference: string }>().policy_version_reference;
    const r = await t.app.inject({
      method: 'POST',
      url: `/journeys/${created.journey_reference}/void`,
      headers: acme.sandbox,
      payload: { reason: 'the car was stolen' },
    });
    assert.equal(r.statusCode, 200);
    assert.equal(r.json<JourneyBody>().statement_version_reference, billedBy);
    const event = (await eventsOfType('journey.voided')).find(
      (e) => (e.data as { journey_reference: string }).journey_reference === created.journey_reference,
    );
    assert.deepEqual(
      {
        billed: (event?.data as { billed: boolean }).billed,
        statement: (event?.data as { statement_version_reference: string }).statement_version_reference,
      },
      { billed: true, statement: billedBy },
    );
    const audit = await t.container.database.db
      .selectFrom('journey_voids')
      .selectAll()
      .where('journey_id', '=', created.journey_reference)
      .executeTakeFirstOrThrow();
    assert.equal(audit.billed_statement_version_id, billedBy);
    assert.equal(audit.credited_statement_version_id, null);
    assert.equal(audit.usage_premium_pence, Math.round(created.usage_premium * 100));
  });

  test('validation 422; another tenant 404; unknown 404', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const created = (await postJourney(acme.sandbox, journey(policy.policy_reference))).json<JourneyBody>();
    const url = `/journeys/${created.journey_reference}/void`;
    for (const payload of [{}, { reason: '' }, { reason: 'x', extra: true }]) {
      const r = await t.app.inject({ method: 'POST', url, headers: acme.sandbox, payload });
      assert.equal(r.statusCode, 422, JSON.stringify(payload));
    }
    const elsewhere = await t.app.inject({
      method: 'POST',
      url,
      headers: other.sandbox,
      payload: { reason: 'not mine' },
    });
    assert.equal(elsewhere.statusCode, 404);
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/journeys/00000000-0000-4000-8000-000000000000/void',
      headers: acme.sandbox,
      payload: { reason: 'x' },
    });
    assert.equal(unknown.statusCode, 404);
    const still = await t.app.inject({
      method: 'GET',
      url: `/journeys/${created.journey_reference}`,
      headers: acme.sandbox,
    });
    assert.equal(still.json<JourneyBody>().is_void, false);
  });
});

describe('POST /journeys/batch', () => {
  test('a result per item: stored, already stored, invalid, overlapping, unknown policy', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    const day = (hour: number, minutes = 20) => ({
      start_time: unix(`2025-09-12T${String(hour).padStart(2, '0')}:00:00Z`),
      end_time: unix(`2025-09-12T${String(hour).padStart(2, '0')}:${String(minutes).padStart(2, '0')}:00Z`),
    });
    const items = [
      journey(policy.policy_reference, { ...day(7), provider_reference: 'b-1' }),
      journey(policy.policy_reference, { ...day(8), provider_reference: 'b-2' }),
      journey(policy.policy_reference, { ...day(7), provider_reference: 'b-1' }), // repeat of item 0
      journey(policy.policy_reference, { ...day(8, 10) }), // overlaps item 1
      { ...journey(policy.policy_reference, day(9)), start_time: 'nine o’clock' }, // invalid
      journey('no-such-policy', day(10)),
      journey(policy.policy_reference, { ...day(11), route: 'not a polyline' }),
      journey(policy.policy_reference, day(12)),
    ];
    const r = await t.app.inject({
      method: 'POST',
      url: '/journeys/batch',
      headers: acme.sandbox,
      payload: { journeys: items },
    });
    assert.equal(r.statusCode, 200, r.body);
    const result = r.json<{
      results: Array<{ index: number; status: number; journey?: JourneyBody; error?: Problem }>;
      created: number;
      existing: number;
      rejected: number;
    }>();
    assert.deepEqual(
      result.results.map((x) => [x.index, x.status]),
      [
        [0, 201],
        [1, 201],
        [2, 200],
        [3, 409],
        [4, 422],
        [5, 404],
        [6, 422],
        [7, 201],
      ],
    );
    assert.deepEqual([result.created, result.existing, result.rejected], [3, 1, 4]);
    assert.equal(
      result.results[2]!.journey?.journey_reference,
      result.results[0]!.journey?.journey_reference,
    );
    assert.equal(result.results[0]!.journey?.route, undefined, 'no route echoed');
    assert.equal(result.results[0]!.journey?.start_name, 'Victoria');
    assert.equal(result.results[3]!.error?.code, 'JOURNEY_OVERLAP');
    assert.equal(result.results[4]!.error?.code, 'VALIDATION_FAILED');
    const invalidItem = result.results[4]!.error;
    assert.ok(invalidItem);
    assert.deepEqual(
      (invalidItem.errors ?? []).map((e) => e.path),
      ['/body/journeys/4/start_time'],
    );
    assert.equal(result.results[6]!.error?.errors?.[0]?.path, '/body/route');

    const stored = await t.app.inject({
      method: 'GET',
      url: '/journeys',
      headers: acme.sandbox,
      query: { policy_reference: policy.policy_reference },
    });
    assert.equal(stored.json<{ journeys: JourneyBody[] }>().journeys.length, 3);
  });

  test('validation: empty, more than 1,000, not a list → 422; another tenant’s policy → 404 per item', async () => {
    const { body: policy } = await make.policy(t.app, acme);
    for (const payload of [
      { journeys: [] },
      { journeys: Array.from({ length: 1001 }, () => ({})) },
      { journeys: {} },
      {},
    ]) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/journeys/batch',
        headers: acme.sandbox,
        payload,
      });
      assert.equal(r.statusCode, 422);
    }
    const elsewhere = await t.app.inject({
      method: 'POST',
      url: '/journeys/batch',
      headers: other.sandbox,
      payload: { journeys: [journey(policy.policy_reference)] },
    });
    assert.equal(elsewhere.statusCode, 200);
    assert.equal(elsewhere.json<{ results: Array<{ status: number }> }>().results[0]!.status, 404);
    const anonymous = await t.app.inject({
      method: 'POST',
      url: '/journeys/batch',
      payload: { journeys: [journey(policy.policy_reference)] },
    });
    assert.equal(anonymous.statusCode, 401);
  });
});

describe('policyholder reads', () => {
  // Until the login module provides the token check, a stand-in maps a bearer token to a user. What is
  // tested is the journeys side: the service's policyholder scoping and the routes' hook point.
  let mini: FastifyInstance;
  const tokens = new Map<string, { tenant: Tenant; userId: string }>();
  let mine: MadePolicy['body'];
  let theirs: MadePolicy['body'];
  let myJourney: string;
  let theirJourney: string;

  const userIdOf = async (policyReference: string) =>
    (
      await t.container.database.db
        .selectFrom('policies')
        .select('user_id')
        .where('policy_reference', '=', policyReference)
        .executeTakeFirstOrThrow()
    ).user_id;

  before(async () => {
    mine = (await make.policy(t.app, acme)).body;
    theirs = (await make.policy(t.app, acme)).body;
    myJourney = (await postJourney(acme.sandbox, journey(mine.policy_reference))).json<JourneyBody>()
      .journey_reference;
    theirJourney = (await postJourney(acme.sandbox, journey(theirs.policy_reference))).json<JourneyBody>()
      .journey_reference;
    tokens.set('token-mine', { tenant: acmeTenant, userId: await userIdOf(mine.policy_reference) });
    tokens.set('token-theirs', { tenant: acmeTenant, userId: await userIdOf(theirs.policy_reference) });

    mini = Fastify().withTypeProvider<TypeBoxTypeProvider>();
    installProblemHandling(mini);
    const who = new WeakMap<object, { tenant: Tenant; userId: string }>();
    await mini.register(
      journeyRoutes({
        journeys: t.container.services.journeys,
        clientAuth: createClientAuth(t.container.services.companies, false),
        policyholderAuth: {
          authenticate: async (request) => {
            const found = tokens.get((request.headers.authorization ?? '').replace(/^Bearer /, ''));
            if (found === undefined) throw new AppError('INVALID_TOKEN', 'The access token is not valid');
            who.set(request, found);
          },
          policyholderOf: (request) => {
            const found = who.get(request);
            if (found === undefined) throw new AppError('INVALID_TOKEN', 'not authenticated');
            return found;
          },
        },
      }),
    );
    await mini.ready();
  });
  after(async () => {
    await mini.close();
  });

  test('a policyholder sees their own journeys and gets 404 for another’s', async () => {
    const auth = { authorization: 'Bearer token-mine' };
    const list = await mini.inject({ method: 'GET', url: '/journeys', headers: auth });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(
      list.json<{ journeys: JourneyBody[] }>().journeys.map((j) => j.journey_reference),
      [myJourney],
    );
    const one = await mini.inject({ method: 'GET', url: `/journeys/${myJourney}`, headers: auth });
    assert.equal(one.statusCode, 200);
    const narrowed = await mini.inject({
      method: 'GET',
      url: '/journeys',
      headers: auth,
      query: { policy_reference: mine.policy_reference },
    });
    assert.equal(narrowed.json<{ journeys: JourneyBody[] }>().journeys.length, 1);

    const another = await mini.inject({ method: 'GET', url: `/journeys/${theirJourney}`, headers: auth });
    assert.equal(another.statusCode, 404);
    const anotherPolicy = await mini.inject({
      method: 'GET',
      url: '/journeys',
      headers: auth,
      query: { policy_reference: theirs.policy_reference },
    });
    assert.equal(anotherPolicy.statusCode, 404);
    const badToken = await mini.inject({
      method: 'GET',
      url: '/journeys',
      headers: { authorization: 'Bearer nope' },
    });
    assert.equal(badToken.statusCode, 401);
  });

  test('client credentials still work on the same routes; a policyholder cannot write', async () => {
    const withClientId = await mini.inject({
      method: 'GET',
      url: `/journeys/${myJourney}`,
      headers: { client_id: acme.sandbox.client_id, authorization: 'Bearer token-mine' },
    });
    assert.equal(withClientId.statusCode, 200, 'an app sends its public client_id too: still a policyholder');
    const asClient = await mini.inject({
      method: 'GET',
      url: `/journeys/${theirJourney}`,
      headers: { ...acme.sandbox, authorization: 'Bearer token-mine' },
    });
    assert.equal(asClient.statusCode, 200, 'client headers win over a stray Authorization');
    const write = await mini.inject({
      method: 'POST',
      url: '/journeys',
      headers: { authorization: 'Bearer token-mine' },
      payload: journey(mine.policy_reference),
    });
    assert.equal(write.statusCode, 401);
  });

  test('the service scopes by user', async () => {
    const { journeys } = t.container.services;
    const theirUser = tokens.get('token-theirs')!.userId;
    const listed = await journeys.listForPolicyholder(acmeTenant, theirUser, {});
    assert.deepEqual(
      listed.journeys.map((j) => j.journey_reference),
      [theirJourney],
    );
    await assert.rejects(journeys.getForPolicyholder(acmeTenant, theirUser, myJourney), /journey not found/);
    const nobody = await journeys.listForPolicyholder(acmeTenant, '00000000-0000-4000-8000-000000000000', {});
    assert.deepEqual(nobody.journeys, []);
  });
});

test('the OpenAPI document describes the journey routes', async () => {
  const r = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(r.statusCode, 200);
  const paths = Object.keys(r.json<{ paths: Record<string, unknown> }>().paths);
  for (const path of [
    '/journeys',
    '/journeys/batch',
    '/journeys/{journey_reference}',
    '/journeys/{journey_reference}/void',
  ])
    assert.ok(paths.includes(path), path);
});
