import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, TEST_ADMIN_KEY, type TestApp } from '../../support/app.ts';
import { make as makePolicy } from '../../support/factories.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';
import {
  exampleRateBookContent,
  make,
  type Problem,
  type RateBookContent,
  type RateBookVersion,
} from './rate-book-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;

const clock = fixedClock('2025-06-10T12:00:00Z');
const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
let t: TestApp;
let acme: Company;
let other: Company;
let ada: SignedInStaff;
let olly: SignedInStaff;
let version: RateBookVersion;
const references: Record<string, string> = {};

/*
 * A version with one factor, on the vehicle's value: below £10,000 ×1, £10,000–20,000 ×1.25, above ×2,
 * on £500 a year and £0.04 a mile, IPT 12 %: £560.00 and £0.0448 a mile for a car worth £5,000, £1,120.00
 * and £0.0896 for one worth £25,000. Uses other than `sdp` and `sdp_commuting` cannot be rated (no
 * default); the example's underwriting rules decline a vehicle above group 45.
 */
function impactVersion(): RateBookContent {
  const example = exampleRateBookContent();
  return {
    ...example,
    base_fixed_premium_pence: 50_000,
    base_rate_per_unit: '0.04',
    min_fixed_premium_pence: 10_000,
    max_fixed_premium_pence: 1_000_000,
    factors: [
      {
        name: 'value',
        source: 'vehicle_value',
        kind: 'bands',
        applies_to: 'both',
        rows: [
          { from: null, to: 10_000, factor: '1' },
          { from: 10_000, to: 20_000, factor: '1.25' },
          { from: 20_000, to: null, factor: '2' },
        ],
      },
      {
        name: 'use',
        source: 'use',
        kind: 'keys',
        applies_to: 'fixed',
        rows: [
          { key: 'sdp', factor: '1' },
          { key: 'sdp_commuting', factor: '1' },
        ],
      },
    ],
  };
}

/** The policies in force, by name: their stored fixed premium (pounds), rate, and what the version sees. */
const BOOK = {
  p1: { base: 700, rate: 0.06, value: 5000 },
  p2: { base: 616, rate: 0.05, value: 5000 },
  p3: { base: 588, rate: 0.05, value: 5000 },
  p4: { base: 560, rate: 0.05, value: 5000 },
  p5: { base: 540, rate: 0.05, value: 5000 },
  p6: { base: 520, rate: 0.05, value: 5000 },
  p7: { base: 400, rate: 0.05, value: 25_000 },
} as const;

async function policy(company: Company, product: string, overrides: Record<string, unknown>) {
  const made = await makePolicy.policy(t.app, company, {
    ...overrides,
    policy: { product_reference: product, ...(overrides['policy'] as object | undefined) },
  });
  return made.reference;
}

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
  ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  olly = await signInStaff(t, 'olly@insurer.example', 'operations');
  await make.rateBook(t, acme.sandbox, 'ppm', 'rates');
  await make.product(t, acme.sandbox, 'ppm-other');
  await make.rateBook(t, other.sandbox, 'ppm', 'rates');
  const drafted = await t.app.inject({
    method: 'POST',
    url: '/rate-books/rates/versions',
    headers: acme.sandbox,
    payload: { content: impactVersion() },
  });
  assert.equal(drafted.statusCode, 201, drafted.body);
  version = drafted.json<RateBookVersion>();
  for (const [name, p] of Object.entries(BOOK))
    references[name] = await policy(acme, 'ppm', {
      pricing: { base_premium: p.base, usage_rate: p.rate },
      vehicle: { current_value: p.value },
    });
  references['declined'] = await policy(acme, 'ppm', { vehicle: { group_rating_50: 50 } });
  references['unrated'] = await policy(acme, 'ppm', { policy: { usage: 'business' } });
  // Not in the book: another product, a term still to come, another company's policy of its own `ppm`.
  await policy(acme, 'ppm-other', {});
  await policy(acme, 'ppm', { policy: { start_date: 1_751_324_400, end_date: 1_782_860_399 } });
  await policy(other, 'ppm', {});
});
after(async () => {
  await t.close();
});

const impact = (
  headers: Record<string, string>,
  body: object = { company_reference: acme.company_reference, environment: 'sandbox' },
  url = `/admin/rate-books/rates/versions/${String(version.version_number)}/impact`,
) => t.app.inject({ method: 'POST', url, headers, payload: body });

const band = (name: string, current: number, next: number, percent: number | null, policies = 1) => ({
  band: name,
  policies,
  current_premium: current,
  new_premium: next,
  change: Math.round((next - current) * 100) / 100,
  change_percent: percent,
  current_usage_rate_mean: policies === 0 ? null : (BOOK_RATE[name] ?? 0.05),
  new_usage_rate_mean: policies === 0 ? null : name === 'above_10' ? 0.0896 : 0.0448,
});
const BOOK_RATE: Record<string, number> = { below_minus_10: 0.06 };

