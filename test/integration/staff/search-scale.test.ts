import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { RARE_SURNAME_EVERY, seedPolicies, type SeedResult } from '../../../src/seed.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { onPostgres } from '../../support/database.ts';

// PostgreSQL searches 100,000 through its trigram indexes. PGlite has none, so every search scans the
// table: there 20,000 check the same answers (each policy the tests name is below 15,002) in a fifth of
// the time, the scale being PostgreSQL's to show.
const POLICIES = onPostgres ? 100_000 : 20_000;
/** Indexes up to this many are seeded again in the other company and in production, with the same people. */
const SHARED = 300;

interface Found {
  policy_reference: string;
  company_reference: string;
  environment: string;
  status: string;
  policyholder_name: string | null;
  email: string | null;
  vehicle_reg: string | null;
  postcode: string | null;
}

interface Seeded {
  reference: string;
  email: string;
  firstNames: string;
  lastNames: string;
  reg: string;
  postcode: string;
}

let t: TestApp;
let main: SeedResult;
let other: SeedResult;

before(async () => {
  t = await createTestApp();
  const db = t.container.database.db;
  main = await seedPolicies(db, { policies: POLICIES });
  other = await seedPolicies(db, { policies: SHARED });
  await seedPolicies(db, {
    policies: SHARED,
    companyReference: main.companyReference,
    environment: 'production',
  });
  await sql`analyze policies`.execute(db);
});
after(async () => {
  await t.close();
});

/** The seeded policy numbered `index` in a company's environment (its username ends in the index). */
async function seeded(company: SeedResult, environment: string, index: number): Promise<Seeded> {
  const row = await sql<Seeded>`
    select p.policy_reference as reference, v.snapshot #>> '{proposer,email}' as email,
      v.snapshot #>> '{proposer,first_names}' as "firstNames", v.snapshot #>> '{proposer,last_names}' as "lastNames",
      v.snapshot #>> '{vehicle,reg}' as reg, v.snapshot #>> '{policy,address,postcode}' as postcode
    from policies p
    join companies c on c.id = p.company_id
    join users u on u.id = p.user_id
    join policy_versions v on v.policy_id = p.id and v.sequence = 1
    where c.company_reference = ${company.companyReference} and p.environment = ${environment}
      and u.username ~ ${`[a-z]${String(index)}$`}`.execute(t.container.database.db);
  assert.equal(row.rows.length, 1, `policy ${String(index)} of ${company.companyReference} ${environment}`);
  const [policy] = row.rows;
  assert.ok(policy !== undefined);
  return policy;
}

async function search(query: Record<string, string | number>): Promise<Found[]> {
  const response = await t.app.inject({
    method: 'GET',
    url: '/admin/policies',
    query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])),
    headers: t.adminHeaders,
  });
  assert.equal(response.statusCode, 200, response.body);
  const found = response.json<{ data: Found[] }>().data;
  assert.ok(found.length <= Number(query['limit'] ?? 25), `${String(found.length)} results over the limit`);
  return found;
}

const references = (found: readonly Found[]) => found.map((f) => f.policy_reference);

