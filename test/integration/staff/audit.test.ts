import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { signInStaff, type SignedInStaff } from './staff-support.ts';

// The example policy's term: 2025-06-01 to 2026-05-31 (London), billing day 1.
const clock = fixedClock('2025-07-20T12:00:00Z');

interface AuditRecord {
  id: string;
  actor: string;
  role: string | null;
  action: string;
  resource: string | null;
  company_reference: string | null;
  environment: string | null;
  policy_reference: string | null;
  request_id: string;
  source_address: string | null;
  outcome: string;
  table: string | null;
  key: string | null;
  operation: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let ops: SignedInStaff;
let viewer: SignedInStaff;
let admin: SignedInStaff;

before(async () => {
  t = await createTestApp({ overrides: { clock }, listen: true });
  acme = await createCompany(t.app, 'Acme');
  ops = await signInStaff(t, 'olive.ops@insurer.example', 'operations');
  viewer = await signInStaff(t, 'victor.viewer@insurer.example', 'viewer');
  admin = await signInStaff(t, 'ada.admin@insurer.example', 'admin');
});
after(() => t.close());

let n = 0;
/** A policy garaged at `postcode` for `reg`, its holder's surname its own. */
async function newPolicy(postcode: string, reg: string): Promise<string> {
  const policy = await make.policy(t.app, acme, {
    proposer: { last_names: `Fairweather${String(++n)}` },
    policy: { address: { postcode } },
    vehicle: { reg },
  });
  return policy.reference;
}

const journey = (reference: string, startIso: string) => make.journey(t.app, acme, reference, startIso);
const statement = (reference: string, effectiveIso: string) =>
  make.statement(t.app, acme, reference, effectiveIso);

/** The console's view of a company: the staff cookie, and the company named by its client id. */
const asStaff = (who: SignedInStaff) => ({
  ...who.headers,
  client_id: acme.client_id,
  environment: 'sandbox',
});

async function auditOf(requestId: string): Promise<AuditRecord[]> {
  const r = await t.app.inject({ url: `/admin/audit?request_id=${requestId}`, headers: t.adminHeaders });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ data: AuditRecord[] }>().data;
}