describe('impact testing', () => {
  test('a small book with known premiums gives exact bands, totals and movers', async () => {
    const response = await impact(admin);
    assert.equal(response.statusCode, 200, response.body);
    const report = response.json<Record<string, unknown>>();
    assert.ok(typeof report['threads'] === 'number' && report['threads'] >= 1);
    assert.deepEqual(
      { ...report, threads: 0 },
      {
        rate_book_reference: 'rates',
        version_number: version.version_number,
        version_status: 'draft',
        product_reference: 'ppm',
        as_at: '2025-06-10T12:00:00.000Z',
        threads: 0,
        policies: 9,
        rated: 7,
        referred: 0,
        bands: [
          band('below_minus_10', 700, 560, -20),
          band('minus_10_to_minus_5', 616, 560, -9.09),
          band('minus_5_to_0', 588, 560, -4.76),
          band('unchanged', 560, 560, 0),
          band('0_to_5', 540, 560, 3.7),
          band('5_to_10', 520, 560, 7.69),
          band('above_10', 400, 1120, 180),
        ],
        total: {
          policies: 7,
          current_premium: 3924,
          new_premium: 4480,
          change: 556,
          // 556 ÷ 3,924 = 14.1692…%; the rates' means: 0.36 ÷ 7 = 0.05142…, 0.3584 ÷ 7 = 0.0512.
          change_percent: 14.17,
          current_usage_rate_mean: 0.0514,
          new_usage_rate_mean: 0.0512,
        },
        declined: {
          policies: 1,
          reasons: [{ reason: 'We do not insure vehicles above insurance group 45.', policies: 1 }],
        },
        unrated: {
          policies: 1,
          reasons: [
            {
              path: 'policy.usage',
              message: '"business" matches no row of use, which has no default',
              policies: 1,
            },
          ],
        },
        movers: (
          [
            ['p7', 400, 1120, 180, 0.05, 0.0896],
            ['p1', 700, 560, -20, 0.06, 0.0448],
            ['p2', 616, 560, -9.09, 0.05, 0.0448],
            ['p6', 520, 560, 7.69, 0.05, 0.0448],
            ['p3', 588, 560, -4.76, 0.05, 0.0448],
            ['p5', 540, 560, 3.7, 0.05, 0.0448],
            ['p4', 560, 560, 0, 0.05, 0.0448],
          ] as const
        ).map(([name, current, next, percent, rate, newRate]) => ({
          policy_reference: references[name],
          current_premium: current,
          new_premium: next,
          change: next - current,
          change_percent: percent,
          current_usage_rate: rate,
          new_usage_rate: newRate,
        })),
      },
    );
  });

  test('with Accept: text/event-stream, progress then the same report', async () => {
    const plain = (await impact(admin)).json<object>();
    const response = await t.app.inject({
      method: 'POST',
      url: `/admin/rate-books/rates/versions/${String(version.version_number)}/impact`,
      headers: { ...admin, accept: 'text/event-stream' },
      payload: { company_reference: acme.company_reference, environment: 'sandbox' },
    });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/event-stream/);
    const events = response.body
      .trim()
      .split('\n\n')
      .map((block) => {
        const [event, data] = block.split('\n');
        return {
          event: event?.replace('event: ', ''),
          data: JSON.parse(data?.replace('data: ', '') ?? 'null') as unknown,
        };
      });
    assert.deepEqual(events[0], {
      event: 'progress',
      data: { in_force: 9, done: 0, rated: 0, declined: 0, unrated: 0 },
    });
    assert.deepEqual(events.at(-2), {
      event: 'progress',
      data: { in_force: 9, done: 9, rated: 7, declined: 1, unrated: 1 },
    });
    assert.deepEqual(events.at(-1), { event: 'done', data: plain });
  });

  test('a signed-in admin may run it; operations staff are refused; both are audited', async () => {
    const allowed = await impact(ada.headers);
    assert.equal(allowed.statusCode, 200, allowed.body);
    const refused = await impact(olly.headers);
    assert.equal(refused.statusCode, 403, refused.body);
    const trail = async (actor: string) => {
      const audit = await t.app.inject({ url: `/admin/audit?actor=${actor}`, headers: admin });
      assert.equal(audit.statusCode, 200, audit.body);
      return audit
        .json<{ data: { action: string; outcome: string }[] }>()
        .data.filter((r) => r.action === 'rateBooks.impact')
        .map((r) => r.outcome);
    };
    assert.deepEqual(await trail('staff:ada@insurer.example'), ['ok']);
    assert.deepEqual(await trail('staff:olly@insurer.example'), ['denied']);
  });

  test('another company’s rate book, an unknown version or company: 404; bad input: 422', async () => {
    const others = await impact(
      admin,
      { company_reference: other.company_reference, environment: 'sandbox' },
      '/admin/rate-books/rates/versions/9/impact',
    );
    assert.equal(others.statusCode, 404, others.body);
    const production = await impact(admin, {
      company_reference: acme.company_reference,
      environment: 'production',
    });
    assert.equal(production.statusCode, 404, production.body);
    const ofOther = await impact(admin, {
      company_reference: other.company_reference,
      environment: 'sandbox',
    });
    // Other's rate book `rates` has no version 1: its versions are its own.
    assert.equal(ofOther.statusCode, 404, ofOther.body);
    const noCompany = await impact(admin, { company_reference: 'no-such-company', environment: 'sandbox' });
    assert.equal(noCompany.statusCode, 404, noCompany.body);
    const badNumber = await impact(admin, undefined, '/admin/rate-books/rates/versions/x/impact');
    assert.equal(badNumber.statusCode, 422, badNumber.body);
    const badBody = await impact(admin, { company_reference: acme.company_reference });
    assert.equal(badBody.statusCode, 422, badBody.body);
    assert.equal(badBody.json<Problem>().code, 'VALIDATION_FAILED');
    const noKey = await impact({});
    assert.equal(noKey.statusCode, 401, noKey.body);
  });
});
