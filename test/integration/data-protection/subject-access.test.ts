import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { unzipSync, strFromU8 } from 'fflate';
import { sql } from 'kysely';
import { listClaimsOfPolicies } from '../../../src/modules/claims/index.ts';
import { subjectAccessJson } from '../../../src/modules/data-protection/subject-access-export.ts';
import { findSubject } from '../../../src/modules/data-protection/subject-access-repository.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { decodePolyline } from '../../../src/platform/geo/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';
import { reportClaim } from '../claims/claims-support.ts';
import { setUpDirectDebit } from '../payments/direct-debit-support.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';

// GET /admin/policyholders/:user_reference/export. Three people: Alice (two policies, one paid by card
// and adjusted, the other by Direct Debit, journeys, a void, a device with positions, an odometer
// reading, a statement, a credit granted by staff, a mileage budget passed, a password reset asked for), Bob of the same company and
// Carol of another company, who shares Alice's email address. Alice's export must hold every row of
// hers in every table that names a policy or a user, and nothing of Bob's or Carol's.

// The example policy's term: 2025-06-01 to 2026-05-31 (London), billing day 1.
const clock = fixedClock('2025-07-20T12:00:00Z');
const unix = (iso: string) => Date.parse(iso) / 1000;

type Company = Awaited<ReturnType<typeof createCompany>>;
type Json = Record<string, unknown>;

interface Person {
  email: string;
  firstNames: string;
  lastNames: string;
  userReference: string;
  userId: string;
  policies: string[];
  policyIds: string[];
  company: Company;
}

let t: TestApp;
let acme: Company;
let beta: Company;
let ops: SignedInStaff;
let viewer: SignedInStaff;
let alice: Person;
let bob: Person;
let carol: Person;

const SHARED_EMAIL = 'alice.pemberton@example.com';
/** What Alice's tracker sent with her first position beyond the fields Milepost reads. */
const ALICE_TRACKER = { satellites: 11, battery: 87, 'fw.version': 'FMB920-03.28' };

async function inject(method: 'GET' | 'POST' | 'PUT', url: string, headers: Json, payload?: object) {
  return t.app.inject({
    method,
    url,
    headers: headers as Record<string, string>,
    ...(payload === undefined ? {} : { payload }),
  });
}

async function ok(method: 'GET' | 'POST' | 'PUT', url: string, headers: Json, payload?: object) {
  const r = await inject(method, url, headers, payload);
  assert.ok(r.statusCode >= 200 && r.statusCode < 300, `${method} ${url}: ${String(r.statusCode)} ${r.body}`);
  return r;
}

async function person(
  company: Company,
  email: string,
  firstNames: string,
  lastNames: string,
  reference: string,
) {
  const ids = await t.container.database.db
    .selectFrom('policies as p')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .select(['u.id', 'u.user_reference'])
    .where('p.policy_reference', '=', reference)
    .executeTakeFirstOrThrow();
  return {
    email,
    firstNames,
    lastNames,
    userReference: ids.user_reference,
    userId: ids.id,
    policies: [reference],
    policyIds: [await policyId(reference)],
    company,
  };
}

async function policyId(reference: string): Promise<string> {
  return (
    await t.container.database.db
      .selectFrom('policies')
      .select('id')
      .where('policy_reference', '=', reference)
      .executeTakeFirstOrThrow()
  ).id;
}

const holder = (email: string, firstNames: string, lastNames: string, reg: string) => ({
  proposer: { email, first_names: firstNames, last_names: lastNames },
  vehicle: { reg },
});

/** Half an hour along `points` from `startIso`; the journey's reference. */
async function journey(company: Company, reference: string, startIso: string, points: number[]) {
  return (await make.journey(t.app, company, reference, startIso, { points, durationSeconds: 1800 }))
    .journey_reference;
}

/** The welcome email's temporary password, a new password, and a login: sessions and refresh tokens. */
async function signIn(company: Company, email: string) {
  const welcome =
    (await t.container.services.notifications.emailsTo(email)).find((e) => e.template === 'welcome')?.text ??
    '';
  const line = (label: string) => new RegExp(`^${label}: (\\S+)\\r?$`, 'm').exec(welcome)?.[1] ?? '';
  const username = line('Username');
  const token = async (payload: Json) =>
    (
      await ok('POST', '/auth/token', { client_id: company.client_id, environment: 'sandbox' }, payload)
    ).json<Json>();
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
  await token({ type: 'REFRESH_TOKEN', refresh_token: done['refresh_token'] });
  await token({ type: 'FORGOT_PASSWORD', username });
}

