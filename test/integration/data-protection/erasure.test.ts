import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { postcodeDistrictSql } from '../../../src/modules/data-protection/erasure-repository.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { withAuditActor } from '../../../src/platform/db/audit-context.ts';
import { encodePolyline } from '../../../src/platform/geo/index.ts';
import { postcodeDistrict } from '../../../src/platform/postcodes.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';

// POST /admin/policyholders/:user_reference/erase. Zephyrine (two policies: one paid by card, adjusted
// by staff and billed, one cancelled; journeys, a device with positions, a staff credit naming her, a
// login) is erased by force; then no text, varchar, json or jsonb column of any table of any schema
// holds any of her original values, Bob of the same company is untouched, billing still works and the
// audit keeps the request. Wren, whose only policy ended, is refused until six years have passed.

// The example policy's term: 2025-06-01 to 2026-05-31 (London), billing day 1.
const clock = fixedClock('2025-07-20T12:00:00Z');
const unix = (iso: string) => Date.parse(iso) / 1000;
type Company = Awaited<ReturnType<typeof createCompany>>;
type Json = Record<string, unknown>;

let t: TestApp;
let acme: Company;
let ops: SignedInStaff;
let adminStaff: SignedInStaff;

const ZEPH = {
  email: 'zephyrine.quillfeather@example.com',
  firstNames: 'Zephyrine',
  lastNames: 'Quillfeather',
  phone: '+447700900777',
  line1: '17 Larkspur Mews',
  line2: 'Hollowmere Lane',
  line3: 'Widcombe Vale',
  postcode: 'BA2 4QT',
  dob: '1979-04-12',
  licence: '1998-06-01',
  residency: '1979-04-13',
  vin: 'SALZZZ1KZAW777777',
  driverFirst: 'Orrinfeld',
  driverEmail: 'orrinfeld.q@example.com',
  driverPhone: '+447700900778',
  driverDob: '1981-09-23',
  driverLicence: '2001-03-04',
};
// Her journeys' routes: points no one else drives through.
const ZEPH_ROUTES = [
  [51.3811, -2.359, 51.3822, -2.3611, 51.3844, -2.3655],
  [51.3755, -2.3311, 51.3777, -2.3377, 51.3799, -2.3422, 51.3801, -2.3433],
].map((points) => encodePolyline(points, 5));
const BOB_ROUTE = encodePolyline([51.5074, -0.1278, 51.5101, -0.134, 51.5155, -0.1419], 5);

function zephInput(reg: string) {
  return {
    policy: {
      address: {
        line_1: ZEPH.line1,
        line_2: ZEPH.line2,
        line_3: ZEPH.line3,
        city: 'Bath',
        county: 'Somerset',
        postcode: ZEPH.postcode,
      },
    },
    proposer: {
      email: ZEPH.email,
      first_names: ZEPH.firstNames,
      last_names: ZEPH.lastNames,
      phone_number: ZEPH.phone,
      dob: ZEPH.dob,
      licence_issued_date: ZEPH.licence,
      residency_date: ZEPH.residency,
    },
    additional_drivers: [
      {
        first_names: ZEPH.driverFirst,
        last_names: ZEPH.lastNames,
        email: ZEPH.driverEmail,
        phone_number: ZEPH.driverPhone,
        dob: ZEPH.driverDob,
        licence_issued_date: ZEPH.driverLicence,
        residency_date: ZEPH.driverDob,
      },
    ],
    vehicle: { reg, vin: ZEPH.vin, overnight_postcode: ZEPH.postcode },
  };
}

async function inject(method: 'GET' | 'POST' | 'DELETE', url: string, headers: Json, payload?: object) {
  return t.app.inject({
    method,
    url,
    headers: headers as Record<string, string>,
    ...(payload === undefined ? {} : { payload }),
  });
}

async function ok(method: 'GET' | 'POST' | 'DELETE', url: string, headers: Json, payload?: object) {
  const r = await inject(method, url, headers, payload);
  assert.ok(r.statusCode >= 200 && r.statusCode < 300, `${method} ${url}: ${String(r.statusCode)} ${r.body}`);
  return r;
}

