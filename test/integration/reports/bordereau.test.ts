import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { fixedClock } from '../../../src/platform/clock.ts';
import { BORDEREAU_BATCH_ROWS, BORDEREAU_COLUMNS } from '../../../src/modules/reports/bordereau-routes.ts';
import { seedPolicies } from '../../../src/seed.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make, type Tenant } from '../../support/factories.ts';
import { examplePolicyInput, type PolicyOverrides } from '../../support/policy-arbitraries.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';

/*
 * A scenario month (June 2025, Europe/London) built through the API: new business, an adjustment, a
 * cancellation, a renewal stored in May for a term starting 1 June, statements with capped days and
 * with a credit used; around it versions of May, July, another company and production that the
 * sandbox June bordereau must leave out.
 */

type Company = Awaited<ReturnType<typeof createCompany>>;
type Row = Record<string, string | number | null>;
interface Report {
  month: string;
  company_reference: string;
  environment: string;
  rows: Row[];
  totals: Record<string, number>;
}

const MONEY = [
  'upfront_premium',
  'subscription_premium',
  'usage_premium',
  'caps_credit',
  'credits_used',
  'gross_premium',
  'ipt',
  'commission',
  'net_premium',
  'fees',
];

const clock = fixedClock('2025-05-10T12:00:00Z');
const unix = (iso: string) => Date.parse(iso) / 1000;
const pence = (pounds: unknown) => Math.round(Number(pounds) * 100);

let t: TestApp;
let acme: Company;
let other: Company;
let ops: SignedInStaff;
let viewer: SignedInStaff;
const refs: Record<string, string> = {};

let n = 0;
/** A policy of `tenant`, its holder numbered in the order made (bdx1@example.com, Surname1, …). */
const newPolicy = (tenant: Tenant, overrides: PolicyOverrides = {}) =>
  make.policy(t.app, tenant, {
    proposer: { email: `bdx${String(++n)}@example.com`, last_names: `Surname${String(n)}` },
    ...overrides,
  });
const journey = (reference: string, startIso: string) => make.journey(t.app, acme, reference, startIso);
const statement = (reference: string, effectiveIso: string) =>
  make.statement(t.app, acme, reference, effectiveIso);

const url = (query: Record<string, string>) =>
  `/admin/reports/bordereau?${new URLSearchParams(query).toString()}`;
const june = (format: string, environment = 'sandbox') =>
  url({ company_reference: acme.company_reference, environment, month: '2025-06', format });

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');

  // In May: a capped product, and a May term renewed for a term from 1 June London (stored ahead).
  const product = await t.app.inject({
    method: 'POST',
    url: '/products',
    headers: acme.sandbox,
    payload: {
      product_reference: 'ppm-capped',
      name: 'Capped',
      usage_unit: 'mile',
      rules: { daily_cap_distance: 1, free_distance_per_statement: 1 },
    },
  });
  assert.equal(product.statusCode, 201, product.body);
  const plainProduct = await t.app.inject({
    method: 'POST',
    url: '/products',
    headers: acme.sandbox,
    payload: { product_reference: 'pay-by-mile-car', name: 'Plain', usage_unit: 'mile', rules: {} },
  });
  assert.equal(plainProduct.statusCode, 201, plainProduct.body);
  const mayStart = unix('2025-04-30T23:00:00Z');
  const mayEnd = unix('2025-05-31T22:59:59Z');
  refs['renewed'] = (
    await newPolicy(acme, {
      policy: { start_date: mayStart, inception_date: mayStart, end_date: mayEnd, auto_renew: false },
    })
  ).reference;
  const renewal = await t.app.inject({
    method: 'POST',
    url: `/policys/${refs['renewed']}/renewals`,
    headers: acme.sandbox,
    payload: { pricing: { ...examplePolicyInput().pricing, upfront_premium: 80.25, ipt_rate: 20 } },
  });
  assert.equal(renewal.statusCode, 201, renewal.body);

  clock.set('2025-07-20T12:00:00Z');
  // Staff sessions expire: signed in at the time the tests run.
  ops = await signInStaff(t, 'olive.ops@insurer.example', 'operations');
  viewer = await signInStaff(t, 'victor.viewer@insurer.example', 'viewer');
  refs['plain'] = (await newPolicy(acme)).reference;
  refs['capped'] = (await newPolicy(acme, { policy: { product_reference: 'ppm-capped' } })).reference;
  const adjusted = await newPolicy(acme);
  refs['adjusted'] = adjusted.reference;
  refs['cancelled'] = (
    await newPolicy(acme, { pricing: { ipt_rate: 9.5, commission_rate: 12.5 } })
  ).reference;
  refs['production'] = (await newPolicy(acme.production)).reference;
  refs['other'] = (await newPolicy(other)).reference;

  // An adjustment from 15 June London: upfront 95.50 → 120.00.
  await make.adjustment(t.app, acme, adjusted, {
    pricing: { upfront_premium: 120 },
    effective_date: unix('2025-06-14T23:00:00Z'),
  });
  const cancel = await t.app.inject({
    method: 'DELETE',
    url: `/policys/${refs['cancelled']}`,
    headers: acme.sandbox,
    payload: { effective_date: unix('2025-06-24T23:00:00Z'), reason: 'sold the car' },
  });
  assert.equal(cancel.statusCode, 200, cancel.body);

  // A credit the plain policy's June statement uses; three journeys on one day for the capped one.
  const credit = await t.app.inject({
    method: 'POST',
    url: '/admin/credits',
    headers: t.adminHeaders,
    payload: {
      company_reference: acme.company_reference,
      environment: 'sandbox',
      policy_reference: refs['plain'],
      amount: 7.5,
      reason: 'goodwill',
    },
  });
  assert.equal(credit.statusCode, 201, credit.body);
  await journey(refs['plain'], '2025-06-03T08:00:00Z');
  for (const hour of ['08', '12', '17']) await journey(refs['capped'], `2025-06-10T${hour}:00:00Z`);
  await journey(refs['adjusted'], '2025-06-20T08:00:00Z');
  for (const reference of [refs['plain'], refs['capped'], refs['adjusted']])
    await statement(reference, '2025-06-30T22:59:59Z');
  // The May term's statement, billed once its renewal (stored ahead, at another IPT rate) has begun.
  await statement(refs['renewed'], '2025-05-31T22:59:59Z');
  await journey(refs['plain'], '2025-07-05T08:00:00Z');
  await statement(refs['plain'], '2025-07-15T22:59:59Z');
});
after(() => t.close());