before(async () => {
  t = await createTestApp({ overrides: { clock }, listen: true });
  acme = await createCompany(t.app, 'Acme Subject Access');
  beta = await createCompany(t.app, 'Beta Subject Access');
  ops = await signInStaff(t, 'olive.ops@insurer.example', 'operations');
  viewer = await signInStaff(t, 'victor.viewer@insurer.example', 'viewer');

  // Alice: a card-paid policy, then a second one that joins her account.
  const { reference: a1 } = await make.cardPaidPolicy(t, acme, {
    ...holder(SHARED_EMAIL, 'Alice Mary', 'Pemberton', 'AL11 CEE'),
    pricing: { upfront_premium: 120 },
  });
  alice = await person(acme, SHARED_EMAIL, 'Alice Mary', 'Pemberton', a1);
  await signIn(acme, SHARED_EMAIL);
  const { reference: a2 } = await make.policy(
    t.app,
    acme,
    holder(SHARED_EMAIL, 'Alice Mary', 'Pemberton', 'AL22 CEE'),
  );
  alice.policies.push(a2);
  alice.policyIds.push(await policyId(a2));
  await setUpDirectDebit(t, acme.sandbox, a2);
  // An adjustment of the first (mta version), from the example's pricing and no payment block.
  await make.adjustment(
    t.app,
    acme,
    { reference: a1, input: examplePolicyInput(holder(SHARED_EMAIL, 'Alice Mary', 'Pemberton', 'AL11 CEE')) },
    { vehicle: { reg: 'AL11 CEF' } },
  );
  await ok('PUT', `/policys/${a1}/mileage-budget`, acme.sandbox, { distance_per_month: 1 });
  await journey(acme, a1, '2025-06-10T08:00:00Z', [51.5074, -0.1278, 51.5101, -0.134, 51.5155, -0.1419]);
  const voided = await journey(acme, a1, '2025-06-12T08:00:00Z', [51.752, -1.2577, 51.7, -1.2, 51.6, -1.1]);
  await journey(acme, a2, '2025-06-14T08:00:00Z', [52.4862, -1.8904, 52.45, -1.85]);
  await ok('POST', `/journeys/${voided}/void`, acme.sandbox, { reason: 'passenger, not driver' });
  // A device, its positions (which cut no trip: jobs do not run here) and an odometer reading.
  await make.device(t.app, acme, a1, { deviceId: 'alice-car' });
  // Positions belong to the binding from its start: they come in an hour later.
  clock.set('2025-07-20T13:00:00Z');
  await ok('POST', '/telematics/positions', acme.sandbox, {
    device_id: 'alice-car',
    positions: Array.from({ length: 300 }, (_, i) => ({
      time: unix('2025-07-20T12:10:00Z') + i,
      lat: 51.5 + i * 0.0001,
      lon: -0.14,
      speed_kmh: 36,
      ignition: true,
      ...(i === 0 ? ALICE_TRACKER : {}),
    })),
  });
  // A crash felt by her tracker: the worker opens its claim, which she confirms; staff reserve and pay.
  await ok('POST', '/telematics/events', acme.sandbox, {
    device_id: 'alice-car',
    type: 'crash',
    time: unix('2025-07-20T12:14:00Z'),
    lat: 51.52,
    lon: -0.14,
    speed_kmh: 36,
    peak_acceleration_g: 5.1,
  });
  await t.container.services.claims.runOnce(clock.now());
  const claim = (await t.container.database.db.selectFrom('claims').select('id').executeTakeFirstOrThrow())
    .id;
  await ok('POST', `/policys/${a1}/claims/${claim}/confirm`, acme.sandbox, {
    injuries: false,
    other_vehicles: true,
    police_attended: false,
    other_parties: 'Silver estate, driver Ms Quill',
  });
  const exposure = (
    await ok('POST', `/claims/${claim}/exposures`, acme.sandbox, { kind: 'own_vehicle', reserve: 800 })
  ).json<{ exposures: Array<{ exposure_id: string }> }>().exposures[0]?.exposure_id;
  await ok('POST', `/claims/${claim}/exposures/${exposure ?? ''}/payments`, acme.sandbox, {
    amount: 250,
    final: false,
    payee: 'Alice Pemberton',
  });
  await ok('POST', `/claims/${claim}/notes`, acme.sandbox, { text: 'Spoke to Alice; car driveable.' });
  const photo = await t.app.inject({
    method: 'POST',
    url: `/policys/${a1}/claims/${claim}/photos`,
    headers: { ...acme.sandbox, 'content-type': 'image/jpeg' },
    payload: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 7)]),
  });
  assert.equal(photo.statusCode, 201, photo.body);
  for (const [time, readingMetres] of [
    ['2025-06-02T08:00:00Z', 1_000_000],
    ['2025-06-29T08:00:00Z', 1_400_000],
  ] as const)
    await ok('POST', '/telematics/odometer', acme.sandbox, {
      policy_reference: a1,
      reading_metres: readingMetres,
      time,
      source: 'photo',
    });
  await make.statement(t.app, acme, a1, '2025-06-30T22:59:59Z');
  // A staff member's goodwill credit: an audited action on her policy.
  await ok('POST', '/admin/credits', ops.headers, {
    company_reference: acme.company_reference,
    environment: 'sandbox',
    policy_reference: a1,
    amount: 5,
    reason: 'goodwill: app outage',
  });

  // Bob: the same company, much the same story.
  const { reference: b1 } = await make.policy(
    t.app,
    acme,
    holder('bob.quennell@example.com', 'Robert', 'Quennell', 'BO11 BBB'),
  );
  bob = await person(acme, 'bob.quennell@example.com', 'Robert', 'Quennell', b1);
  await setUpDirectDebit(t, acme.sandbox, b1);
  await ok('PUT', `/policys/${b1}/mileage-budget`, acme.sandbox, { distance_per_month: 1 });
  await journey(acme, b1, '2025-06-11T08:00:00Z', [51.5074, -0.1278, 51.5155, -0.1419]);
  await make.device(t.app, acme, b1, { deviceId: 'bob-car', kind: 'phone' });
  clock.set('2025-07-20T14:00:00Z');
  await ok('POST', '/telematics/positions', acme.sandbox, {
    device_id: 'bob-car',
    positions: [{ time: unix('2025-07-20T13:30:00Z'), lat: 51.45, lon: -0.3 }],
  });
  await ok('POST', '/telematics/odometer', acme.sandbox, {
    policy_reference: b1,
    reading_metres: 2_000_000,
    time: '2025-06-03T08:00:00Z',
    source: 'photo',
  });
  await make.statement(t.app, acme, b1, '2025-06-30T22:59:59Z');
  await ok('POST', '/admin/credits', ops.headers, {
    company_reference: acme.company_reference,
    environment: 'sandbox',
    policy_reference: b1,
    amount: 3,
    reason: 'goodwill: late card',
  });

  // Carol: another company, Alice's email address (one account per email per company).
  const { reference: c1 } = await make.policy(
    t.app,
    beta,
    holder(SHARED_EMAIL, 'Caroline', 'Rutherford', 'CA11 RRR'),
  );
  carol = await person(beta, SHARED_EMAIL, 'Caroline', 'Rutherford', c1);
  await journey(beta, c1, '2025-06-15T08:00:00Z', [53.48, -2.24, 53.4, -2.2]);
  // The worker's pass: the documents each change owed.
  await t.container.services.documents.runPending();
});
after(() => t.close());

