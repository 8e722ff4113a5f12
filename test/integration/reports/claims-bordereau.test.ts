import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { reportClaim, type Claim } from '../claims/claims-support.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';

/*
 * Claims with reserves and payments over July and August 2025 (Europe/London), built through the API: a
 * claim whose own-vehicle exposure is paid in part in July, raised and paid finally in August (what the
 * final payment leaves unpaid released), beside an injury exposure paid in part; a windscreen claim
 * reserved and settled within August; another company's claim that must be left out. Each month must
 * reconcile to the penny, one month's closing reserve must open the next, and the closing reserve must
 * be what the claims' exposures show outstanding (reserve − paid, unsettled).
 */

type Company = Awaited<ReturnType<typeof createCompany>>;
type Row = Record<string, string | number | boolean | null>;
interface Report {
  month: string;
  rows: Row[];
  totals: Record<string, number>;
}

const MONEY = [
  'opening_reserve',
  'reserve_movements',
  'payments',
  'closing_reserve',
  'paid_to_date',
  'incurred',
];
const clock = fixedClock('2025-07-05T10:00:00Z');
const nowS = () => Math.floor(clock.now().getTime() / 1000);
const pence = (pounds: unknown) => Math.round(Number(pounds) * 100);

let t: TestApp;
let acme: Company;
let rival: Company;
let ops: SignedInStaff;
let viewer: SignedInStaff;
let big: Claim;
let windscreen: Claim;

const url = (query: Record<string, string>) =>
  `/admin/reports/claims-bordereau?${new URLSearchParams(query).toString()}`;
const monthUrl = (month: string, format = 'json') =>
  url({ company_reference: acme.company_reference, environment: 'sandbox', month, format });
const adminGet = (path: string) => t.app.inject({ url: path, headers: t.adminHeaders });

async function post(company: Company, path: string, body: object, method: 'POST' | 'PUT' = 'POST') {
  const r = await t.app.inject({ method, url: path, headers: company.sandbox, payload: body });
  assert.ok(r.statusCode === 200 || r.statusCode === 201, `${path}: ${r.body}`);
  return r.json<Claim>();
}
const exposure = (company: Company, claim: Claim, kind: string, reserve: number) =>
  post(company, `/claims/${claim.claim_reference}/exposures`, { kind, reserve });
const reserve = (claim: Claim, exposureId: string, amount: number) =>
  post(acme, `/claims/${claim.claim_reference}/exposures/${exposureId}/reserve`, { reserve: amount }, 'PUT');
const pay = (company: Company, claim: Claim, exposureId: string, amount: number, final = false) =>
  post(company, `/claims/${claim.claim_reference}/exposures/${exposureId}/payments`, {
    amount,
    final,
    payee: 'Westway Body Repairs',
  });
const exposureOf = (claim: Claim, kind: string) => {
  const found = claim.exposures.find((e) => e.kind === kind);
  assert.ok(found, kind);
  return found.exposure_id;
};

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  rival = await createCompany(t.app, 'Rival');
  const policy = (await make.policy(t.app, acme)).reference;
  const rivalPolicy = (await make.policy(t.app, rival)).reference;

  // July: £1,000.00 own vehicle and £2,500.50 injury reserved; £300.25 paid on the vehicle.
  big = await reportClaim(t, acme.sandbox, policy, nowS() - 3600);
  await exposure(acme, big, 'own_vehicle', 1000);
  big = await exposure(acme, big, 'injury', 2500.5);
  big = await pay(acme, big, exposureOf(big, 'own_vehicle'), 300.25);

  // August: the vehicle's reserve raised to £1,200.00, a final £800.00 (£99.75 released); £500.00 injury.
  clock.set('2025-08-10T10:00:00Z');
  big = await reserve(big, exposureOf(big, 'own_vehicle'), 1200);
  big = await pay(acme, big, exposureOf(big, 'own_vehicle'), 800, true);
  big = await pay(acme, big, exposureOf(big, 'injury'), 500);
  // A windscreen claim reserved at £150.00 and paid in full within August.
  windscreen = await reportClaim(t, acme.sandbox, policy, nowS() - 3600);
  windscreen = await exposure(acme, windscreen, 'windscreen', 150);
  windscreen = await pay(acme, windscreen, exposureOf(windscreen, 'windscreen'), 150, true);
  // Another company's claim, in August too.
  const theirs = await reportClaim(t, rival.sandbox, rivalPolicy, nowS() - 3600);
  const withExposure = await exposure(rival, theirs, 'theft', 5000);
  await pay(rival, withExposure, exposureOf(withExposure, 'theft'), 10);
  clock.set('2025-09-02T10:00:00Z');
  // Signed in now: a staff session ends long before the clock's two months.
  ops = await signInStaff(t, 'olive.ops@insurer.example', 'operations');
  viewer = await signInStaff(t, 'victor.viewer@insurer.example', 'viewer');
});
after(() => t.close());

async function report(month: string): Promise<Report> {
  const r = await adminGet(monthUrl(month));
  assert.equal(r.statusCode, 200, r.body);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  return r.json<Report>();
}

const rowOf = (r: Report, claim: Claim) =>
  r.rows.find((row) => row['claim_reference'] === claim.claim_reference);