const adminGet = (path: string) => t.app.inject({ url: path, headers: t.adminHeaders });

describe('GET /admin/reports/bordereau', () => {
  test('June: one row per version of the month, amounts that reconcile, CSV equal to JSON', async () => {
    const answer = await adminGet(june('json'));
    assert.equal(answer.statusCode, 200, answer.body);
    assert.match(String(answer.headers['content-type']), /^application\/json/);
    const report = answer.json<Report>();
    assert.equal(report.month, '2025-06');
    const { rows } = report;

    const kinds = rows.map((r) => `${String(r['policy_reference'])}:${String(r['version_type'])}`);
    assert.deepEqual(
      new Set(kinds),
      new Set([
        `${refs['renewed']}:rn`,
        `${refs['plain']}:nb`,
        `${refs['capped']}:nb`,
        `${refs['adjusted']}:nb`,
        `${refs['cancelled']}:nb`,
        `${refs['adjusted']}:mta`,
        `${refs['cancelled']}:cn`,
        `${refs['plain']}:st`,
        `${refs['capped']}:st`,
        `${refs['adjusted']}:st`,
      ]),
      'May, July, production and another company are left out',
    );
    assert.equal(rows.length, 10);
    // The row writers spell the columns out: every row has them all, in the documented order.
    for (const row of rows) assert.deepEqual(Object.keys(row), [...BORDEREAU_COLUMNS]);
    const order = rows.map((r) => String(r['effective_date']));
    assert.deepEqual(order, [...order].sort(), 'ordered by effective time');

    for (const row of rows) {
      assert.equal(
        pence(row['ipt']) + pence(row['commission']) + pence(row['net_premium']),
        pence(row['gross_premium']),
        'IPT + commission + net = gross',
      );
      assert.equal(
        pence(row['upfront_premium']) +
          pence(row['subscription_premium']) +
          pence(row['usage_premium']) -
          pence(row['caps_credit']),
        pence(row['gross_premium']),
      );
      assert.equal(row['company_reference'], acme.company_reference);
      assert.equal(row['environment'], 'sandbox');
    }
    for (const column of MONEY)
      assert.equal(
        pence(report.totals[column]),
        rows.reduce((sum, r) => sum + pence(r[column]), 0),
        `the total of ${column} is the sum of its rows`,
      );

    const find = (reference: string | undefined, type: string) => {
      const row = rows.find((r) => r['policy_reference'] === reference && r['version_type'] === type);
      assert.ok(row, `${String(reference)} ${type}`);
      return row;
    };
    // nb and rn: the versions' own upfront premium; the descriptive columns from the terms.
    const nb = find(refs['plain'], 'nb');
    assert.equal(nb['upfront_premium'], 95.5);
    assert.equal(nb['effective_date'], '2025-06-01');
    assert.equal(nb['policyholder_surname'], 'Surname2');
    assert.equal(nb['postcode_district'], 'EC1A');
    assert.equal(nb['vehicle_reg'], 'AB12 CDE');
    assert.equal(nb['underwriter_reference'], 'acme-underwriting');
    assert.equal(nb['underwriter_policy_reference'], 'ACM/2025/000123');
    assert.equal(nb['cover'], 'comprehensive');
    // 95.50 at 12 % IPT: 955 × 12 / 112 = 10.2321… → 10.23; commission 15 % of 85.27 = 12.7905 → 12.79.
    assert.deepEqual([nb['ipt'], nb['commission'], nb['net_premium']], [10.23, 12.79, 72.48]);
    assert.equal(find(refs['renewed'], 'rn')['upfront_premium'], 80.25);
    assert.equal(find(refs['renewed'], 'rn')['effective_date'], '2025-06-01');
    // The mta: (120.00 − 95.50) × 351/365 = 23.5603 → 23.56; its fee beside.
    const mta = find(refs['adjusted'], 'mta');
    assert.deepEqual([mta['upfront_premium'], mta['fees'], mta['effective_date']], [23.56, 20, '2025-06-15']);
    // The cancellation: −95.50 × 341/365 = −89.2205 → −89.22; its own rates; no fee, since it was
    // cancelled on the day it was bought, in its cooling-off period.
    const cn = find(refs['cancelled'], 'cn');
    assert.deepEqual(
      [cn['upfront_premium'], cn['fees'], cn['ipt_rate'], cn['commission_rate']],
      [-89.22, 0, 9.5, 12.5],
    );
    assert.ok(Number(cn['ipt']) < 0 && Number(cn['net_premium']) < 0, 'a return premium splits negative');

    // st rows: the statements' own lines, the terms in force's rates.
    const stRows = rows.filter((r) => r['version_type'] === 'st');
    const stored = await sql<{
      subscription: number;
      usage: number;
      caps: number;
      credits: number;
    }>`select sum(subscription_premium_pence)::bigint as subscription, sum(usage_premium_pence)::bigint as usage,
         sum(cap_credit_pence + annual_cap_credit_pence + free_distance_credit_pence - minimum_top_up_pence)::bigint as caps,
         sum(credits_used_pence)::bigint as credits
       from statements where id = any(${stRows.map((r) => String(r['policy_version_reference']))}::uuid[])`.execute(
      t.container.database.db,
    );
    const sums = stored.rows[0];
    assert.ok(sums);
    const sumOf = (column: string) => stRows.reduce((sum, r) => sum + pence(r[column]), 0);
    assert.equal(sumOf('subscription_premium'), sums.subscription);
    assert.equal(sumOf('usage_premium'), sums.usage);
    assert.equal(sumOf('caps_credit'), sums.caps);
    assert.equal(sumOf('credits_used'), sums.credits);
    assert.ok(pence(find(refs['capped'], 'st')['caps_credit']) > 0, 'the capped day and free distance show');
    assert.equal(find(refs['plain'], 'st')['credits_used'], 7.5, 'the credit paid part of the statement');
    assert.equal(find(refs['plain'], 'st')['statement_start_date'], '2025-06-01');
    assert.equal(find(refs['plain'], 'st')['statement_end_date'], '2025-06-30');
    assert.equal(find(refs['plain'], 'st')['ipt_rate'], 12);

    // The CSV: the same rows and values, an attachment, and the TOTAL line.
    const csv = await adminGet(june('csv'));
    assert.equal(csv.statusCode, 200, csv.body);
    assert.equal(csv.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(
      csv.headers['content-disposition'],
      `attachment; filename="bordereau-${acme.company_reference}-sandbox-2025-06.csv"`,
    );
    assert.equal(csv.body.slice(0, csv.body.indexOf('\r\n')), BORDEREAU_COLUMNS.join(','));
    const records = parse<Record<string, string>>(csv.body, { columns: true });
    const total = records.pop();
    assert.ok(total);
    assert.equal(total['company_reference'], 'TOTAL');
    for (const column of MONEY) assert.equal(pence(total[column]), pence(report.totals[column]), column);
    assert.equal(records.length, rows.length);
    records.forEach((record, i) => {
      const row = rows[i] ?? {};
      for (const [column, value] of Object.entries(row)) {
        const cell = record[column];
        if (value === null) assert.equal(cell, '', `${column} of row ${String(i)}`);
        else if (typeof value === 'number')
          assert.equal(Number(cell), value, `${column} of row ${String(i)}`);
        else assert.equal(cell, value, `${column} of row ${String(i)}`);
      }
    });
  });

  test('production and another month answer their own rows; an empty month has a zero total', async () => {
    const production = (await adminGet(june('json', 'production'))).json<Report>();
    assert.deepEqual(
      production.rows.map((r) => [r['policy_reference'], r['version_type']]),
      [[refs['production'], 'nb']],
    );
    const july = (
      await adminGet(
        url({
          company_reference: acme.company_reference,
          environment: 'sandbox',
          month: '2025-07',
          format: 'json',
        }),
      )
    ).json<Report>();
    assert.deepEqual(
      july.rows.map((r) => [r['policy_reference'], r['version_type']]),
      [[refs['plain'], 'st']],
    );
    // May: the renewed policy's first term; its statement takes the terms in force then (12 % IPT),
    // not those of the renewal written before it but effective after it (20 %, on June's rn row).
    const may = (
      await adminGet(
        url({
          company_reference: acme.company_reference,
          environment: 'sandbox',
          month: '2025-05',
          format: 'json',
        }),
      )
    ).json<Report>();
    assert.deepEqual(
      may.rows.map((r) => [r['policy_reference'], r['version_type'], r['ipt_rate']]),
      [
        [refs['renewed'], 'nb', 12],
        [refs['renewed'], 'st', 12],
      ],
    );
    const juneRn = (await adminGet(june('json'))).json<Report>().rows.find((r) => r['version_type'] === 'rn');
    assert.equal(juneRn?.['ipt_rate'], 20);
    const empty = await adminGet(
      url({ company_reference: acme.company_reference, environment: 'sandbox', month: '2024-01' }),
    );
    assert.equal(empty.statusCode, 200);
    const lines = empty.body.trim().split('\r\n');
    assert.equal(lines.length, 2, 'the header and the totals');
    assert.match(lines[1] ?? '', /^TOTAL,/);
  });

  test('a month of more than one batch: every version once, in order, totals equal to the rows', async () => {
    // Seeded in bulk: many versions share an effective time (midnight), so the id breaks the ties.
    const policies = Math.ceil((BORDEREAU_BATCH_ROWS * 1.2) / 2);
    const seeded = await seedPolicies(t.container.database.db, {
      policies,
      environment: 'production',
      startMonth: '2026-03',
      monthStatements: true,
    });
    const answer = await adminGet(
      url({
        company_reference: seeded.companyReference,
        environment: 'production',
        month: '2026-03',
        format: 'json',
      }),
    );
    assert.equal(answer.statusCode, 200);
    const report = answer.json<Report>();
    assert.equal(report.rows.length, policies * 2);
    assert.equal(new Set(report.rows.map((r) => r['policy_version_reference'])).size, policies * 2);
    const dates = report.rows.map((r) => String(r['effective_date']));
    assert.deepEqual(dates, [...dates].sort());
    assert.ok(
      dates.every((d) => d.startsWith('2026-03-')),
      'the London month, across the change to summer time',
    );
    for (const column of MONEY)
      assert.equal(
        pence(report.totals[column]),
        report.rows.reduce((sum, r) => sum + pence(r[column]), 0),
        column,
      );
    const stored = await sql<{ total: number; n: number }>`
      select sum(s.usage_premium_pence)::bigint as total, count(*)::int as n from statements s
      join policies p on p.id = s.policy_id join companies c on c.id = p.company_id
      where c.company_reference = ${seeded.companyReference}`.execute(t.container.database.db);
    const sums = stored.rows[0];
    assert.ok(sums);
    assert.equal(sums.n, policies);
    assert.equal(pence(report.totals['usage_premium']), sums.total);
  });

  test('roles: operations 200, viewer 403, no key 401; bad input 422 or 404', async () => {
    assert.equal((await t.app.inject({ url: june('csv'), headers: { cookie: ops.cookie } })).statusCode, 200);
    const refused = await t.app.inject({ url: june('csv'), headers: { cookie: viewer.cookie } });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal((await t.app.inject({ url: june('csv') })).statusCode, 401);
    for (const month of ['2025-13', '2025-6', 'June', '0099-01', '']) {
      const bad = await adminGet(
        url({ company_reference: acme.company_reference, environment: 'sandbox', month }),
      );
      assert.equal(bad.statusCode, 422, `${month}: ${bad.body}`);
      assert.match(String(bad.headers['content-type']), /problem\+json/);
    }
    const badFormat = await adminGet(
      url({
        company_reference: acme.company_reference,
        environment: 'sandbox',
        month: '2025-06',
        format: 'xlsx',
      }),
    );
    assert.equal(badFormat.statusCode, 422);
    const noEnvironment = await adminGet(
      url({ company_reference: acme.company_reference, month: '2025-06' }),
    );
    assert.equal(noEnvironment.statusCode, 422);
    const unknown = await adminGet(
      url({ company_reference: 'no-such-company', environment: 'sandbox', month: '2025-06' }),
    );
    assert.equal(unknown.statusCode, 404, unknown.body);
  });
});