describe('the back office, end to end', () => {
  test('operations finds a policyholder by postcode, grants a credit the next statement uses; a viewer gets 403; the audit says who', async () => {
    const reference = await newPolicy('KY16 9AJ', 'SK19 ABC');
    await newPolicy('KY16 8QF', 'SK20 XYZ');
    await journey(reference, '2025-06-10T08:00:00Z');
    await statement(reference, '2025-06-30T22:59:59Z');

    const found = await t.app.inject({ url: '/admin/policies?q=ky16%209a', headers: { cookie: ops.cookie } });
    assert.equal(found.statusCode, 200, found.body);
    const hits = found.json<{
      data: Array<{ policy_reference: string; postcode: string; company_reference: string }>;
    }>().data;
    assert.deepEqual(
      hits.map((h) => h.policy_reference),
      [reference],
    );
    assert.equal(hits[0]?.postcode, 'KY16 9AJ');
    assert.equal(hits[0].company_reference, acme.company_reference);
    const byReg = await t.app.inject({
      url: '/admin/policies?q=sk19abc',
      headers: { cookie: viewer.cookie },
    });
    assert.deepEqual(
      byReg.json<{ data: Array<{ policy_reference: string }> }>().data.map((h) => h.policy_reference),
      [reference],
      'a viewer may search; the registration matches without its space',
    );

    const credit = {
      company_reference: acme.company_reference,
      environment: 'sandbox',
      policy_reference: reference,
      amount: 7.5,
      reason: 'goodwill: app outage',
    };
    const refused = await t.app.inject({
      method: 'POST',
      url: '/admin/credits',
      headers: viewer.headers,
      payload: credit,
    });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(refused.json<{ code: string }>().code, 'FORBIDDEN');

    // A twin policy without the credit bills the same journeys at full price.
    const twin = await newPolicy('KY16 7AA', 'SK21 DEF');
    await journey(twin, '2025-06-10T08:00:00Z');
    await statement(twin, '2025-06-30T22:59:59Z');

    const granted = await t.app.inject({
      method: 'POST',
      url: '/admin/credits',
      headers: ops.headers,
      payload: credit,
    });
    assert.equal(granted.statusCode, 201, granted.body);

    const ledger = await t.app.inject({
      url: `/admin/credits?company_reference=${acme.company_reference}&environment=sandbox&policy_reference=${reference}`,
      headers: { cookie: viewer.cookie },
    });
    assert.equal(ledger.statusCode, 200, ledger.body);
    assert.equal(ledger.json<{ balance: number }>().balance, 7.5);
    assert.deepEqual(
      ledger
        .json<{ credits: Array<{ amount: number; source: string; reason: string }> }>()
        .credits.map(({ amount, source, reason }) => ({ amount, source, reason })),
      [{ amount: 7.5, source: 'goodwill', reason: 'goodwill: app outage' }],
    );

    await journey(reference, '2025-07-05T08:00:00Z');
    await journey(twin, '2025-07-05T08:00:00Z');
    const next = await statement(reference, '2025-07-15T12:00:00Z');
    const twinNext = await statement(twin, '2025-07-15T12:00:00Z');
    assert.equal(next.total_premium, twinNext.total_premium);
    assert.equal(next.credits_used, 7.5);
    assert.equal(
      Math.round(next.billed_premium * 100),
      Math.round((twinNext.billed_premium - 7.5) * 100),
      'billed £7.50 less',
    );

    const audit = await auditOf(granted.headers['x-request-id'] as string);
    const row = audit.find((r) => r.table === 'policy_credits');
    assert.ok(row !== undefined, JSON.stringify(audit));
    assert.equal(row.actor, 'staff:olive.ops@insurer.example');
    assert.equal(row.role, 'operations');
    assert.equal(row.action, 'statements.grantCredit');
    assert.equal(row.operation, 'insert');
    assert.equal(row.policy_reference, reference);
    assert.equal(row.company_reference, acme.company_reference);
    assert.equal(row.source_address, '127.0.0.1');
    assert.equal(row.after?.['amount_pence'], 750);
    assert.equal(row.after['reason'], 'goodwill: app outage');
    assert.equal(row.before, null);

    const policyAudit = await t.app.inject({
      url: `/admin/audit?company_reference=${acme.company_reference}&environment=sandbox&policy_reference=${reference}`,
      headers: { cookie: viewer.cookie },
    });
    assert.equal(policyAudit.statusCode, 200, policyAudit.body);
    const rows = policyAudit.json<{ data: AuditRecord[] }>().data;
    assert.ok(rows.some((r) => r.action === 'statements.grantCredit' && r.outcome === 'ok'));
    assert.ok(
      !rows.some((r) => r.outcome === 'denied'),
      'a refusal happened before any row was touched: it is recorded against the request, not the policy',
    );
  });

  test('each action records its changed fields before and after, in the transaction of the change', async () => {
    const reference = await newPolicy('EH1 1YZ', 'EH65 AAA');
    const j = await journey(reference, '2025-07-02T08:00:00Z');

    const voided = await t.app.inject({
      method: 'POST',
      url: `/journeys/${j.journey_reference}/void`,
      headers: asStaff(ops),
      payload: { reason: 'passenger, not driver' },
    });
    assert.equal(voided.statusCode, 200, voided.body);
    const voidRows = await auditOf(voided.headers['x-request-id'] as string);
    const journeyRow = voidRows.find((r) => r.table === 'journeys');
    assert.ok(journeyRow !== undefined, JSON.stringify(voidRows));
    assert.equal(journeyRow.operation, 'update');
    assert.equal(journeyRow.action, 'journeys.void');
    assert.equal(journeyRow.resource, `journey_reference:${j.journey_reference}`);
    assert.deepEqual(
      { before: journeyRow.before?.['is_void'], after: journeyRow.after?.['is_void'] },
      { before: false, after: true },
    );
    assert.equal(journeyRow.after?.['void_reason'], 'passenger, not driver');
    assert.equal('route' in journeyRow.after, false, 'routes are not copied into the trail');
    assert.equal('distance_metres' in journeyRow.after, false, 'only the fields that changed');

    const resent = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/welcome-email`,
      headers: asStaff(ops),
    });
    assert.equal(resent.statusCode, 202, resent.body);
    const resentRows = await auditOf(resent.headers['x-request-id'] as string);
    assert.ok(resentRows.some((r) => r.table === 'outbox_emails' && r.operation === 'insert'));
    const userRow = resentRows.find((r) => r.table === 'users');
    assert.ok(userRow !== undefined);
    assert.equal('password_hash' in (userRow.after ?? {}), false, 'no hash ever enters the trail');
    const outbox = resentRows.find((r) => r.table === 'outbox_emails');
    assert.equal(JSON.stringify(outbox).includes('Temporary password'), false, 'nor an email body');

    const bound = await t.app.inject({
      method: 'POST',
      url: '/devices',
      headers: asStaff(ops),
      payload: { device_id: 'obd-audit-1', policy_reference: reference, kind: 'obd' },
    });
    assert.equal(bound.statusCode, 201, bound.body);
    assert.ok(
      (await auditOf(bound.headers['x-request-id'] as string)).some((r) => r.table === 'device_bindings'),
    );

    const cancelled = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${reference}`,
      headers: asStaff(ops),
      payload: { reason: 'sold the car' },
    });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    const cancelRows = await auditOf(cancelled.headers['x-request-id'] as string);
    assert.ok(cancelRows.some((r) => r.table === 'policy_versions' && r.after?.['version_type'] === 'cn'));
    const policyRow = cancelRows.find((r) => r.table === 'policies');
    assert.deepEqual(
      { before: policyRow?.before?.['status'], after: policyRow?.after?.['status'] },
      { before: 'active', after: 'cancelled' },
    );
  });

  test('admin actions and admin-key calls are recorded; a billing run once, not per statement', async () => {
    const made = await t.app.inject({
      method: 'POST',
      url: '/admin/companies',
      headers: admin.headers,
      payload: { name: 'Beta Mutual' },
    });
    assert.equal(made.statusCode, 201, made.body);
    const companyRow = (await auditOf(made.headers['x-request-id'] as string)).find(
      (r) => r.table === 'companies',
    );
    assert.equal(companyRow?.after?.['name'], 'Beta Mutual');
    assert.equal('production_secret_hash' in companyRow.after, false);

    const read = await t.app.inject({ url: '/admin/companies', headers: t.adminHeaders });
    const readRows = await auditOf(read.headers['x-request-id'] as string);
    assert.deepEqual(
      readRows.map((r) => [r.actor, r.action, r.table]),
      [['admin-key', 'companies.list', null]],
    );

    const run = await t.app.inject({
      method: 'POST',
      url: '/admin/billing-runs',
      headers: admin.headers,
      payload: { date: '2025-07-01' },
    });
    assert.equal(run.statusCode, 200, run.body);
    const runRows = await auditOf(run.headers['x-request-id'] as string);
    assert.equal(runRows.length, 1);
    assert.equal(runRows[0]?.action, 'statements.billingRun');
    assert.deepEqual(runRows[0].after, { date: '2025-07-01' });
  });

  test('a billing run streams its progress as server-sent events', async () => {
    const address = `http://127.0.0.1:${String((t.app.server.address() as { port: number }).port)}`;
    const answer = await fetch(`${address}/admin/billing-runs`, {
      method: 'POST',
      headers: { ...t.adminHeaders, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ date: '2025-07-01' }),
    });
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/event-stream/);
    const text = await answer.text();
    assert.match(text, /^event: progress\ndata: \{"date":"2025-07-01"/);
    const done = /event: done\ndata: (.*)\n/.exec(text)?.[1];
    assert.ok(done !== undefined, text);
    const result = JSON.parse(done) as { due: number; already_billed: number; failures: unknown[] };
    assert.equal(result.already_billed, result.due, 'the day was billed by the run before');
    assert.deepEqual(result.failures, []);

    const future = await fetch(`${address}/admin/billing-runs`, {
      method: 'POST',
      headers: { ...t.adminHeaders, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ date: '2030-01-01' }),
    });
    assert.equal(future.status, 422, 'a refused run is an ordinary problem answer');
  });

  test('the audit’s from and to are date-times of years 1000–9999, as every date the API takes', async () => {
    for (const query of ['from=0001-01-01T00:00:00Z', 'to=0000-12-31T23:59:59Z', 'from=yesterday']) {
      const r = await t.app.inject({ url: `/admin/audit?${query}`, headers: t.adminHeaders });
      assert.equal(r.statusCode, 422, `${query}: ${r.body}`);
      assert.match(r.body, /\/querystring\/(from|to)/);
    }
    const ok = await t.app.inject({ url: '/admin/audit?from=1000-01-01T00:00:00Z', headers: t.adminHeaders });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('audit records cannot be changed or deleted, not even in SQL', async () => {
    const db = t.container.database.db;
    await assert.rejects(sql`update audit_records set actor = 'someone else'`.execute(db), /append-only/);
    await assert.rejects(sql`delete from audit_records`.execute(db), /append-only/);
    const methods = await t.app.inject({ method: 'DELETE', url: '/admin/audit', headers: t.adminHeaders });
    assert.equal(methods.statusCode, 404);
  });
});