describe(`policy search over ${String(POLICIES)} seeded policies`, () => {
  test('the seed wrote every policy, and the service reads them with the company’s credentials', async () => {
    assert.equal(main.policies, POLICIES);
    assert.ok(main.credentials !== undefined);
    const policy = await seeded(main, 'sandbox', 4_321);
    const response = await t.app.inject({
      method: 'GET',
      url: `/policys/${policy.reference}`,
      headers: {
        client_id: main.clientId,
        client_secret: main.credentials.client_secret_sandbox,
        environment: 'sandbox',
      },
    });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json<{
      policy_reference: string;
      status: string;
      proposer: { email: string; last_names: string };
      vehicle: { reg: string };
      versions: Array<{ version_type: string }>;
    }>();
    assert.equal(body.policy_reference, policy.reference);
    assert.equal(body.status, 'active');
    assert.equal(body.proposer.email, policy.email);
    assert.equal(body.vehicle.reg, policy.reg);
    assert.deepEqual(
      body.versions.map((v) => v.version_type),
      ['nb'],
    );
  });

  test('a full reference finds its policy first', async () => {
    const policy = await seeded(main, 'sandbox', 1_234);
    const [first] = await search({ q: policy.reference });
    assert.ok(first !== undefined);
    assert.equal(first.policy_reference, policy.reference);
    assert.equal(first.email, policy.email);
  });

  test('a rare surname finds the few who have it; a common one fills the limit with matches', async () => {
    const policy = await seeded(main, 'sandbox', RARE_SURNAME_EVERY);
    const rare = await search({ q: policy.lastNames.toLowerCase(), limit: 100 });
    assert.ok(references(rare).includes(policy.reference));
    assert.ok(rare.length < 10, `${String(rare.length)} policies with a rare surname`);
    const common = await search({ q: 'SMITH', limit: 10 });
    assert.equal(common.length, 10);
    for (const found of common)
      assert.match(`${found.policyholder_name ?? ''} ${found.email ?? ''}`, /smith/i);
  });

  test('part of an email finds its policy', async () => {
    const policy = await seeded(main, 'sandbox', 7_777);
    const fragment = policy.email.slice(1, policy.email.indexOf('@') + 4).toUpperCase();
    assert.ok(references(await search({ q: fragment })).includes(policy.reference));
  });

  test('a registration with or without its space, in either case, finds its policy', async () => {
    const policy = await seeded(main, 'sandbox', 9_876);
    for (const q of [policy.reg, policy.reg.replace(' ', ''), policy.reg.toLowerCase().replace(' ', '')]) {
      const found = await search({ q });
      assert.deepEqual(references(found), [policy.reference], q);
      assert.equal(found[0]?.vehicle_reg, policy.reg);
    }
  });

  test('part of a postcode finds its policy', async () => {
    const policy = await seeded(main, 'sandbox', 15_001);
    const partial = policy.postcode.slice(0, -1).toLowerCase();
    const found = await search({ q: partial, limit: 100 });
    assert.ok(references(found).includes(policy.reference), partial);
    assert.ok(references(await search({ q: policy.postcode.replace(' ', '') })).includes(policy.reference));
  });

  test('the company and environment filters keep to their policies', async () => {
    // The same person (index 123) in three places: the main company's sandbox and production, the other's sandbox.
    const [sandbox, production, elsewhere] = await Promise.all([
      seeded(main, 'sandbox', 123),
      seeded(main, 'production', 123),
      seeded(other, 'sandbox', 123),
    ]);
    assert.equal(sandbox.reg, elsewhere.reg);
    assert.equal(sandbox.reg, production.reg);
    const all = await search({ q: sandbox.reg });
    assert.deepEqual(
      references(all).toSorted(),
      [sandbox.reference, production.reference, elsewhere.reference].toSorted(),
    );
    const theirs = await search({ q: sandbox.reg, company_reference: other.companyReference });
    assert.deepEqual(references(theirs), [elsewhere.reference]);
    assert.equal(theirs[0]?.company_reference, other.companyReference);
    const ours = await search({ q: sandbox.reg, company_reference: main.companyReference });
    assert.deepEqual(references(ours).toSorted(), [sandbox.reference, production.reference].toSorted());
    const live = await search({ q: sandbox.reg, environment: 'production' });
    assert.deepEqual(references(live), [production.reference]);
    assert.equal(live[0]?.environment, 'production');
    const sandboxOnly = await search({
      q: sandbox.reg,
      environment: 'sandbox',
      company_reference: main.companyReference,
    });
    assert.deepEqual(references(sandboxOnly), [sandbox.reference]);
    assert.deepEqual(await search({ q: sandbox.reg, company_reference: 'co_nobody' }), []);
  });
});
