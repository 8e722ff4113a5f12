import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { exampleRateBookContent, make } from '../rating/rate-book-support.ts';
import { signInStaff, type SignedInStaff } from './staff-support.ts';

const clock = fixedClock('2025-06-10T12:00:00Z');

type Company = Awaited<ReturnType<typeof createCompany>>;

interface AuditRecord {
  actor: string;
  action: string;
  resource: string | null;
  outcome: string;
  table: string | null;
  after: unknown;
}

let t: TestApp;
let acme: Company;
let other: Company;
let ada: SignedInStaff;
let bob: SignedInStaff;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
  ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  await make.rateBook(t, acme.sandbox, 'ppm', 'rbA');
});
after(() => t.close());

/** A staff session's headers acting for `company` in sandbox, as the console sends them. */
const as = (staff: SignedInStaff, company: Company = acme): Record<string, string> => ({
  ...staff.headers,
  client_id: company.client_id,
  environment: 'sandbox',
});

async function auditOf(answer: { headers: Record<string, unknown> }): Promise<AuditRecord[]> {
  const requestId = answer.headers['x-request-id'];
  assert.equal(typeof requestId, 'string');
  const r = await t.app.inject({
    url: `/admin/audit?request_id=${String(requestId)}`,
    headers: t.adminHeaders,
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ data: AuditRecord[] }>().data;
}

const post = (url: string, headers: Record<string, string>, payload?: object) =>
  t.app.inject({ method: 'POST', url, headers, ...(payload === undefined ? {} : { payload }) });

/** The one record of a request the handler refused, with the problem it answered. */
function assertRefusal(
  records: AuditRecord[],
  expected: { actor: string; action: string; status: number; code: string },
) {
  assert.equal(records.length, 1, JSON.stringify(records));
  const [record] = records;
  assert.deepEqual(
    { actor: record?.actor, action: record?.action, outcome: record?.outcome, table: record?.table },
    { actor: expected.actor, action: expected.action, outcome: 'denied', table: null },
  );
  assert.deepEqual(record?.after, { status: expected.status, code: expected.code });
}

describe('a request the handler refuses is recorded once, as refused', () => {
  test('the author approving their own version: 403 FOUR_EYES_REQUIRED, one denied record', async () => {
    const drafted = await post('/rate-books/rbA/versions', as(ada), { content: exampleRateBookContent() });
    assert.equal(drafted.statusCode, 201, drafted.body);
    const own = await post('/rate-books/rbA/versions/1/approve', as(ada));
    assert.equal(own.statusCode, 403, own.body);
    assert.equal(own.json<{ code: string }>().code, 'FOUR_EYES_REQUIRED');
    assertRefusal(await auditOf(own), {
      actor: 'staff:ada@insurer.example',
      action: 'rateBooks.approveVersion',
      status: 403,
      code: 'FOUR_EYES_REQUIRED',
    });

    // Another company's rate book of that name does not exist: 404, recorded as refused too.
    const elsewhere = await post('/rate-books/rbA/versions/1/approve', as(bob, other));
    assert.equal(elsewhere.statusCode, 404, elsewhere.body);
    assertRefusal(await auditOf(elsewhere), {
      actor: 'staff:bob@insurer.example',
      action: 'rateBooks.approveVersion',
      status: 404,
      code: 'NOT_FOUND',
    });

    const approved = await post('/rate-books/rbA/versions/1/approve', as(bob));
    assert.equal(approved.statusCode, 200, approved.body);
    const records = await auditOf(approved);
    assert.ok(
      records.some((r) => r.table === 'rate_book_versions'),
      JSON.stringify(records),
    );
    assert.ok(
      records.every((r) => r.outcome === 'ok' && r.table !== null),
      'a success is its rows, all ok, and no record of the request besides',
    );

    const again = await post('/rate-books/rbA/versions/1/approve', as(bob));
    assert.equal(again.statusCode, 409, again.body);
    assertRefusal(await auditOf(again), {
      actor: 'staff:bob@insurer.example',
      action: 'rateBooks.approveVersion',
      status: 409,
      code: 'CONFLICT',
    });
  });

  test('an impact test of another company’s rate book: 404 recorded as refused; a run once as ok', async () => {
    const url = '/admin/rate-books/rbA/versions/1/impact';
    const refused = await post(url, t.adminHeaders, {
      company_reference: other.company_reference,
      environment: 'sandbox',
    });
    assert.equal(refused.statusCode, 404, refused.body);
    assertRefusal(await auditOf(refused), {
      actor: 'admin-key',
      action: 'rateBooks.impact',
      status: 404,
      code: 'NOT_FOUND',
    });

    const body = { company_reference: acme.company_reference, environment: 'sandbox' };
    const run = await post(url, t.adminHeaders, body);
    assert.equal(run.statusCode, 200, run.body);
    const records = await auditOf(run);
    assert.deepEqual(
      records.map((r) => [r.action, r.outcome, r.table, r.after]),
      [['rateBooks.impact', 'ok', null, body]],
    );
  });

  test('the admin key deciding a referral: 403, one denied record', async () => {
    const refused = await post(`/admin/referrals/${randomUUID()}/decision`, t.adminHeaders, {
      company_reference: acme.company_reference,
      environment: 'sandbox',
      decision: 'approve',
      reason: 'looks fine',
    });
    assert.equal(refused.statusCode, 403, refused.body);
    assertRefusal(await auditOf(refused), {
      actor: 'admin-key',
      action: 'quotes.decideReferral',
      status: 403,
      code: 'FORBIDDEN',
    });
  });

  test('a recorded read the handler refuses is recorded as refused; one it answers, once as ok', async () => {
    const unknown = await t.app.inject({
      url: '/admin/policyholders/U-NOBODY/export',
      headers: { cookie: ada.cookie },
    });
    assert.equal(unknown.statusCode, 404, unknown.body);
    assertRefusal(await auditOf(unknown), {
      actor: 'staff:ada@insurer.example',
      action: 'policyholders.export',
      status: 404,
      code: 'NOT_FOUND',
    });

    const query = {
      company_reference: acme.company_reference,
      environment: 'sandbox',
      from: '2025-06-01',
      to: '2025-06-10',
    };
    const cash = await t.app.inject({
      url: `/admin/reports/cash?${new URLSearchParams(query).toString()}`,
      headers: { cookie: ada.cookie },
    });
    assert.equal(cash.statusCode, 200, cash.body);
    assert.deepEqual(
      (await auditOf(cash)).map((r) => [r.action, r.outcome, r.after]),
      [['reports.cash', 'ok', { ...query, format: 'json' }]],
    );
  });

  test('a role refused before the handler runs is recorded once, with its problem', async () => {
    const viewer = await signInStaff(t, 'val@insurer.example', 'viewer');
    const refused = await post('/rate-books/rbA/versions/1/approve', as(viewer));
    assert.equal(refused.statusCode, 403, refused.body);
    assertRefusal(await auditOf(refused), {
      actor: 'staff:val@insurer.example',
      action: 'rateBooks.approveVersion',
      status: 403,
      code: 'FORBIDDEN',
    });
  });
});