const exportUrl = (userReference: string, format?: string) =>
  `/admin/policyholders/${userReference}/export${format === undefined ? '' : `?format=${format}`}`;

async function exportOf(who: Pick<Person, 'userReference'>): Promise<{ text: string; doc: Json }> {
  const r = await ok('GET', exportUrl(who.userReference), t.adminHeaders);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  assert.match(String(r.headers['content-disposition']), /^attachment; filename="subject-access-.*\.json"$/);
  return { text: r.body, doc: r.json<Json>() };
}

// ── Every table, by what links a row to a person ───────────────────────────────────────────────

type Row = Record<string, unknown>;
interface TableCheck {
  /** How the table's rows of a person are found. */
  readonly by: 'policy_id' | 'user_id';
  /** The keys of the export's records of this table. */
  readonly exported: (doc: Json) => string[];
  /** The key of one row, as `exported` gives it. */
  readonly key: (row: Row, refs: ReadonlyMap<string, string>) => string;
}

const list = (doc: Json, section: string): Json[] => {
  const value = doc[section];
  assert.ok(Array.isArray(value), `${section} is a list`);
  return value as Json[];
};
const field = (name: string) => (doc: Json, section: string) =>
  list(doc, section).map((r) => String(r[name]));
const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : String(value));
const byId =
  (section: string, name = 'id'): TableCheck['exported'] =>
  (doc) =>
    field(name)(doc, section);
const rowId: TableCheck['key'] = (row) => String(row['id']);
const refOf = (row: Row, refs: ReadonlyMap<string, string>) => refs.get(String(row['policy_id'])) ?? '?';

