import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { OWN_WRITE_SHADOW_MS } from '../../../src/modules/policies/policy-row-cache.ts';
import { supersedeVersions } from '../../../src/modules/policies/policy-repository.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { openDatabase, type DatabaseHandle } from '../../../src/platform/db/database.ts';
import type { Database } from '../../../src/schema.ts';
import { createCompany, createTestApp, signedInPolicyholder, type TestApp } from '../../support/app.ts';
import { createTestDatabase, onPostgres } from '../../support/database.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';

/**
 * Policy reads are served from memory in each process (the policy rows, and the policy object built
 * from them, their versions, payments and account) and dropped on the change feed. Two instances of
 * the service share one database here (on PostgreSQL each with its own pool and LISTEN connection; on
 * PGlite, one process, they share the database): every kind of write, through either instance or
 * straight to a table, is seen by the very next read through both, by reference and by the
 * policyholder. The example policy's term runs 2025-06-01 to 2026-05-31 (London).
 */
interface PolicyBody {
  policy_reference: string;
  user_reference: string;
  status: string;
  vehicle: { reg: string };
  renewal?: { automatic: boolean; policy_version_reference: string | null; pricing: { usage_rate: number } };
  versions: Array<{ version_type: string; policy_version_reference: string; superseded: boolean }>;
  payments: Array<{ payment_reference: string; amount: number }>;
}
type Company = Awaited<ReturnType<typeof createCompany>>;

const clock = fixedClock('2025-09-15T12:00:00Z');
let database: DatabaseHandle<Database>;
let a: TestApp;
let b: TestApp;
let acme: Company;

/** The shared database, left open when an instance closes: it is closed once, last. */
const kept = (handle: DatabaseHandle<Database>): DatabaseHandle<Database> => ({
  ...handle,
  close: () => Promise.resolve(),
});

before(async () => {
  database = await createTestDatabase();
  a = await createTestApp({ overrides: { clock, database: kept(database) } });
  b = await createTestApp({
    overrides: {
      clock,
      database:
        onPostgres && database.connectionString !== undefined
          ? await openDatabase<Database>({ connectionString: database.connectionString, poolSize: 4 })
          : kept(database),
    },
  });
  acme = await createCompany(a.app, 'Acme');
  for (let i = 0; i < 300 && !(a.container.changes.live && b.container.changes.live); i++) await sleep(10);
  assert.ok(a.container.changes.live && b.container.changes.live, 'both instances listen');
});
after(async () => {
  await b.close();
  await a.close();
  await database.close();
});

let counter = 0;
const usageRate = (rate: number) => ({ pricing: { ...examplePolicyInput().pricing, usage_rate: rate } });

/** A policy whose holder is signed in, read through both instances until both hold it in memory. */
async function cachedPolicy(autoRenew = false) {
  const email = `cache${String(++counter)}.${String(process.pid)}@example.com`;
  const holder = await signedInPolicyholder(
    a,
    acme.sandbox,
    email,
    examplePolicyInput({ proposer: { email }, policy: { auto_renew: autoRenew } }),
  );
  // The writing instance reads from the database for a moment after its own writes: wait that out,
  // so the reads below are kept and the reads after the write under test could come from memory.
  await sleep(OWN_WRITE_SHADOW_MS + 50);
  const reads = async () => Promise.all([a, b].map((app) => readBoth(app, holder)));
  await reads();
  const held = await reads();
  return { reference: holder.policyReference, holder, before: held[0]![0] };
}

async function readBoth(
  app: TestApp,
  holder: { policyReference: string; accessToken: string },
): Promise<[PolicyBody, PolicyBody]> {
  const byReference = await app.app.inject({
    url: `/policys/${holder.policyReference}`,
    headers: acme.sandbox,
  });
  const asHolder = await app.app.inject({
    url: '/policys/details',
    headers: { authorization: `Bearer ${holder.accessToken}` },
  });
  assert.equal(byReference.statusCode, 200, byReference.body);
  assert.equal(asHolder.statusCode, 200, asHolder.body);
  return [byReference.json<PolicyBody>(), asHolder.json<PolicyBody>()];
}

/** The next read through each instance, by reference and as the policyholder, with no retry. */
async function readEverywhere(holder: { policyReference: string; accessToken: string }) {
  const answers: Array<{ where: string; body: PolicyBody }> = [];
  for (const [name, app] of [
    ['A', a],
    ['B', b],
  ] as const) {
    const [byReference, asHolder] = await readBoth(app, holder);
    answers.push({ where: `${name} by reference`, body: byReference });
    answers.push({ where: `${name} as the policyholder`, body: asHolder });
  }
  return answers;
}

async function post(app: TestApp, url: string, payload: object, expected: number): Promise<PolicyBody> {
  const r = await app.app.inject({ method: 'POST', url, headers: acme.sandbox, payload });
  assert.equal(r.statusCode, expected, r.body);
  return r.json<PolicyBody>();
}