async function userOf(reference: string): Promise<{ id: string; user_reference: string }> {
  return t.container.database.db
    .selectFrom('policies as p')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .select(['u.id', 'u.user_reference'])
    .where('p.policy_reference', '=', reference)
    .executeTakeFirstOrThrow();
}

/** The welcome email's temporary password, a new password, a login; answers the login's details. */
async function signIn(company: Company, email: string) {
  const welcome =
    (await t.container.services.notifications.emailsTo(email)).find((e) => e.template === 'welcome')?.text ??
    '';
  const line = (label: string) => new RegExp(`^${label}: (\\S+)\\r?$`, 'm').exec(welcome)?.[1] ?? '';
  const username = line('Username');
  const headers = { client_id: company.client_id, environment: 'sandbox' };
  const token = async (payload: Json) => (await ok('POST', '/auth/token', headers, payload)).json<Json>();
  const challenge = await token({
    type: 'USER_PASSWORD_AUTH',
    username,
    password: line('Temporary password'),
  });
  const password = 'Juniper-Harbour-Lantern-42';
  await token({
    type: 'NEW_PASSWORD_REQUIRED',
    username,
    session: challenge['session'],
    new_password: password,
  });
  const done = await token({ type: 'USER_PASSWORD_AUTH', username, password });
  await token({ type: 'FORGOT_PASSWORD', username });
  return {
    username,
    password,
    headers,
    accessToken: String(done['access_token']),
    refreshToken: String(done['refresh_token']),
  };
}

/** Half an hour along `route` (an encoded polyline) from `startIso`. */
const journey = (company: Company, reference: string, startIso: string, route: string) =>
  make.journey(t.app, company, reference, startIso, { route, durationSeconds: 1800 });

const erase = (userReference: string, body: object, headers: Json = t.adminHeaders) =>
  inject('POST', `/admin/policyholders/${userReference}/erase`, headers, body);

/**
 * Every text-like column (text, varchar, char, json, jsonb, arrays, enums) of every table of every
 * schema, cast to text, searched case-insensitively for each value: the places it was found.
 */
