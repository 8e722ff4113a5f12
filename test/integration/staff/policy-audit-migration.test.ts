import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { migrations } from '../../../src/migrations/index.ts';
import type { DatabaseHandle } from '../../../src/platform/db/database.ts';
import { migrateToLatest } from '../../../src/platform/db/migrate.ts';
import { createEmptyDatabase } from '../../support/database.ts';

// Migration 0037 on a trail the earlier audit trigger wrote: migrated up to just before it, actions
// recorded by that trigger, then migrated to the latest. Records of an action on a policy that the
// old trigger left without the policy get it; records of nothing of the policy's stay as they were.
const MIGRATION = '0037-policy-audit';
const before0037 = Object.fromEntries(
  Object.entries(migrations).slice(0, Object.keys(migrations).indexOf(MIGRATION)),
);

let handle: DatabaseHandle<unknown>;
before(async () => {
  handle = await createEmptyDatabase<unknown>();
});
after(() => handle.close());

const ACME = '00000000-0000-4000-8000-00000000000a';
const OTHER = '00000000-0000-4000-8000-00000000000b';
const USER = '00000000-0000-4000-8000-0000000000a1';
const POLICY = '00000000-0000-4000-8000-0000000000a2';
const ENDPOINT = '00000000-0000-4000-8000-0000000000a3';
const REFERENCE = 'amber-falcon-river';
const AT = '2025-07-20T12:00:00Z';