describe('a write shows in the next read through every instance', () => {
  test('renewal terms stored for an auto-renewing policy (202), then replaced', async () => {
    const { reference, holder, before: held } = await cachedPolicy(true);
    assert.equal(held.renewal, undefined);
    const stored = await post(a, `/policys/${reference}/renewals`, usageRate(0.05), 202);
    assert.equal(stored.renewal?.automatic, true);
    for (const { where, body } of await readEverywhere(holder)) {
      assert.equal(body.renewal?.automatic, true, where);
      assert.equal(body.renewal.pricing.usage_rate, 0.05, where);
    }
    // Stored again through the other instance: the newer terms replace the first everywhere.
    await post(b, `/policys/${reference}/renewals`, usageRate(0.06), 202);
    for (const { where, body } of await readEverywhere(holder))
      assert.equal(body.renewal?.pricing.usage_rate, 0.06, where);
  });

  test('auto-renew turned off by an adjustment: the stored terms no longer show', async () => {
    const { reference, holder } = await cachedPolicy(true);
    await post(a, `/policys/${reference}/renewals`, usageRate(0.05), 202);
    await readEverywhere(holder);
    await post(
      b,
      '/policys',
      examplePolicyInput({
        proposer: { email: holder.email },
        policy: { policy_reference: reference, auto_renew: false },
      }),
      200,
    );
    for (const { where, body } of await readEverywhere(holder)) assert.equal(body.renewal, undefined, where);
  });

  test('a renewal written now (201)', async () => {
    const { reference, holder } = await cachedPolicy();
    const renewed = await post(a, `/policys/${reference}/renewals`, usageRate(0.07), 201);
    for (const { where, body } of await readEverywhere(holder)) {
      assert.equal(body.renewal?.automatic, false, where);
      assert.equal(body.renewal.policy_version_reference, renewed.renewal?.policy_version_reference, where);
    }
  });

  test('an adjustment', async () => {
    const { reference, holder } = await cachedPolicy();
    await post(
      b,
      '/policys',
      examplePolicyInput({
        proposer: { email: holder.email },
        policy: { policy_reference: reference },
        vehicle: { reg: 'CA51 NEW' },
      }),
      200,
    );
    for (const { where, body } of await readEverywhere(holder)) {
      assert.equal(body.vehicle.reg, 'CA51 NEW', where);
      assert.deepEqual(
        body.versions.map((v) => v.version_type),
        ['nb', 'mta'],
        where,
      );
    }
  });

  test('a cancellation', async () => {
    const { reference, holder } = await cachedPolicy();
    const r = await a.app.inject({
      method: 'DELETE',
      url: `/policys/${reference}`,
      headers: acme.sandbox,
      payload: { reason: 'sold the car' },
    });
    assert.equal(r.statusCode, 200, r.body);
    for (const { where, body } of await readEverywhere(holder)) assert.equal(body.status, 'cancelled', where);
  });
});

describe('a write straight to a table a policy read draws on shows at once (the database notifies)', () => {
  test('policy_versions: a stored renewal superseded in place', async () => {
    const { reference, holder } = await cachedPolicy();
    const renewed = await post(a, `/policys/${reference}/renewals`, usageRate(0.07), 201);
    const rn = renewed.renewal?.policy_version_reference;
    assert.ok(rn !== null && rn !== undefined);
    await sleep(OWN_WRITE_SHADOW_MS + 50);
    await readEverywhere(holder);
    await readEverywhere(holder);
    // As a code path that changes versions without touching the policy row would.
    await supersedeVersions(database.db, [rn], clock.now());
    for (const { where, body } of await readEverywhere(holder)) {
      assert.equal(body.renewal, undefined, where);
      assert.equal(body.versions.find((v) => v.policy_version_reference === rn)?.superseded, true, where);
    }
  });

  test('payments: a payment recorded without touching the policy row', async () => {
    const { reference, holder, before: held } = await cachedPolicy();
    assert.deepEqual(held.payments, []);
    const inserted = await sql<{ id: string }>`
      insert into payments (company_id, environment, policy_id, kind, purpose, status, amount_pence,
        currency, provider, created_at, updated_at)
      select company_id, environment, id, 'charge', 'adjustment', 'succeeded', 1250, 'GBP', 'stripe',
        ${clock.now()}, ${clock.now()}
      from policies where policy_reference = ${reference}
      returning id`.execute(database.db);
    const id = inserted.rows[0]?.id;
    for (const { where, body } of await readEverywhere(holder))
      assert.deepEqual(
        body.payments.map((p) => [p.payment_reference, p.amount]),
        [[id, 12.5]],
        where,
      );
  });

  test('users: the account a policy belongs to', async () => {
    const { reference, holder, before: held } = await cachedPolicy();
    const next = `${held.user_reference}X`;
    await sql`
      update users set user_reference = ${next}
      where id = (select user_id from policies where policy_reference = ${reference})`.execute(database.db);
    // The policyholder's access token names the old reference: read by reference only.
    for (const app of [a, b]) {
      const r = await app.app.inject({ url: `/policys/${holder.policyReference}`, headers: acme.sandbox });
      assert.equal(r.json<PolicyBody>().user_reference, next);
    }
  });
});