async function findAnywhere(values: readonly string[]): Promise<string[]> {
  const db = t.container.database.db;
  const columns = await sql<{ table_schema: string; table_name: string; column_name: string }>`
    select c.table_schema, c.table_name, c.column_name
    from information_schema.columns c
    join information_schema.tables tb on tb.table_schema = c.table_schema and tb.table_name = c.table_name
    where tb.table_type = 'BASE TABLE'
      and c.table_schema not in ('pg_catalog', 'information_schema')
      and c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'USER-DEFINED')
    order by 1, 2, 3`.execute(db);
  assert.ok(columns.rows.length > 100, 'the scan sees the whole database');
  const patterns = values.map((v) => `%${v.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  const found: string[] = [];
  for (const { table_schema: schema, table_name: table, column_name: column } of columns.rows) {
    const hits = await sql<{ value: string }>`
      select ${sql.ref(column)}::text as value from ${sql.table(`${schema}.${table}`)}
      where ${sql.ref(column)}::text ilike any(${patterns}::text[]) limit 3`.execute(db);
    for (const hit of hits.rows) {
      const which = values.filter((v) => hit.value.toLowerCase().includes(v.toLowerCase()));
      found.push(`${schema}.${table}.${column}: ${which.join(', ')}`);
    }
  }
  return found;
}

let zeph: {
  userReference: string;
  userId: string;
  policies: string[];
  login: Awaited<ReturnType<typeof signIn>>;
};
let bob: { userReference: string; policy: string };
let zephValues: string[];
let bobValues: string[];
let bobBefore: Json;
let forced: Json;

before(async () => {
  t = await createTestApp({ overrides: { clock }, listen: true });
  acme = await createCompany(t.app, 'Acme Erasure');
  ops = await signInStaff(t, 'olga.ops@insurer.example', 'operations');
  adminStaff = await signInStaff(t, 'ada.admin@insurer.example', 'admin');

  // Zephyrine: a card-paid policy, a second that joins her account (then cancelled), a staff adjustment.
  const { reference: z1 } = await make.cardPaidPolicy(t, acme, {
    ...zephInput('ZE11 PHY'),
    pricing: { upfront_premium: 120 },
  });
  const login = await signIn(acme, ZEPH.email);
  const { reference: z2 } = await make.policy(t.app, acme, zephInput('ZE22 PHY'));
  // A staff member's adjustment: the audit triggers copy the new version's whole snapshot.
  const staffActor = {
    actor: 'staff:olga.ops@insurer.example',
    staff_id: ops.staffId,
    role: 'operations',
    action: 'policies.submit',
    resource: `policy_reference:${z1}`,
    company_id: null,
    environment: 'sandbox',
    request_id: 'req-staff-mta',
    source_address: '127.0.0.1',
    at: clock.now().toISOString(),
  };
  await withAuditActor(staffActor, () =>
    make.adjustment(
      t.app,
      acme,
      { reference: z1, input: examplePolicyInput(zephInput('ZE33 PHY')) },
      { effective_date: unix('2025-07-20T12:00:00Z') },
    ),
  );
  await journey(acme, z1, '2025-06-10T08:00:00Z', ZEPH_ROUTES[0] ?? '');
  await journey(acme, z1, '2025-06-12T08:00:00Z', ZEPH_ROUTES[1] ?? '');
  await journey(acme, z2, '2025-06-14T08:00:00Z', ZEPH_ROUTES[1] ?? '');
  await make.device(t.app, acme, z1, { deviceId: 'zeph-car', vin: ZEPH.vin });
  clock.set('2025-07-20T13:00:00Z');
  await ok('POST', '/telematics/positions', acme.sandbox, {
    device_id: 'zeph-car',
    positions: Array.from({ length: 50 }, (_, i) => ({
      time: unix('2025-07-20T12:10:00Z') + i,
      lat: 51.38 + i * 0.0001,
      lon: -2.36,
      speed_kmh: 36,
      ignition: true,
    })),
  });
  await make.statement(t.app, acme, z1, '2025-06-30T22:59:59Z');
  await ok('POST', '/admin/credits', ops.headers, {
    company_reference: acme.company_reference,
    environment: 'sandbox',
    policy_reference: z1,
    amount: 5,
    reason: `goodwill for ${ZEPH.firstNames} ${ZEPH.lastNames}, ${ZEPH.phone}`,
  });
  await ok('DELETE', `/policys/${z2}`, acme.sandbox, {
    effective_date: unix('2025-07-20T13:00:00Z'),
    reason: `${ZEPH.firstNames} sold the car`,
  });
  // A payment intent for a quote she did not take: the processor's customer has her name and email.
  await ok('POST', '/payments', acme.sandbox, {
    type: 'CREATE_PAYMENT_INTENT',
    amount: 4200,
    product_reference: 'ppm-motor',
    email: ZEPH.email,
    name: `${ZEPH.firstNames} ${ZEPH.lastNames}`,
  });
  const user = await userOf(z1);
  zeph = { userReference: user.user_reference, userId: user.id, policies: [z1, z2], login };

  // Bob, of the same company: his data must stay as it was.
  const { reference: b1 } = await make.policy(t.app, acme, {
    proposer: { email: 'bob.tanager@example.com', first_names: 'Bob', last_names: 'Tanager' },
  });
  await journey(acme, b1, '2025-06-11T08:00:00Z', BOB_ROUTE);
  await make.statement(t.app, acme, b1, '2025-06-30T22:59:59Z');
  await ok('POST', '/admin/credits', ops.headers, {
    company_reference: acme.company_reference,
    environment: 'sandbox',
    policy_reference: b1,
    amount: 3,
    reason: 'goodwill for Bob Tanager',
  });
  bob = { userReference: (await userOf(b1)).user_reference, policy: b1 };

  // Her stored values (as the service normalised them) beside what was sent.
  const stored = (await ok('GET', `/policys/${z1}`, acme.sandbox)).json<Json>();
  const version = (stored['versions'] as Json[])[0] ?? {};
  zephValues = [
    ...new Set([
      ZEPH.email,
      ZEPH.firstNames,
      ZEPH.lastNames,
      ZEPH.phone,
      ZEPH.line1,
      ZEPH.line2,
      ZEPH.line3,
      ZEPH.postcode,
      ZEPH.postcode.replace(' ', ''),
      ZEPH.dob,
      ZEPH.licence,
      ZEPH.residency,
      ZEPH.vin,
      ZEPH.driverFirst,
      ZEPH.driverEmail,
      ZEPH.driverPhone,
      ZEPH.driverDob,
      ZEPH.driverLicence,
      login.username,
      String(version['email']),
      ...ZEPH_ROUTES,
    ]),
  ];
  bobValues = [
    'bob.tanager@example.com',
    'Tanager',
    BOB_ROUTE,
    'EC1A 1BB',
    'WVWZZZAUZHW123456',
    'Station Road',
  ];
  bobBefore = (await ok('GET', `/policys/${b1}`, acme.sandbox)).json<Json>();
});
after(() => t.close());

describe('POST /admin/policyholders/:user_reference/erase', () => {
  test('before the erasure her values are found, so the scan can see them', async () => {
    const found = await findAnywhere(zephValues);
    for (const table of [
      'public.users.',
      'public.policy_versions.',
      'public.policies.search_text',
      'public.journeys.route',
      'public.audit_records.',
      'public.outbox_emails.',
      'public.events.data',
      'public.policy_credits.reason',
      'public.devices.vin',
      'public.stripe_sandbox_objects.data',
    ])
      assert.ok(
        found.some((f) => f.startsWith(table)),
        `${table} holds her data before: ${found.join('; ')}`,
      );
  });

  test('validation, authorisation, unknown account', async () => {
    assert.equal((await erase(zeph.userReference, { reason: '' })).statusCode, 422);
    assert.equal((await erase(zeph.userReference, { reason: 'x', extra: 1 })).statusCode, 422);
    assert.equal((await erase(zeph.userReference, { reason: 'x'.repeat(501) })).statusCode, 422);
    assert.equal((await erase(zeph.userReference, { reason: 'x' }, {})).statusCode, 401);
    const denied = await erase(zeph.userReference, { reason: 'x', force: true }, ops.headers);
    assert.equal(denied.statusCode, 403, denied.body);
    const unknown = await erase('U-NOBODY', { reason: 'x', force: true });
    assert.equal(unknown.statusCode, 404, unknown.body);
    assert.match(String(unknown.headers['content-type']), /application\/problem\+json/);
  });

  test('without force, while a policy runs: 409 saying from which date it is allowed', async () => {
    const refused = await erase(zeph.userReference, { reason: 'asked by email' });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.match(String(refused.headers['content-type']), /application\/problem\+json/);
    // Her longest policy ends 2026-05-31 23:59:59 London; six years (2,190 days) after.
    assert.match(refused.json<{ detail: string }>().detail, /from 2032-05-29/);
    const still = await t.container.database.db
      .selectFrom('users')
      .select(['email', 'active'])
      .where('id', '=', zeph.userId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(still, { email: ZEPH.email, active: true });
  });

  test('with force (a staff admin): erased in one go, the answer says what', async () => {
    // Signed in up to the erasure, her access token is refused from the moment it commits.
    const done = await ok('POST', '/auth/token', zeph.login.headers, {
      type: 'USER_PASSWORD_AUTH',
      username: zeph.login.username,
      password: zeph.login.password,
    });
    const bearer = {
      ...zeph.login.headers,
      authorization: `Bearer ${String(done.json<Json>()['access_token'])}`,
    };
    assert.equal((await inject('GET', '/policys/details', bearer)).statusCode, 200);
    const r = await erase(
      zeph.userReference,
      { reason: 'Court order 2025/77: erase now', force: true },
      adminStaff.headers,
    );
    assert.equal(r.statusCode, 200, r.body);
    forced = r.json<Json>();
    assert.equal(forced['user_reference'], zeph.userReference);
    assert.equal(forced['forced'], true);
    assert.deepEqual([...(forced['policy_references'] as string[])].sort(), [...zeph.policies].sort());
    assert.ok(Number(forced['journeys_erased']) >= 3);
    assert.equal(forced['positions_deleted'], 50);
    assert.ok(Number(forced['emails_erased']) >= 2);
    assert.ok(Number(forced['audit_records_scrubbed']) >= 2);
    const again = await erase(zeph.userReference, { reason: 'again', force: true });
    assert.equal(again.statusCode, 409, 'erased once only');
    assert.match(again.json<{ detail: string }>().detail, /already erased/);
    const signedIn = await inject('GET', '/policys/details', bearer);
    assert.equal(signedIn.statusCode, 401, signedIn.body);
  });

  test('none of her values is left in any column of any table; Bob’s all are', async () => {
    assert.deepEqual(await findAnywhere(zephValues), []);
    const bobFound = await findAnywhere(bobValues);
    for (const value of bobValues)
      assert.ok(
        bobFound.some((f) => f.includes(value)),
        `${value} of Bob's is still there`,
      );
    assert.deepEqual((await ok('GET', `/policys/${bob.policy}`, acme.sandbox)).json<Json>(), bobBefore);
  });

  test('her policies read with pseudonyms, the district and the financial terms', async () => {
    const policy = (await ok('GET', `/policys/${zeph.policies[0] ?? ''}`, acme.sandbox)).json<Json>();
    const versions = policy['versions'] as Json[];
    assert.deepEqual(
      versions.map((v) => v['version_type']),
      ['nb', 'mta', 'st'],
    );
    for (const version of versions.filter((v) => v['version_type'] !== 'st')) {
      assert.equal(version['proposer_first_names'], 'Erased');
      assert.equal(version['proposer_last_names'], 'Erased');
      assert.equal(version['address_postcode'], 'BA2');
      assert.equal(version['email'], `erased-${zeph.userReference.toLowerCase()}@erased.invalid`);
    }
    assert.equal(versions[0]?.['upfront_premium'], 120, 'pricing stays');
    const journeys = await t.container.database.db
      .selectFrom('journeys')
      .select([
        'route',
        'point_count',
        'start_lat',
        'start_name',
        'start_postcode',
        'distance_metres',
        'usage_premium_pence',
      ])
      .where('policy_reference', 'in', zeph.policies)
      .execute();
    assert.ok(journeys.length >= 3);
    for (const j of journeys) {
      assert.equal(j.route, '');
      assert.equal(j.point_count, 0);
      assert.equal(j.start_lat, null);
      assert.equal(j.start_name, null);
      assert.ok(j.start_postcode === null || !j.start_postcode.includes(' '), String(j.start_postcode));
      assert.ok(j.distance_metres > 0, 'the distance stays');
    }
    const listed = await ok('GET', `/journeys?policy_reference=${zeph.policies[0] ?? ''}`, acme.sandbox);
    assert.ok(listed.json<{ journeys?: unknown[] }>().journeys?.length !== 0, listed.body);
    const statements = await ok(
      'GET',
      `/statements?policy_reference=${zeph.policies[0] ?? ''}`,
      acme.sandbox,
    );
    assert.equal(statements.statusCode, 200);
    assert.deepEqual(await t.container.services.notifications.emailsTo(ZEPH.email), []);
  });

  test('she can no longer sign in: password and refresh token refused, sessions and reset codes gone', async () => {
    const password = await inject('POST', '/auth/token', zeph.login.headers, {
      type: 'USER_PASSWORD_AUTH',
      username: zeph.login.username,
      password: zeph.login.password,
    });
    assert.equal(password.statusCode, 401, password.body);
    const pseudonym = await inject('POST', '/auth/token', zeph.login.headers, {
      type: 'USER_PASSWORD_AUTH',
      username: `erased-${zeph.userReference.toLowerCase()}`,
      password: zeph.login.password,
    });
    assert.equal(pseudonym.statusCode, 401, pseudonym.body);
    const refresh = await inject('POST', '/auth/token', zeph.login.headers, {
      type: 'REFRESH_TOKEN',
      refresh_token: zeph.login.refreshToken,
    });
    assert.equal(refresh.statusCode, 401, refresh.body);
    const counts = await sql<{ n: number }>`
      select (select count(*) from auth_login_sessions where user_id = ${zeph.userId})
        + (select count(*) from auth_refresh_tokens where user_id = ${zeph.userId})
        + (select count(*) from auth_reset_codes where user_id = ${zeph.userId}) as n`.execute(
      t.container.database.db,
    );
    assert.equal(Number(counts.rows[0]?.n), 0);
  });

  test('account.erased is recorded, naming no one', async () => {
    const events = await t.container.database.db
      .selectFrom('events')
      .select(['data'])
      .where('type', '=', 'account.erased')
      .execute();
    assert.equal(events.length, 1);
    const data = (typeof events[0]?.data === 'string' ? JSON.parse(events[0].data) : events[0]?.data) as Json;
    assert.deepEqual(Object.keys(data).sort(), [
      'claims_kept',
      'documents_kept',
      'erased_at',
      'policy_references',
      'user_reference',
    ]);
    assert.deepEqual(data['documents_kept'], [], 'no document was issued: the worker did not run');
    assert.deepEqual(data['claims_kept'], [], 'no claim was made');
    assert.equal(data['user_reference'], zeph.userReference);
    assert.equal(data['erased_at'], forced['erased_at']);
  });

  test('the audit keeps the request (and copied none of her rows); it stays append-only', async () => {
    const db = t.container.database.db;
    const requests = await db
      .selectFrom('audit_records')
      .selectAll()
      .where('action', '=', 'policyholders.erase')
      .where('outcome', '=', 'ok')
      .execute();
    const request = requests.find(
      (r) => r.resource === `user_reference:${zeph.userReference}` && r.actor.startsWith('staff:'),
    );
    assert.ok(request, JSON.stringify(requests));
    assert.equal(request.actor, 'staff:ada.admin@insurer.example');
    assert.match(JSON.stringify(request.after), /Court order 2025\/77/);
    const sameRequest = await db
      .selectFrom('audit_records')
      .select(['table_name'])
      .where('request_id', '=', request.request_id)
      .execute();
    assert.deepEqual(sameRequest, [{ table_name: null }], 'one record: the request, no row copies');
    const staffMta = await db
      .selectFrom('audit_records')
      .select(['after'])
      .where('request_id', '=', 'req-staff-mta')
      .where('table_name', '=', 'policy_versions')
      .execute();
    assert.ok(staffMta.length >= 1, 'the staff adjustment is still in the trail');
    assert.match(JSON.stringify(staffMta[0]?.after), /Erased|\[erased\]/);
    await assert.rejects(
      sql`update audit_records set after = '{}'::jsonb where id = ${request.id}`.execute(db),
      /append-only/,
    );
    await assert.rejects(sql`delete from audit_records where id = ${request.id}`.execute(db), /append-only/);
    // The erasure's own setting is local to its transaction: outside it an update of before/after is refused too.
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await sql`select set_config('milepost.erasure', 'on', true)`.execute(trx);
        await sql`update audit_records set actor = 'someone else' where id = ${request.id}`.execute(trx);
      }),
      /append-only/,
    );
  });

  test('billing and the policy API still work after the erasure', async () => {
    clock.set('2025-08-02T09:00:00Z');
    const run = await ok('POST', '/admin/billing-runs', t.adminHeaders, { date: '2025-08-01' });
    const counts = run.json<{ billed: number; failed: number; failures: unknown[] }>();
    assert.equal(counts.failed, 0, JSON.stringify(counts.failures));
    assert.ok(counts.billed >= 2, JSON.stringify(counts));
    const statements = (
      await ok('GET', `/statements?policy_reference=${zeph.policies[0] ?? ''}`, acme.sandbox)
    ).json<{ statements?: Json[] } | Json[]>();
    assert.ok(JSON.stringify(statements).includes('2025-07-31'), JSON.stringify(statements));
    await ok('GET', `/policys/${zeph.policies[1] ?? ''}`, acme.sandbox);
    // Her rows of the month's bordereau remain, with the pseudonym and the district.
    const bordereau = await ok(
      'GET',
      `/admin/reports/bordereau?company_reference=${acme.company_reference}&environment=sandbox&month=2025-07&format=json`,
      t.adminHeaders,
    );
    assert.ok(bordereau.body.includes(zeph.policies[0] ?? '-'), 'her policy is in the bordereau');
    assert.ok(bordereau.body.includes('"Erased"') && bordereau.body.includes('"BA2"'), bordereau.body);
    assert.ok(!bordereau.body.includes(ZEPH.lastNames));
    // Still no personal value of hers anywhere (the run wrote new rows about her policy).
    assert.deepEqual(await findAnywhere(zephValues), []);
  });
});

