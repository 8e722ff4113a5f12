import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make as makePolicy } from '../../support/factories.ts';
import { examplePolicyInput, type PolicyOverrides } from '../../support/policy-arbitraries.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';
import { exampleRateBookContent, make, type RateBookContent } from './rate-book-support.ts';

/**
 * Automatic renewals of policies rated by Milepost (ICOBS 6B.2.1R): a policy whose pricing names
 * version 1 of its product's rate book renews on version 2, in force at the renewal's start, which
 * raises prices and loads a second policy year; the renewal is held down to the equivalent
 * new-business price, both are stored with last year's price, and the report of renewals at the cap
 * lists it. A policy rated elsewhere renews on the terms it was given, as before.
 */
type Company = Awaited<ReturnType<typeof createCompany>>;
type Pricing = Record<string, number | string>;
interface PolicyBody {
  policy_reference: string;
  status: string;
  pricing: Pricing;
  renewal?: { automatic: boolean; pricing: Pricing };
}
interface RenewalPrice {
  policy_reference: string;
  product_reference: string;
  stage: 'notice' | 'renewal';
  outcome: string;
  rated_on: string;
  rate_book_reference: string | null;
  version_number: number | null;
  renewal_yearly_premium_estimate: number | null;
  new_business_yearly_premium_estimate: number | null;
  last_year_yearly_premium_estimate: number | null;
  cap_applied: boolean;
  capped: string[];
  renewal_pricing: Pricing | null;
  new_business_pricing: Pricing | null;
  rated_pricing: Pricing | null;
  last_year_pricing: Pricing | null;
  reasons: string[];
}
interface CapReport {
  total: number;
  groups: Array<{
    month: string;
    product_reference: string;
    count: number;
    renewals: Array<{ policy_reference: string; renewal_yearly_premium_estimate: number }>;
  }>;
}

const PRODUCT = 'pay-by-mile-car';
const clock = fixedClock('2025-05-20T12:00:00Z');
let t: TestApp;
let acme: Company;
let other: Company;
let ada: SignedInStaff;
let bob: SignedInStaff;
let v1Id: string;

const as = (staff: SignedInStaff, company: Company = acme): Record<string, string> => ({
  ...staff.headers,
  client_id: company.client_id,
  environment: 'sandbox',
});

/** Version 2: dearer (base fixed premium and rate per mile up), and a second policy year loaded 15 %. */
function dearerVersion(): RateBookContent {
  const content = exampleRateBookContent() as unknown as {
    base_fixed_premium_pence: number;
    base_rate_per_unit: string;
    factors: unknown[];
  };
  content.base_fixed_premium_pence = 36_000;
  content.base_rate_per_unit = '0.05';
  content.factors.push({
    name: 'tenure',
    source: 'policy_year',
    kind: 'bands',
    applies_to: 'both',
    rows: [
      { from: 1, to: 2, factor: '1' },
      { from: 2, to: null, factor: '1.15' },
    ],
  });
  return content as unknown as RateBookContent;
}

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
  ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  await make.rateBook(t, as(ada), PRODUCT, 'car-rates');
  await make.approvedVersion(t, 'car-rates', as(ada), as(bob), exampleRateBookContent());
  await make.approvedVersion(t, 'car-rates', as(bob), as(ada), dearerVersion(), '2026-05-01T00:00:00.000Z');
  const row = await sql<{ id: string }>`
    select v.id from rate_book_versions v join rate_books b on b.id = v.rate_book_id
    where b.rate_book_reference = 'car-rates' and v.version_number = 1`.execute(t.container.database.db);
  v1Id = row.rows[0]!.id;
});
after(async () => {
  await t.close();
});

const sentPricing = () => ({ ...examplePolicyInput().pricing, usage_rate: 0.05 });
const create = async (overrides: PolicyOverrides = {}): Promise<PolicyBody> =>
  (
    await makePolicy.policy<PolicyBody>(t.app, acme, {
      policy: { auto_renew: true, product_reference: PRODUCT },
      ...overrides,
    })
  ).body;
const rated = (overrides: PolicyOverrides = {}) =>
  create({ pricing: { quote_model_reference: v1Id }, ...overrides });
async function scheduleRenewal(reference: string, expected = 202) {
  const r = await t.app.inject({
    method: 'POST',
    url: `/policys/${reference}/renewals`,
    headers: acme.sandbox,
    payload: { pricing: sentPricing() },
  });
  assert.equal(r.statusCode, expected, r.body);
  return r;
}
async function renewalPrices(reference: string, headers = as(ada)) {
  return t.app.inject({ url: `/policys/${reference}/renewal-prices`, headers });
}
async function readAt(reference: string, iso: string): Promise<PolicyBody> {
  clock.set(iso);
  try {
    const r = await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox });
    assert.equal(r.statusCode, 200, r.body);
    return r.json<PolicyBody>();
  } finally {
    clock.set('2025-05-20T12:00:00Z');
  }
}
const report = (query: Record<string, string>) =>
  t.app.inject({
    url: `/admin/reports/renewals-at-cap?${new URLSearchParams({
      company_reference: acme.company_reference,
      environment: 'sandbox',
      ...query,
    }).toString()}`,
    headers: t.adminHeaders,
  });

