import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;

let t: TestApp;
let acme: Company;
let other: Company;

before(async () => {
  t = await createTestApp();
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
});
after(() => t.close());

describe('GET /policys/:policy_reference/direct-debit', () => {
  test('a policy without a Direct Debit has no mandates or collections, and the company’s notice period', async () => {
    const policy = await make.livePolicy(t.app, acme.sandbox);
    const response = await t.app.inject({
      method: 'GET',
      url: `/policys/${policy.reference}/direct-debit`,
      headers: acme.sandbox,
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), {
      policy_reference: policy.reference,
      notice_working_days: 10,
      mandates: [],
      collections: [],
    });
  });

  test('another company’s policy, or another environment’s, is not found', async () => {
    const policy = await make.livePolicy(t.app, acme.sandbox);
    for (const headers of [other.sandbox, acme.production]) {
      const response = await t.app.inject({
        method: 'GET',
        url: `/policys/${policy.reference}/direct-debit`,
        headers,
      });
      assert.equal(response.statusCode, 404, response.body);
    }
  });

  test('a reference longer than any policy’s is refused before it is looked up', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const response = await t.app.inject({
        method,
        url: `/policys/${'P'.repeat(101)}/direct-debit${method === 'POST' ? '/setup-intents' : ''}`,
        headers: acme.sandbox,
      });
      assert.equal(response.statusCode, 414, response.body);
    }
  });
});

describe('POST /policys/:policy_reference/direct-debit/setup-intents', () => {
  test('another company’s policy is not found, and nothing is asked of the processor', async () => {
    const policy = await make.livePolicy(t.app, acme.sandbox);
    const response = await t.app.inject({
      method: 'POST',
      url: `/policys/${policy.reference}/direct-debit/setup-intents`,
      headers: other.sandbox,
    });
    assert.equal(response.statusCode, 404, response.body);
    const rows = await t.container.database.db.selectFrom('direct_debit_mandates').select('id').execute();
    assert.equal(rows.length, 0);
  });

  test('without credentials it is 401', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/policys/P-1/direct-debit/setup-intents',
    });
    assert.equal(response.statusCode, 401, response.body);
  });
});

describe('the company’s advance notice period', () => {
  const url = () => `/admin/companies/${acme.company_reference}/direct-debit`;

  test('defaults to the Bacs 10 working days and can be set between 3 and 30', async () => {
    const read = await t.app.inject({ method: 'GET', url: url(), headers: t.adminHeaders });
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(read.json<{ notice_working_days: number }>().notice_working_days, 10);
    const set = await t.app.inject({
      method: 'PUT',
      url: url(),
      headers: t.adminHeaders,
      payload: { notice_working_days: 5 },
    });
    assert.equal(set.statusCode, 200, set.body);
    const again = await t.app.inject({ method: 'GET', url: url(), headers: t.adminHeaders });
    assert.equal(again.json<{ notice_working_days: number }>().notice_working_days, 5);
    await t.app.inject({
      method: 'PUT',
      url: url(),
      headers: t.adminHeaders,
      payload: { notice_working_days: 10 },
    });
  });

  test('fewer than 3 working days is refused, by the API and by the database', async () => {
    for (const days of [2, 0, 31, 4.5]) {
      const response = await t.app.inject({
        method: 'PUT',
        url: url(),
        headers: t.adminHeaders,
        payload: { notice_working_days: days },
      });
      assert.equal(response.statusCode, 422, `${String(days)}: ${response.body}`);
    }
    await assert.rejects(
      sql`update companies set direct_debit_notice_working_days = 2`.execute(t.container.database.db),
    );
  });

  test('an unknown company is 404, and without the admin key 401', async () => {
    const unknown = await t.app.inject({
      method: 'GET',
      url: '/admin/companies/NOPE/direct-debit',
      headers: t.adminHeaders,
    });
    assert.equal(unknown.statusCode, 404, unknown.body);
    const anonymous = await t.app.inject({ method: 'GET', url: url(), headers: acme.sandbox });
    assert.equal(anonymous.statusCode, 401, anonymous.body);
  });
});

describe('GET /admin/collections', () => {
  const query = (q: Record<string, string>) =>
    t.app.inject({
      method: 'GET',
      url: `/admin/collections?${new URLSearchParams(q).toString()}`,
      headers: t.adminHeaders,
    });

  const daysOf = async (from: string, to: string) => {
    const response = await query({
      company_reference: acme.company_reference,
      environment: 'sandbox',
      from,
      to,
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.json<{ days: Array<{ day: string; scheduled: { count: number } }> }>().days;
  };

  test('every day of the range, empty when nothing is collected', async () => {
    const days = await daysOf('2026-03-27', '2026-04-02');
    assert.deepEqual(
      days.map((d) => d.day),
      ['2026-03-27', '2026-03-28', '2026-03-29', '2026-03-30', '2026-03-31', '2026-04-01', '2026-04-02'],
    );
    assert.ok(days.every((d) => d.scheduled.count === 0));
  });

  test('the last days a date can name: the range ends on 9999-12-31 and the answer comes', async () => {
    const days = await daysOf('9999-12-30', '9999-12-31');
    assert.deepEqual(
      days.map((d) => d.day),
      ['9999-12-30', '9999-12-31'],
    );
  });

  test('the first days a date can name: 1000-01-01 is answered, a year before 1000 (0000, 0999) is 422', async () => {
    const days = await daysOf('1000-01-01', '1000-01-02');
    assert.deepEqual(
      days.map((d) => d.day),
      ['1000-01-01', '1000-01-02'],
    );
    const base = { company_reference: acme.company_reference, environment: 'sandbox' };
    for (const range of [
      { from: '0000-01-01', to: '0000-01-02' },
      { from: '0999-12-31', to: '1000-01-01' },
    ]) {
      const response = await query({ ...base, ...range });
      assert.equal(response.statusCode, 422, `${JSON.stringify(range)}: ${response.body}`);
      assert.equal(response.json<{ errors: Array<{ path: string }> }>().errors[0]?.path, '/querystring/from');
    }
  });

  test('a range backwards, too long, or not of dates is refused; an unknown company is 404', async () => {
    const base = { company_reference: acme.company_reference, environment: 'sandbox' };
    for (const range of [
      { from: '2026-04-02', to: '2026-04-01' },
      { from: '2026-01-01', to: '2026-06-01' },
      { from: '2026-02-30', to: '2026-03-01' },
      { from: 'yesterday', to: '2026-03-01' },
    ]) {
      const response = await query({ ...base, ...range });
      assert.equal(response.statusCode, 422, `${JSON.stringify(range)}: ${response.body}`);
    }
    const unknown = await query({ ...base, company_reference: 'NOPE', from: '2026-01-01', to: '2026-01-02' });
    assert.equal(unknown.statusCode, 404, unknown.body);
  });

  test('client credentials are not staff: 401', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: `/admin/collections?company_reference=${acme.company_reference}&environment=sandbox&from=2026-01-01&to=2026-01-02`,
      headers: acme.sandbox,
    });
    assert.equal(response.statusCode, 401, response.body);
  });
});