describe('erasure once the retention period has passed', () => {
  test('409 until RETENTION_AFTER_END_DAYS after the last end, then allowed without force', async () => {
    clock.set('2025-07-21T09:00:00Z');
    const w1 = (
      await ok(
        'POST',
        '/policys',
        acme.sandbox,
        examplePolicyInput({
          proposer: { email: 'wren.ashdown@example.com', first_names: 'Wren', last_names: 'Ashdown' },
        }),
      )
    ).json<{ policy_reference: string }>().policy_reference;
    await ok('DELETE', `/policys/${w1}`, acme.sandbox, { effective_date: unix('2025-07-21T10:00:00Z') });
    const wren = await userOf(w1);
    const end = await t.container.database.db
      .selectFrom('policies')
      .select('current_end_at')
      .where('policy_reference', '=', w1)
      .executeTakeFirstOrThrow();
    const allowedAt = end.current_end_at.getTime() + 2190 * 86_400_000;
    clock.set(new Date(allowedAt - 1000));
    const early = await erase(wren.user_reference, { reason: 'retention over?' });
    assert.equal(early.statusCode, 409, early.body);
    assert.ok(
      early.json<{ detail: string }>().detail.includes(new Date(allowedAt).toISOString()),
      early.body,
    );
    clock.set(new Date(allowedAt));
    const erased = await erase(wren.user_reference, { reason: 'retention period over' });
    assert.equal(erased.statusCode, 200, erased.body);
    assert.equal(erased.json<Json>()['forced'], false);
    assert.deepEqual(await findAnywhere(['wren.ashdown@example.com', 'Ashdown']), []);
    clock.set('2025-07-21T12:00:00Z');
  });
});

describe('postcode districts in SQL', () => {
  test('the erasure’s set-based district is postcodeDistrict, value for value', async () => {
    const samples = [
      'SW1A 1AA',
      'sw1a1aa',
      ' cr2 6xh ',
      'M1',
      '10115 Berlin',
      '!!0AA !',
      'SW1A1AA flat 2',
      '',
      '  ',
      ...fc.sample(
        fc.oneof(
          fc.string({ maxLength: 12 }),
          fc.stringMatching(/^[A-Za-z!]{1,2}[0-9][A-Za-z0-9 ]{0,3}[0-9][A-Za-z]{2}[ !]?$/),
        ),
        { numRuns: 300, seed: 23 },
      ),
    ];
    const { rows } = await sql<{ postcode: string; district: string | null }>`
      select postcode, ${postcodeDistrictSql(sql.ref('postcode'))} as district
      from unnest(${samples}::text[]) as sample(postcode)`.execute(t.container.database.db);
    for (const { postcode, district } of rows)
      assert.equal(district, postcodeDistrict(postcode), JSON.stringify(postcode));
  });
});