describe('a policy rated by Milepost renewing automatically', () => {
  let reference: string;
  let noticed: Pricing;

  test('is priced for its notice on the version in force at the start, never above new business', async () => {
    reference = (await rated()).policy_reference;
    const scheduled = (await scheduleRenewal(reference)).json<PolicyBody>();
    assert.equal(scheduled.renewal?.automatic, true);
    noticed = scheduled.renewal.pricing;
    const r = await renewalPrices(reference);
    assert.equal(r.statusCode, 200, r.body);
    const [notice] = r.json<{ renewal_prices: RenewalPrice[] }>().renewal_prices;
    assert.ok(notice);
    assert.equal(notice.stage, 'notice');
    assert.equal(notice.outcome, 'priced');
    assert.equal(notice.rate_book_reference, 'car-rates');
    assert.equal(notice.version_number, 2);
    assert.equal(notice.rated_on, '2026-06-01');
    assert.equal(notice.last_year_yearly_premium_estimate, 725.38, 'last year: the pricing it was sold at');
    // Version 2 loads the second policy year: as it is, the renewal costs more than new business;
    // the offer is held to the new-business price in both parts.
    assert.equal(notice.cap_applied, true);
    assert.deepEqual(notice.capped, ['fixed', 'per_unit']);
    const rawYearly = Number(notice.rated_pricing?.['yearly_premium_estimate']);
    assert.ok(rawYearly > Number(notice.new_business_yearly_premium_estimate), `${rawYearly}`);
    assert.equal(notice.renewal_yearly_premium_estimate, notice.new_business_yearly_premium_estimate);
    for (const field of ['base_premium', 'usage_rate', 'subscription_premium', 'upfront_premium'])
      assert.equal(noticed[field], notice.new_business_pricing?.[field], field);
    // The renewal's pricing is Milepost's, not the one sent, and names the version it came from.
    assert.notEqual(noticed['usage_rate'], 0.05);
    assert.equal(noticed['quote_model_reference'], notice.renewal_pricing?.['quote_model_reference']);
    assert.equal(noticed['ipt_rate'], 12);
    assert.equal(noticed['yearly_premium_estimate'], notice.renewal_yearly_premium_estimate);
  });

  test('renews at its start on that price, stored again for the renewal', async () => {
    const ended = await t.container.services.policies.endTerms(new Date('2026-06-01T02:00:00Z'));
    assert.ok(ended.renewed >= 1, JSON.stringify(ended));
    const renewed = await readAt(reference, '2026-06-02T12:00:00Z');
    assert.equal(renewed.status, 'active');
    assert.deepEqual(renewed.pricing, noticed);
    const prices = (await renewalPrices(reference)).json<{ renewal_prices: RenewalPrice[] }>().renewal_prices;
    assert.deepEqual(
      prices.map((p) => p.stage),
      ['renewal', 'notice'],
    );
    const [made] = prices;
    assert.ok(made);
    assert.equal(made.cap_applied, true);
    assert.equal(made.renewal_yearly_premium_estimate, noticed['yearly_premium_estimate']);
  });

  test('is listed in the report of renewals at the cap, per product and month, as JSON and CSV', async () => {
    const json = await report({ from: '2026-05', to: '2026-07' });
    assert.equal(json.statusCode, 200, json.body);
    const body = json.json<CapReport>();
    const june = body.groups.find((g) => g.month === '2026-06' && g.product_reference === PRODUCT);
    assert.ok(june, json.body);
    assert.equal(june.count, june.renewals.length);
    assert.ok(june.renewals.some((r) => r.policy_reference === reference));
    assert.equal(
      june.renewals.find((r) => r.policy_reference === reference)?.renewal_yearly_premium_estimate,
      noticed['yearly_premium_estimate'],
    );
    // Notices are not renewals: the report counts each renewal once.
    assert.equal(
      body.total,
      body.groups.reduce((n, g) => n + g.count, 0),
    );
    assert.ok(!body.groups.some((g) => g.month === '2026-05'));
    const csv = await report({ from: '2026-06', to: '2026-06', format: 'csv' });
    assert.equal(csv.statusCode, 200, csv.body);
    assert.match(csv.headers['content-type'] ?? '', /^text\/csv/);
    const lines = csv.body.trimEnd().split('\r\n');
    assert.equal(lines[0]?.split(',')[2], 'policy_reference');
    assert.ok(
      lines.some((l) => l.startsWith(`2026-06,${PRODUCT},${reference},2026-06-01,`)),
      csv.body,
    );
  });

  test('the report refuses a range that is backwards or too long (422) and an unknown company (404)', async () => {
    assert.equal((await report({ from: '2026-06', to: '2026-05' })).statusCode, 422);
    assert.equal((await report({ from: '2024-01', to: '2026-01' })).statusCode, 422);
    assert.equal((await report({ from: '2026-13', to: '2026-01' })).statusCode, 422);
    const unknown = await t.app.inject({
      url: '/admin/reports/renewals-at-cap?company_reference=nobody&environment=sandbox&from=2026-06&to=2026-06',
      headers: t.adminHeaders,
    });
    assert.equal(unknown.statusCode, 404, unknown.body);
    const noKey = await t.app.inject({
      url: `/admin/reports/renewals-at-cap?company_reference=${acme.company_reference}&environment=sandbox&from=2026-06&to=2026-06`,
    });
    assert.equal(noKey.statusCode, 401, noKey.body);
  });

  test('the report takes months of years 1000–9999 only, as every month the API takes: 422 naming the month', async () => {
    for (const [query, paths] of [
      [{ from: '0000-01', to: '0000-12' }, ['/querystring/from', '/querystring/to']],
      [{ from: '0999-12', to: '1000-01' }, ['/querystring/from']],
      [{ from: '1000-01', to: '0999-12' }, ['/querystring/to']],
    ] as const) {
      const refused = await report(query);
      assert.equal(refused.statusCode, 422, refused.body);
      assert.match(refused.headers['content-type'] ?? '', /^application\/problem\+json/);
      assert.deepEqual(
        refused.json<{ errors: Array<{ path: string }> }>().errors.map((e) => e.path),
        paths,
        refused.body,
      );
    }
    assert.equal((await report({ from: '1000-01', to: '1000-12' })).statusCode, 200);
  });

  test('is not renewed when the version in force declines it: 409 with the reason, no notice', async () => {
    const risky = await rated({ vehicle: { group_rating_50: 48 } });
    const refused = await scheduleRenewal(risky.policy_reference, 409);
    assert.match(refused.body, /insurance group 45/);
    const read = await readAt(risky.policy_reference, '2025-05-20T12:00:00Z');
    assert.equal(read.renewal, undefined);
  });

  test('cannot be priced above new business by an adjustment run up to the renewal’s start: 409', async () => {
    const made = await makePolicy.policy<PolicyBody>(t.app, acme, {
      policy: { auto_renew: true, product_reference: PRODUCT },
      pricing: { quote_model_reference: v1Id },
    });
    const scheduled = (await scheduleRenewal(made.reference)).json<{
      renewal: { start_date: number; end_date: number; pricing: Pricing };
    }>().renewal;
    // The body names the renewal's term with a price far above the capped one, as an adjustment.
    const adjusted = await t.app.inject({
      method: 'POST',
      url: '/policys',
      headers: acme.sandbox,
      payload: {
        ...made.input,
        policy: {
          ...made.input.policy,
          policy_reference: made.reference,
          start_date: scheduled.start_date,
          end_date: scheduled.end_date,
          policy_year: 2,
        },
        pricing: { ...scheduled.pricing, upfront_premium: 5000, base_premium: 5000, usage_rate: 9 },
      },
    });
    assert.equal(adjusted.statusCode, 409, adjusted.body);
    assert.match(adjusted.json<{ detail: string }>().detail, /POST \/policys\/.+\/renewals/);
    // The term in force stands and renews on the capped price at its end.
    assert.equal((await readAt(made.reference, '2026-05-30T12:00:00Z')).status, 'active');
    await t.container.services.policies.endTerms(new Date('2026-06-01T02:00:00Z'));
    const renewed = await readAt(made.reference, '2026-06-02T12:00:00Z');
    assert.deepEqual(renewed.pricing, scheduled.pricing);
  });

  test('another company’s policy, or none: 404', async () => {
    assert.equal((await renewalPrices(reference, as(ada, other))).statusCode, 404);
    assert.equal((await renewalPrices('POL-NONE')).statusCode, 404);
  });
});

describe('a policy rated elsewhere', () => {
  test('renews automatically exactly on the terms it was given, with nothing stored', async () => {
    const plain = await create();
    const scheduled = (await scheduleRenewal(plain.policy_reference)).json<PolicyBody>();
    assert.equal(scheduled.renewal?.pricing['usage_rate'], 0.05);
    assert.equal(
      scheduled.renewal.pricing['quote_model_reference'],
      examplePolicyInput().pricing.quote_model_reference,
    );
    await t.container.services.policies.endTerms(new Date('2026-06-01T02:00:00Z'));
    const renewed = await readAt(plain.policy_reference, '2026-06-02T12:00:00Z');
    assert.equal(renewed.status, 'active');
    assert.deepEqual(renewed.pricing, scheduled.renewal.pricing);
    const prices = await renewalPrices(plain.policy_reference);
    assert.equal(prices.statusCode, 200, prices.body);
    assert.deepEqual(prices.json<{ renewal_prices: unknown[] }>().renewal_prices, []);
  });
});