describe('GET /admin/reports/claims-bordereau', () => {
  test('each month reconciles to the penny; a month’s closing reserve opens the next', async () => {
    const [july, august, september] = [
      await report('2025-07'),
      await report('2025-08'),
      await report('2025-09'),
    ];
    assert.deepEqual(
      july.rows.map((r) => r['claim_reference']),
      [big.claim_reference],
    );
    assert.deepEqual(
      new Set(august.rows.map((r) => r['claim_reference'])),
      new Set([big.claim_reference, windscreen.claim_reference]),
      'another company’s claim is left out',
    );
    assert.deepEqual(
      september.rows.map((r) => r['claim_reference']),
      [big.claim_reference],
      'the windscreen claim has nothing outstanding in September',
    );
    for (const r of [july, august, september]) {
      for (const row of r.rows) {
        assert.equal(
          pence(row['opening_reserve']) + pence(row['reserve_movements']) - pence(row['payments']),
          pence(row['closing_reserve']),
          `${r.month}: opening + movements − payments = closing`,
        );
        assert.equal(pence(row['incurred']), pence(row['paid_to_date']) + pence(row['closing_reserve']));
      }
      for (const column of MONEY)
        assert.equal(
          pence(r.totals[column]),
          r.rows.reduce((sum, row) => sum + pence(row[column]), 0),
          `${r.month}: the total of ${column} is the sum of its rows`,
        );
    }
    assert.deepEqual(rowOf(july, big), {
      company_reference: acme.company_reference,
      environment: 'sandbox',
      claim_reference: big.claim_reference,
      policy_reference: big.policy_reference,
      underwriter_reference: 'acme-underwriting',
      underwriter_policy_reference: 'ACM/2025/000123',
      state: 'open',
      source: 'reported',
      incident_date: '2025-07-05',
      reported_date: '2025-07-05',
      at_fault: null,
      opening_reserve: 0,
      reserve_movements: 3500.5,
      payments: 300.25,
      closing_reserve: 3200.25,
      paid_to_date: 300.25,
      incurred: 3500.5,
    });
    const augustBig = rowOf(august, big);
    // Raised £200.00, £99.75 released by the final payment; £800.00 + £500.00 paid.
    assert.deepEqual(
      MONEY.map((c) => augustBig?.[c]),
      [3200.25, 100.25, 1300, 2000.5, 1600.25, 3600.75],
    );
    assert.deepEqual(
      MONEY.map((c) => rowOf(august, windscreen)?.[c]),
      [0, 150, 150, 0, 150, 150],
      'reserved and paid in full within the month: nothing left to release',
    );
    for (const claim of [big, windscreen])
      assert.equal(rowOf(august, claim)?.['opening_reserve'], rowOf(july, claim)?.['closing_reserve'] ?? 0);
    assert.equal(rowOf(september, big)?.['opening_reserve'], augustBig?.['closing_reserve']);
  });

  test('the closing reserve is what the claims’ exposures show outstanding', async () => {
    const august = await report('2025-08');
    for (const claim of [big, windscreen]) {
      const r = await t.app.inject({ url: `/claims/${claim.claim_reference}`, headers: acme.sandbox });
      assert.equal(r.statusCode, 200, r.body);
      const outstanding = r
        .json<Claim>()
        .exposures.filter((e) => e.settled_at === null)
        .reduce((sum, e) => sum + pence(e.reserve) - pence(e.paid), 0);
      assert.equal(pence(rowOf(august, claim)?.['closing_reserve']), outstanding);
    }
  });

  test('CSV is the JSON: a header, the same rows, a TOTAL row', async () => {
    const csv = await adminGet(monthUrl('2025-08', 'csv'));
    assert.equal(csv.statusCode, 200, csv.body);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.match(String(csv.headers['content-disposition']), /claims-bordereau-.*-sandbox-2025-08\.csv/);
    const records = parse<Record<string, string>>(csv.body, { columns: true });
    const total = records.pop();
    const json = await report('2025-08');
    assert.ok(total);
    assert.equal(total['company_reference'], 'TOTAL');
    assert.equal(records.length, json.rows.length);
    for (const [i, record] of records.entries()) {
      const row = json.rows[i];
      assert.ok(row);
      assert.equal(record['claim_reference'], row['claim_reference']);
      for (const column of MONEY) assert.equal(pence(record[column]), pence(row[column]));
    }
    for (const column of MONEY) assert.equal(pence(total[column]), pence(json.totals[column]));
  });

  test('roles: operations 200, viewer 403, no key 401; bad input 422 or 404', async () => {
    const ok = await t.app.inject({ url: monthUrl('2025-08', 'csv'), headers: { cookie: ops.cookie } });
    assert.equal(ok.statusCode, 200, ok.body);
    const refused = await t.app.inject({ url: monthUrl('2025-08'), headers: { cookie: viewer.cookie } });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal((await t.app.inject({ url: monthUrl('2025-08') })).statusCode, 401);
    for (const month of ['2025-13', '2025-8', 'August', '']) {
      const bad = await adminGet(
        url({ company_reference: acme.company_reference, environment: 'sandbox', month }),
      );
      assert.equal(bad.statusCode, 422, `${month}: ${bad.body}`);
      assert.match(String(bad.headers['content-type']), /problem\+json/);
    }
    const unknown = await adminGet(
      url({ company_reference: 'no-such-company', environment: 'sandbox', month: '2025-08' }),
    );
    assert.equal(unknown.statusCode, 404, unknown.body);
    const production = await adminGet(
      url({
        company_reference: acme.company_reference,
        environment: 'production',
        month: '2025-08',
        format: 'json',
      }),
    );
    assert.equal(production.statusCode, 200);
    assert.deepEqual(production.json<Report>().rows, [], 'the sandbox’s claims are not production’s');
  });
});