/** Every table that has a policy_id or user_id column, and how the export shows its rows. */
const TABLES: Record<string, TableCheck> = {
  policies: {
    by: 'user_id',
    exported: (doc) => field('policy_reference')(doc, 'policies'),
    key: (row) => String(row['policy_reference']),
  },
  policy_references: {
    by: 'policy_id',
    exported: (doc) => field('policy_reference')(doc, 'policies'),
    key: (row) => String(row['policy_reference']),
  },
  policy_versions: {
    by: 'policy_id',
    exported: (doc) =>
      list(doc, 'policies').flatMap((p) =>
        (p['versions'] as Json[]).map((v) => String(v['policy_version_reference'])),
      ),
    key: rowId,
  },
  auth_login_sessions: { by: 'user_id', exported: byId('login_sessions'), key: rowId },
  auth_refresh_tokens: { by: 'user_id', exported: byId('refresh_tokens'), key: rowId },
  auth_reset_codes: { by: 'user_id', exported: byId('password_reset_codes'), key: rowId },
  payment_customers: {
    by: 'user_id',
    exported: byId('payment_customers', 'provider_customer_id'),
    key: (row) => String(row['provider_customer_id']),
  },
  payments: { by: 'policy_id', exported: byId('payments', 'payment_reference'), key: rowId },
  direct_debit_mandates: { by: 'policy_id', exported: byId('direct_debit_mandates'), key: rowId },
  journeys: { by: 'policy_id', exported: byId('journeys', 'journey_reference'), key: rowId },
  // A journey's keys (its reference and span) are exported with the journey.
  journey_keys: {
    by: 'policy_id',
    exported: byId('journeys', 'journey_reference'),
    key: (row) => String(row['journey_id']),
  },
  journey_voids: { by: 'policy_id', exported: byId('journey_voids'), key: rowId },
  journey_rule_credits: { by: 'policy_id', exported: byId('journey_rule_credits'), key: rowId },
  device_bindings: {
    by: 'policy_id',
    exported: (doc) =>
      list(doc, 'devices').flatMap((d) => (d['bindings'] as Json[]).map((b) => String(b['id']))),
    key: rowId,
  },
  positions: {
    by: 'policy_id',
    exported: (doc) =>
      list(doc, 'positions').map((p) => `${String(p['policy_reference'])} ${iso(p['time'])}`),
    key: (row, refs) => `${refOf(row, refs)} ${iso(row['time'])}`,
  },
  odometer_readings: {
    by: 'policy_id',
    exported: byId('odometer_readings', 'reading_reference'),
    key: rowId,
  },
  statements: { by: 'policy_id', exported: byId('statements', 'policy_version_reference'), key: rowId },
  statement_odometers: {
    by: 'policy_id',
    exported: (doc) =>
      list(doc, 'statements')
        .filter((s) => s['odometer'] !== null)
        .map((s) => String(s['policy_version_reference'])),
    key: (row) => String(row['statement_id']),
  },
  policy_credits: { by: 'policy_id', exported: byId('policy_credits'), key: rowId },
  policy_usage_years: {
    by: 'policy_id',
    exported: (doc) =>
      list(doc, 'policy_usage_years').map(
        (y) => `${String(y['policy_reference'])} ${iso(y['year_start_at'])}`,
      ),
    key: (row, refs) => `${refOf(row, refs)} ${iso(row['year_start_at'])}`,
  },
  mileage_budgets: {
    by: 'policy_id',
    exported: byId('mileage_budgets', 'policy_reference'),
    key: (row, refs) => refOf(row, refs),
  },
  usage_alerts: {
    by: 'policy_id',
    exported: (doc) =>
      list(doc, 'usage_alerts').map(
        (a) => `${String(a['policy_reference'])} ${String(a['kind'])} ${String(a['period'])}`,
      ),
    key: (row, refs) => `${refOf(row, refs)} ${String(row['kind'])} ${String(row['period'])}`,
  },
  trip_scores: {
    by: 'policy_id',
    exported: byId('trip_scores', 'journey_id'),
    key: (row) => String(row['journey_id']),
  },
  trip_score_events: { by: 'policy_id', exported: byId('trip_score_events'), key: rowId },
  score_months: {
    by: 'policy_id',
    exported: (doc) =>
      list(doc, 'score_months').map((m) => `${String(m['policy_reference'])} ${String(m['month'])}`),
    key: (row, refs) => `${refOf(row, refs)} ${String(row['month'])}`,
  },
  score_disputes: { by: 'policy_id', exported: byId('score_disputes'), key: rowId },
  renewal_prices: { by: 'policy_id', exported: byId('renewal_prices'), key: rowId },
  audit_records: { by: 'policy_id', exported: byId('audit_records'), key: rowId },
  outbox_emails: { by: 'user_id', exported: byId('emails'), key: rowId },
  documents: { by: 'policy_id', exported: byId('documents'), key: rowId },
  document_files: { by: 'policy_id', exported: byId('documents'), key: (row) => String(row['document_id']) },
  // What the worker has still to make: ids only, nothing of the person; empty once it has run.
  documents_owed: { by: 'policy_id', exported: () => [], key: rowId },
  crash_events: { by: 'policy_id', exported: byId('crash_events'), key: rowId },
  // The first notice a crash owes: ids only; gone once the claim is opened and its crash file final.
  claim_crashes_owed: { by: 'policy_id', exported: () => [], key: (row) => String(row['crash_event_id']) },
  claims: { by: 'policy_id', exported: byId('claims'), key: rowId },
  claim_exposures: {
    by: 'policy_id',
    exported: (doc) =>
      list(doc, 'claims').flatMap((c) => (c['exposures'] as Json[]).map((e) => String(e['id']))),
    key: rowId,
  },
  claim_payments: {
    by: 'policy_id',
    exported: (doc) =>
      list(doc, 'claims').flatMap((c) => (c['payments'] as Json[]).map((e) => String(e['id']))),
    key: rowId,
  },
  claim_reserve_movements: {
    by: 'policy_id',
    exported: (doc) =>
      list(doc, 'claims').flatMap((c) => (c['reserve_movements'] as Json[]).map((e) => String(e['id']))),
    key: rowId,
  },
  claim_notes: {
    by: 'policy_id',
    exported: (doc) => list(doc, 'claims').flatMap((c) => (c['notes'] as Json[]).map((e) => String(e['id']))),
    key: rowId,
  },
  claim_photos: {
    by: 'policy_id',
    exported: (doc) =>
      list(doc, 'claims').flatMap((c) => (c['photos'] as Json[]).map((e) => String(e['id']))),
    key: rowId,
  },
  quote_bindings: { by: 'policy_id', exported: byId('quotes'), key: (row) => String(row['quote_id']) },
};