/** Runs `work` in one transaction attributed to a staff action, as a request's transactions are. */
async function asAction(
  db: Kysely<unknown>,
  context: { requestId: string; action: string; resource: string | null; companyId: string | null },
  work: (trx: Kysely<unknown>) => Promise<void>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select set_config('milepost.audit', ${JSON.stringify({
      at: AT,
      request_id: context.requestId,
      actor: 'staff:olive.ops@insurer.example',
      staff_id: null,
      role: 'operations',
      action: context.action,
      resource: context.resource,
      company_id: context.companyId,
      environment: context.companyId === null ? null : 'sandbox',
      source_address: '127.0.0.1',
    })}, true)`.execute(trx);
    await work(trx);
  });
}

async function seed(db: Kysely<unknown>): Promise<void> {
  for (const [id, name] of [
    [ACME, 'acme'],
    [OTHER, 'other'],
  ] as const)
    await sql`
      insert into companies (id, company_reference, name, client_id, production_secret_hash,
        sandbox_secret_hash, stripe_sandbox_key)
      values (${id}, ${`co_${name}`}, ${name}, ${`client_${name}`}, '\\x00', '\\x00', ${`sk_test_${name}`})`.execute(
      db,
    );
  await sql`
    insert into users (id, user_reference, company_id, environment, email, username, first_names, last_names,
      password_hash, password_is_temporary, created_at, updated_at)
    values (${USER}, 'u_fern', ${ACME}, 'sandbox', 'fern@example.com', 'fern', 'Fern', 'Holder', 'x', true,
      ${AT}, ${AT})`.execute(db);
  await sql`
    insert into policies (id, policy_reference, company_id, environment, user_id, status, version_count,
      current_start_at, current_end_at, first_start_at, subscription_premium_pence, created_at, updated_at)
    values (${POLICY}, ${REFERENCE}, ${ACME}, 'sandbox', ${USER}, 'active', 1, '2025-06-01T00:00:00Z',
      '2026-05-31T23:00:00Z', '2025-06-01T00:00:00Z', 0, ${AT}, ${AT})`.execute(db);
  await sql`insert into policy_references (policy_reference, policy_id) values (${REFERENCE}, ${POLICY})`.execute(
    db,
  );
  await sql`
    insert into webhook_endpoints (id, endpoint_reference, company_id, environment, url, enabled, secret,
      created_at, updated_at)
    values (${ENDPOINT}, 'we_acme', ${ACME}, 'sandbox', 'https://hooks.example.com/x', true, 'whsec_x', ${AT},
      ${AT})`.execute(db);

  // A credit granted through an admin route (no tenant): its event, and a version with no company.
  await asAction(
    db,
    {
      requestId: 'req-credit',
      action: 'statements.grantCredit',
      resource: `policy_reference:${REFERENCE}`,
      companyId: null,
    },
    async (trx) => {
      await sql`
        insert into events (company_id, environment, type, data, created_at)
        values (${ACME}, 'sandbox', 'credit.granted', ${JSON.stringify({ policy_reference: REFERENCE, amount: 7.5 })},
          ${AT})`.execute(trx);
      await sql`
        insert into policy_versions (policy_id, sequence, version_type, snapshot, effective_at, created_at)
        values (${POLICY}, 2, 'st', '{}', ${AT}, ${AT})`.execute(trx);
    },
  );
  // The welcome email again: the account it changes names no policy.
  await asAction(
    db,
    {
      requestId: 'req-welcome',
      action: 'policies.resendWelcome',
      resource: `policy_reference:${REFERENCE}`,
      companyId: ACME,
    },
    async (trx) => {
      await sql`update users set password_is_temporary = true, first_names = 'Fern Ann' where id = ${USER}`.execute(
        trx,
      );
    },
  );
  // The policy's event replayed to an endpoint: a delivery, which names the event only.
  const event = (
    await sql<{ id: string; created_at: Date }>`
      select id, created_at from events where type = 'credit.granted'`.execute(db)
  ).rows[0];
  assert.ok(event !== undefined);
  await asAction(
    db,
    { requestId: 'req-replay', action: 'events.replay', resource: `event_id:${event.id}`, companyId: ACME },
    async (trx) => {
      await sql`
        insert into webhook_deliveries (delivery_reference, endpoint_id, event_id, event_created_at, event_type,
          status, created_at, updated_at)
        values ('wd_replay', ${ENDPOINT}, ${event.id}, ${event.created_at}, 'credit.granted', 'pending', ${AT},
          ${AT})`.execute(trx);
    },
  );
  // Another company's event that happens to carry the same reference: not the policy's.
  await asAction(
    db,
    { requestId: 'req-other', action: 'events.replay', resource: null, companyId: OTHER },
    async (trx) => {
      await sql`
        insert into events (company_id, environment, type, data, created_at)
        values (${OTHER}, 'sandbox', 'credit.granted', ${JSON.stringify({ policy_reference: REFERENCE })}, ${AT})`.execute(
        trx,
      );
    },
  );
  // Request records the service wrote itself: one that acted, one refused before touching anything.
  for (const [requestId, outcome] of [
    ['req-done', 'ok'],
    ['req-denied', 'denied'],
  ] as const)
    await sql`
      insert into audit_records (occurred_at, request_id, actor, action, resource, outcome)
      values (${AT}, ${requestId}, 'staff:olive.ops@insurer.example', 'devices.bind',
        ${`policy_reference:${REFERENCE}`}, ${outcome})`.execute(db);
}

interface Trail {
  request_id: string;
  table_name: string | null;
  policy_id: string | null;
  company_id: string | null;
  environment: string | null;
}

const trail = async (db: Kysely<unknown>): Promise<Trail[]> =>
  (
    await sql<Trail>`
      select request_id, table_name, policy_id, company_id, environment from audit_records
      where request_id like 'req-%' order by id`.execute(db)
  ).rows;

test('0037 gives the policy to the records of actions on it that the old trigger left without', async () => {
  const db = handle.db;
  await migrateToLatest(db, before0037);
  await seed(db);
  const old = await trail(db);
  assert.ok(
    old.some((r) => r.table_name === 'events' && r.request_id === 'req-credit' && r.policy_id === null),
    'the old trigger recorded the credit’s event without its policy',
  );

  const applied = await migrateToLatest(db, migrations);
  assert.ok(applied.includes(MIGRATION), applied.join());

  const name = (r: Trail) => `${r.request_id} ${r.table_name ?? '(request)'}`;
  const ofPolicy = (await trail(db)).map((r) => [
    name(r),
    r.policy_id === POLICY ? 'policy' : r.policy_id,
    r.company_id === ACME ? 'acme' : r.company_id === OTHER ? 'other' : r.company_id,
    r.environment,
  ]);
  assert.deepEqual(ofPolicy, [
    ['req-credit events', 'policy', 'acme', 'sandbox'],
    ['req-credit policy_versions', 'policy', 'acme', 'sandbox'],
    ['req-welcome users', 'policy', 'acme', 'sandbox'],
    ['req-replay webhook_deliveries', 'policy', 'acme', 'sandbox'],
    ['req-other events', null, 'other', 'sandbox'],
    ['req-done (request)', 'policy', 'acme', 'sandbox'],
    ['req-denied (request)', null, null, null],
  ]);

  await assert.rejects(
    sql`update audit_records set actor = 'someone else'`.execute(db),
    /append-only/,
    'the trail is append-only again',
  );
});