async function tablesNaming(): Promise<string[]> {
  const rows = await sql<{ table_name: string }>`
    select distinct c.table_name from information_schema.columns c
    join pg_class k on k.relname = c.table_name and k.relnamespace = to_regnamespace(c.table_schema)
    where c.table_schema = current_schema() and c.column_name in ('policy_id', 'user_id')
      and not k.relispartition
    order by 1`.execute(t.container.database.db);
  return rows.rows.map((r) => r.table_name);
}

async function rowsOf(table: string, check: TableCheck, who: Person): Promise<Row[]> {
  const ids = check.by === 'user_id' ? [who.userId] : who.policyIds;
  const rows =
    await sql<Row>`select * from ${sql.table(table)} where ${sql.ref(check.by)} in (${sql.join(ids)})`.execute(
      t.container.database.db,
    );
  return rows.rows;
}

/** The person's events (their policies or user named in `data`), by the same rule as the export. */
async function eventsOf(who: Person) {
  const rows = await t.container.database.db
    .selectFrom('events as e')
    .innerJoin('companies as c', 'c.id', 'e.company_id')
    .select(['e.id', 'e.data'])
    .where('c.company_reference', '=', who.company.company_reference)
    .execute();
  return rows.filter((r) => {
    const data = (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Json;
    return (
      who.policies.includes(String(data['policy_reference'])) || data['user_reference'] === who.userReference
    );
  });
}

async function emailsOf(who: Person) {
  return t.container.database.db
    .selectFrom('outbox_emails as o')
    .innerJoin('companies as c', 'c.id', 'o.company_id')
    .select(['o.id', 'o.template', 'o.text_body'])
    .where('c.company_reference', '=', who.company.company_reference)
    .where(sql<string>`lower(o.recipient)`, '=', who.email.toLowerCase())
    .execute();
}

describe('GET /admin/policyholders/:user_reference/export', () => {
  test('holds every row of the person in every table that names a policy or a user, and nothing of anyone else', async () => {
    const { text, doc } = await exportOf(alice);
    const refs = new Map(alice.policies.map((reference, i) => [alice.policyIds[i] ?? '', reference]));

    // Every table with a policy_id or user_id column is checked: a new one fails here until the export has it.
    assert.deepEqual(await tablesNaming(), Object.keys(TABLES).sort());
    const empty: string[] = [];
    for (const [table, check] of Object.entries(TABLES)) {
      const mine = await rowsOf(table, check, alice);
      if (mine.length === 0) empty.push(table);
      const exported = new Set(check.exported(doc));
      for (const row of mine)
        assert.ok(
          exported.has(check.key(row, refs)),
          `${table} row ${check.key(row, refs)} is in the export`,
        );
      // No other person's row in the export: their keys appear nowhere in it.
      for (const other of [bob, carol]) {
        const otherRefs = new Map(
          other.policies.map((reference, i) => [other.policyIds[i] ?? '', reference]),
        );
        for (const row of await rowsOf(table, check, other)) {
          const key = check.key(row, otherRefs);
          assert.ok(!exported.has(key), `${table} row ${key} of another person is not in the export`);
          if (typeof row['id'] === 'string')
            assert.ok(!text.includes(row['id']), `${table} ${row['id']} nowhere`);
        }
      }
    }
    // The scenario gives Alice rows in all but these (product rules and annual caps need a product;
    // every document owed has been made; she drives no device trip, so nothing is scored; a bound
    // quote needs an approved rate book: test/integration/quotes/quote-data-protection.test.ts
    // exports and erases quotes).
    assert.deepEqual(empty.toSorted(), [
      'claim_crashes_owed',
      'documents_owed',
      'journey_rule_credits',
      'policy_usage_years',
      'quote_bindings',
      'renewal_prices',
      'score_disputes',
      'score_months',
      'trip_score_events',
      'trip_scores',
    ]);

    // The account, with no secret; the events and emails by their links.
    const account = doc['account'] as Json;
    assert.equal(account['user_reference'], alice.userReference);
    assert.equal(account['email'], SHARED_EMAIL);
    assert.equal(account['first_names'], 'Alice Mary');
    assert.equal('password_hash' in account, false);
    assert.doesNotMatch(text, /password_hash|token_hash|code_hash|successor_sealed/);

    const events = await eventsOf(alice);
    assert.ok(events.length >= 8, `events: ${String(events.length)}`);
    assert.deepEqual(new Set(field('event_id')(doc, 'events')), new Set(events.map((e) => e.id)));
    const types = new Set(list(doc, 'events').map((e) => e['type']));
    for (const type of [
      'policy.created',
      'policy.adjusted',
      'journey.created',
      'journey.voided',
      'statement.created',
    ])
      assert.ok(types.has(type), `a ${type} event`);

    const emails = await emailsOf(alice);
    assert.deepEqual(new Set(field('id')(doc, 'emails')), new Set(emails.map((e) => e.id)));
    const exportedEmails = list(doc, 'emails');
    const welcome = exportedEmails.find((e) => e['template'] === 'welcome');
    assert.deepEqual(
      { withheld: welcome?.['body_withheld'], body: welcome?.['text_body'] },
      { withheld: true, body: null },
    );
    assert.ok(exportedEmails.some((e) => e['template'] === 'reset-code' && e['body_withheld'] === true));
    const added = exportedEmails.find((e) => e['template'] === 'policy-added');
    assert.equal(added?.['body_withheld'], false);
    assert.match(String(added['text_body']), /Alice/);
    for (const e of emails.filter((x) => ['welcome', 'reset-code'].includes(x.template)))
      assert.ok(e.text_body === null || !text.includes(e.text_body), 'no one-time secret leaves');
    assert.doesNotMatch(text, /Temporary password: |Code: \d{6}/);

    // The staff credit's audit rows; the card's brand and last 4; positions all there.
    const audit = list(doc, 'audit_records');
    assert.ok(audit.some((a) => a['action'] === 'statements.grantCredit' && a['table'] === 'policy_credits'));
    assert.ok(
      audit.every((a) => !('source_address' in a)),
      'staff addresses are not the subject’s data',
    );
    const payments = list(doc, 'payments');
    assert.ok(payments.length >= 2, 'new business and the statement (and the adjustment)');
    const card = payments.find((p) => p['purpose'] === 'new_business')?.['card'] as Json | undefined;
    assert.deepEqual({ brand: card?.['brand'], last4: card?.['last4'] }, { brand: 'visa', last4: '4242' });
    assert.ok(payments.every((p) => p['method_type'] === 'card' && 'settled_at' in p && 'mandate_id' in p));
    const [mandate, ...moreMandates] = list(doc, 'direct_debit_mandates');
    assert.equal(moreMandates.length, 0, 'one mandate: on her second policy');
    assert.deepEqual(
      {
        policy: mandate?.['policy_reference'],
        holder: mandate?.['account_holder_name'],
        sortCode: mandate?.['sort_code'],
        last4: mandate?.['account_last4'],
        isDefault: mandate?.['is_default'],
      },
      {
        policy: alice.policies[1],
        holder: 'Jane Example',
        sortCode: '108800',
        last4: '2345',
        isDefault: true,
      },
    );
    assert.match(String(mandate?.['mandate_reference']), /\S/);
    assert.equal(list(doc, 'positions').length, 300);
    assert.equal(list(doc, 'devices')[0]?.['device_id'], 'alice-car');

    // Nobody else's references, email or names.
    for (const other of [bob, carol]) {
      assert.ok(!text.includes(other.userReference), 'another user reference');
      for (const reference of other.policies)
        assert.ok(!text.includes(reference), `another policy ${reference}`);
      assert.ok(
        !text.includes(other.lastNames) && !text.includes(other.firstNames),
        'another person’s names',
      );
    }
    assert.ok(!text.includes(bob.email));
    assert.ok(!text.includes('bob-car'));

    // The summary counts each section as written.
    const contents = doc['contents'] as Record<string, number>;
    for (const section of [
      'journeys',
      'positions',
      'payments',
      'direct_debit_mandates',
      'emails',
      'events',
      'audit_records',
      'statements',
    ])
      assert.equal(contents[section], list(doc, section).length, section);
    assert.equal(
      contents['policy_versions'],
      list(doc, 'policies').reduce((n, p) => n + (p['versions'] as Json[]).length, 0),
    );
    assert.equal(doc['generated_at'], clock.now().toISOString());
    assert.deepEqual(doc['subject'], {
      user_reference: alice.userReference,
      company_reference: acme.company_reference,
      company_name: 'Acme Subject Access',
      environment: 'sandbox',
    });
  });

  test('a position holds the attributes its tracker sent beyond the fields Milepost reads', async () => {
    const { doc } = await exportOf(alice);
    const positions = list(doc, 'positions');
    const first = new Date(unix('2025-07-20T12:10:00Z') * 1000).toISOString();
    assert.deepEqual(positions.find((p) => p['time'] === first)?.['attributes'], ALICE_TRACKER);
    // The others came with none.
    assert.ok(positions.filter((p) => p['time'] !== first).every((p) => p['attributes'] === null));
  });

  test('format=zip: export.json and the routes as GeoJSON, at each journey’s precision', async () => {
    const r = await ok('GET', exportUrl(alice.userReference, 'zip'), t.adminHeaders);
    assert.equal(r.headers['content-type'], 'application/zip');
    assert.match(String(r.headers['content-disposition']), /filename="subject-access-.*\.zip"/);
    const files = unzipSync(new Uint8Array(r.rawPayload));
    assert.deepEqual(Object.keys(files).sort(), ['export.json', 'routes.geojson']);
    const doc = JSON.parse(strFromU8(files['export.json'] ?? new Uint8Array())) as Json;
    assert.equal((doc['account'] as Json)['user_reference'], alice.userReference);
    const { doc: plain } = await exportOf(alice);
    for (const section of ['policies', 'journeys', 'positions', 'payments', 'statements', 'emails', 'events'])
      assert.deepEqual(doc[section], plain[section], section);

    const geo = JSON.parse(strFromU8(files['routes.geojson'] ?? new Uint8Array())) as {
      type: string;
      features: Array<{
        type: string;
        geometry: { type: string; coordinates: Array<[number, number]> };
        properties: Json;
      }>;
    };
    assert.equal(geo.type, 'FeatureCollection');
    const journeys = await t.container.database.db
      .selectFrom('journeys')
      .select(['id', 'route', 'route_precision'])
      .where('policy_id', 'in', alice.policyIds)
      .execute();
    assert.equal(geo.features.length, journeys.length);
    for (const j of journeys) {
      const feature = geo.features.find((f) => f.properties['journey_reference'] === j.id);
      assert.ok(feature !== undefined, `a feature for ${j.id}`);
      assert.equal(feature.type, 'Feature');
      assert.equal(feature.geometry.type, 'LineString');
      const decoded = decodePolyline(j.route, j.route_precision === 6 ? 6 : 5);
      assert.ok(decoded.ok);
      const expected = Array.from({ length: decoded.count }, (_, i) => [
        decoded.points[2 * i + 1],
        decoded.points[2 * i],
      ]);
      assert.deepEqual(feature.geometry.coordinates, expected, 'GeoJSON is [longitude, latitude]');
    }
  });

  test('a route stored at precision 6 decodes at 6', async () => {
    const points = [51.123456, -0.654321, 51.223456, -0.554321];
    const { journey_reference: reference } = await make.journey(
      t.app,
      acme,
      alice.policies[1]!,
      '2025-06-20T08:00:00Z',
      { points, precision: 6, durationSeconds: 1800 },
    );
    const zip = await ok('GET', exportUrl(alice.userReference, 'zip'), t.adminHeaders);
    const geo = JSON.parse(
      strFromU8(unzipSync(new Uint8Array(zip.rawPayload))['routes.geojson'] ?? new Uint8Array()),
    ) as {
      features: Array<{ geometry: { coordinates: number[][] }; properties: Json }>;
    };
    const feature = geo.features.find((f) => f.properties['journey_reference'] === reference);
    assert.deepEqual(feature?.geometry.coordinates, [
      [-0.654321, 51.123456],
      [-0.554321, 51.223456],
    ]);
  });

  test('roles: no key 401, a viewer 403, operations 200; an unknown person 404; a bad format 422', async () => {
    const none = await inject('GET', exportUrl(alice.userReference), {});
    assert.equal(none.statusCode, 401, none.body);
    const refused = await inject('GET', exportUrl(alice.userReference), { cookie: viewer.cookie });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(refused.json<{ code: string }>().code, 'FORBIDDEN');
    const allowed = await inject('GET', exportUrl(alice.userReference), { cookie: ops.cookie });
    assert.equal(allowed.statusCode, 200, allowed.body.slice(0, 500));
    assert.equal((allowed.json<Json>()['account'] as Json)['user_reference'], alice.userReference);
    // Staff reads are not audited in general; an export is, whoever makes it.
    const trail = await ok(
      'GET',
      `/admin/audit?request_id=${String(allowed.headers['x-request-id'])}`,
      t.adminHeaders,
    );
    assert.deepEqual(
      trail.json<{ data: Json[] }>().data.map((r) => [r['actor'], r['action'], r['resource']]),
      [['staff:olive.ops@insurer.example', 'policyholders.export', `user_reference:${alice.userReference}`]],
    );
    const byKey = await ok('GET', exportUrl(bob.userReference), t.adminHeaders);
    // The hook records an admin-key request once its handler has returned, which for a streamed
    // answer may be after the last byte: poll for it.
    let keyTrail: Json[] = [];
    for (let tries = 0; tries < 100 && keyTrail.length === 0; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      keyTrail = (
        await ok('GET', `/admin/audit?request_id=${String(byKey.headers['x-request-id'])}`, t.adminHeaders)
      ).json<{ data: Json[] }>().data;
    }
    assert.deepEqual(
      keyTrail.map((r) => [r['actor'], r['action'], r['resource']]),
      [['admin-key', 'policyholders.export', `user_reference:${bob.userReference}`]],
    );
    const unknown = await inject('GET', exportUrl('U-NOBODY'), t.adminHeaders);
    assert.equal(unknown.statusCode, 404, unknown.body);
    assert.match(String(unknown.headers['content-type']), /^application\/problem\+json/);
    assert.equal(unknown.json<{ code: string }>().code, 'NOT_FOUND');
    const bad = await inject('GET', exportUrl(alice.userReference, 'xml'), t.adminHeaders);
    assert.equal(bad.statusCode, 422, bad.body);
    const extra = await inject('GET', `${exportUrl(alice.userReference)}?limit=1`, t.adminHeaders);
    assert.equal(extra.statusCode, 422, extra.body);
  });

  test('Bob’s export is his alone; Carol’s (another company, the same email) has only her company’s emails', async () => {
    const { text, doc } = await exportOf(bob);
    assert.ok(!text.includes(alice.userReference) && !text.includes('Pemberton'));
    for (const reference of alice.policies) assert.ok(!text.includes(reference));
    assert.deepEqual(field('policy_reference')(doc, 'policies'), bob.policies);

    const theirs = await exportOf(carol);
    const emailIds = new Set(field('id')(theirs.doc, 'emails'));
    assert.deepEqual(emailIds, new Set((await emailsOf(carol)).map((e) => e.id)));
    for (const e of await emailsOf(alice)) assert.ok(!theirs.text.includes(e.id), 'not Alice’s emails');
    assert.ok(!theirs.text.includes('Pemberton'));
  });

  test('a claim’s photos are written one at a time, in pieces: each decodes to its bytes', async () => {
    // Sizes of each remainder mod 3 (base64 padding), each over a piece of encoding.
    const sizesBytes = [2 * 1024 * 1024, 2 * 1024 * 1024 + 1, 2 * 1024 * 1024 + 2, 1.5 * 1024 * 1024 + 1];
    const policy = await make.policy(
      t.app,
      acme,
      holder('dora.finch@example.com', 'Dora', 'Finch', 'DO11 RAF'),
    );
    const doraPolicyId = await policyId(policy.reference);
    const claim = await reportClaim(t, acme.sandbox, policy.reference, unix('2025-07-19T09:00:00Z'));
    for (const sizeBytes of sizesBytes) {
      const bytes = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(sizeBytes - 4)]);
      const r = await t.app.inject({
        method: 'POST',
        url: `/policys/${policy.reference}/claims/${claim.claim_reference}/photos`,
        headers: { ...acme.sandbox, 'content-type': 'image/jpeg' },
        payload: bytes,
      });
      assert.equal(r.statusCode, 201, r.body);
    }
    const stored = await t.container.database.db
      .selectFrom('claim_photos')
      .select(['id', 'content'])
      .where('policy_id', '=', doraPolicyId)
      .execute();
    assert.equal(stored.length, sizesBytes.length);

    // The claims the export lists carry their photos' metadata, not their bytes.
    const [listed] = await listClaimsOfPolicies(t.container.database.db, [doraPolicyId]);
    for (const photo of listed?.photos ?? [])
      assert.deepEqual(
        Object.keys(photo),
        ['id', 'claim_id', 'content_type', 'size_bytes', 'sha256', 'uploaded_at'],
        'no photo content in the claims listed',
      );

    // Every photo whole, in the shape JSON.stringify gives the claim (`photos` last, bytes last).
    const { text, doc } = await exportOf(policy);
    const [exported] = list(doc, 'claims');
    assert.equal(exported?.['id'], claim.claim_reference);
    assert.ok(text.includes(JSON.stringify(exported)), 'the claim as JSON.stringify writes it');
    assert.equal(Object.keys(exported).at(-1), 'photos');
    const photos = exported['photos'] as Json[];
    assert.deepEqual(photos.map((p) => p['id']).toSorted(), stored.map((p) => p.id).toSorted());
    for (const photo of photos) {
      assert.equal(Object.keys(photo).at(-1), 'content_base64');
      const bytes = stored.find((p) => p.id === photo['id'])?.content ?? new Uint8Array();
      assert.ok(
        Buffer.from(String(photo['content_base64']), 'base64').equals(bytes),
        `photo ${String(photo['id'])} decodes to its bytes`,
      );
    }

    // No piece of the text holds a whole photo, and each photo's bytes are read as it is written: a
    // photo deleted while the first is written is left out.
    const found = await findSubject(t.container.database.db, policy.userReference);
    assert.ok(found !== undefined);
    const pieces: string[] = [];
    let deleted: string | undefined;
    for await (const piece of subjectAccessJson(t.container.database.db, found, clock.now())) {
      pieces.push(piece);
      assert.ok(
        piece.length < Math.min(...sizesBytes),
        `a piece of ${String(piece.length)} characters is shorter than any photo`,
      );
      const writing = /\{"id":"([^"]+)","claim_id"[^{}]*"content_base64":"$/.exec(piece)?.[1];
      if (writing !== undefined && deleted === undefined) {
        deleted = stored.find((p) => p.id !== writing)?.id ?? '';
        await t.container.database.db
          .deleteFrom('claim_photos')
          .where('policy_id', '=', doraPolicyId)
          .where('id', '=', deleted)
          .execute();
      }
    }
    assert.ok(deleted !== undefined, 'a photo was being written');
    const remaining = list(JSON.parse(pieces.join('')) as Json, 'claims')[0]?.['photos'] as Json[];
    assert.deepEqual(
      remaining.map((p) => p['id']).toSorted(),
      stored
        .map((p) => p.id)
        .filter((id) => id !== deleted)
        .toSorted(),
    );
  });
});
