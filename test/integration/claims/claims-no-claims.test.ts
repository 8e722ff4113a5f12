import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make as makePolicy } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';
import { exampleRateBookContent, make } from '../rating/rate-book-support.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';
import { reportClaim, type Claim, type Headers } from './claims-support.ts';

/*
 * The no-claims step-back at renewal. The example policy holds 4 years of no-claims discount and its term
 * runs 2025-06-01 to 2026-05-31 (London). Policies rated by Milepost (the example rate book: 3–4 years
 * 0.8 of the fixed premium, 1–2 years 0.9, none 1) and a policy rated elsewhere renew automatically on
 * 1 June 2026; those with an at-fault claim settled in the term renew on fewer years, by the product's
 * table when it has one, else the default (two years back a claim).
 */
type Company = Awaited<ReturnType<typeof createCompany>>;
type Pricing = Record<string, number | string>;
interface PolicyBody {
  policy_reference: string;
  status: string;
  pricing: Pricing;
  proposer: { ncd?: number };
  renewal?: { automatic: boolean; pricing: Pricing };
}
interface RenewalPrice {
  stage: 'notice' | 'renewal';
  outcome: string;
  rated_pricing: Pricing | null;
  renewal_pricing: Pricing | null;
  held_to_notice: string[];
}

const PRODUCT = 'pay-by-mile-car';
const STRICT = 'pay-by-mile-strict';
const clock = fixedClock('2025-07-20T12:00:00Z');
const nowS = () => Math.floor(clock.now().getTime() / 1000);
let t: TestApp;
let acme: Company;
let ada: SignedInStaff;
let bob: SignedInStaff;
let handler: SignedInStaff;
let v1Id: string;
let strictV1Id: string;

const as = (staff: SignedInStaff): Headers => ({
  ...staff.headers,
  client_id: acme.client_id,
  environment: 'sandbox',
});

async function versionId(rateBook: string): Promise<string> {
  const row = await sql<{ id: string }>`
    select v.id from rate_book_versions v join rate_books b on b.id = v.rate_book_id
    where b.rate_book_reference = ${rateBook} and v.version_number = 1`.execute(t.container.database.db);
  return row.rows[0]!.id;
}

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  handler = await signInStaff(t, 'hal@insurer.example', 'claims');
  for (const [product, book] of [
    [PRODUCT, 'car-rates'],
    [STRICT, 'strict-rates'],
  ] as const) {
    await make.rateBook(t, as(ada), product, book);
    await make.approvedVersion(t, book, as(ada), as(bob), exampleRateBookContent());
  }
  v1Id = await versionId('car-rates');
  strictV1Id = await versionId('strict-rates');
  // The strict product loses every year at an at-fault claim.
  const strict = await t.app.inject({
    method: 'PUT',
    url: `/products/${STRICT}`,
    headers: as(ada),
    payload: { rules: { no_claims_step_back: { '1': 0, '4': 0 } }, effective_date: nowS() },
  });
  assert.equal(strict.statusCode, 200, strict.body);
});
after(() => t.close());

const create = async (product: string, quoteModel: string | undefined): Promise<string> =>
  (
    await makePolicy.policy<PolicyBody>(t.app, acme, {
      policy: { auto_renew: true, product_reference: product },
      ...(quoteModel === undefined ? {} : { pricing: { quote_model_reference: quoteModel } }),
    })
  ).body.policy_reference;

async function call(method: 'POST' | 'PUT', url: string, payload: object, headers: Headers = acme.sandbox) {
  const r = await t.app.inject({ method, url, headers, payload });
  assert.ok(r.statusCode === 200 || r.statusCode === 201, `${url}: ${r.body}`);
  return r.json<Claim>();
}

/** A claim reported, paid in full and settled, its fault recorded by the claims handler. */
async function settledClaim(reference: string, atFault: boolean): Promise<Claim> {
  const claim = await reportClaim(t, acme.sandbox, reference, nowS() - 3600);
  const url = `/claims/${claim.claim_reference}`;
  const withExposure = await call('POST', `${url}/exposures`, { kind: 'own_vehicle', reserve: 400 });
  const exposure = withExposure.exposures[0]!.exposure_id;
  await call('POST', `${url}/exposures/${exposure}/payments`, { amount: 400, final: true, payee: 'Garage' });
  await call('POST', `${url}/transitions`, { state: 'settled' });
  const staff = {
    ...handler.headers,
    'x-csrf-token': handler.csrf,
    client_id: acme.client_id,
    environment: 'sandbox',
  };
  const faulted = await call(
    'PUT',
    `${url}/fault`,
    { at_fault: atFault, reason: 'Rear-ended a parked car.' },
    staff,
  );
  assert.equal(faulted.at_fault, atFault);
  assert.ok(faulted.settled_at !== null);
  return faulted;
}

async function scheduleRenewal(reference: string): Promise<PolicyBody> {
  const r = await t.app.inject({
    method: 'POST',
    url: `/policys/${reference}/renewals`,
    headers: acme.sandbox,
    payload: { pricing: { ...examplePolicyInput().pricing, usage_rate: 0.05 } },
  });
  assert.equal(r.statusCode, 202, r.body);
  return r.json<PolicyBody>();
}

async function renewedPolicy(reference: string): Promise<PolicyBody> {
  const r = await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<PolicyBody>();
}

async function renewalPriced(reference: string): Promise<RenewalPrice> {
  const r = await t.app.inject({ url: `/policys/${reference}/renewal-prices`, headers: acme.sandbox });
  assert.equal(r.statusCode, 200, r.body);
  const price = r
    .json<{ renewal_prices: RenewalPrice[] }>()
    .renewal_prices.find((p) => p.stage === 'renewal');
  assert.ok(price !== undefined, r.body);
  return price;
}

async function ratedAt(reference: string, stage: 'notice' | 'renewal'): Promise<Pricing> {
  const r = await t.app.inject({ url: `/policys/${reference}/renewal-prices`, headers: as(ada) });
  assert.equal(r.statusCode, 200, r.body);
  const price = r.json<{ renewal_prices: RenewalPrice[] }>().renewal_prices.find((p) => p.stage === stage);
  assert.ok(price?.rated_pricing, r.body);
  return price.rated_pricing;
}

describe('an at-fault claim settled in the term steps back the no-claims years at renewal', () => {
  const refs: Record<string, string> = {};
  const notices: Record<string, PolicyBody> = {};

  test('staff record fault; the renewal notice is rated on the stepped-back years', async () => {
    refs['clean'] = await create(PRODUCT, v1Id);
    refs['notAtFault'] = await create(PRODUCT, v1Id);
    refs['atFault'] = await create(PRODUCT, v1Id);
    refs['strict'] = await create(STRICT, strictV1Id);
    refs['unrated'] = await create(PRODUCT, undefined);
    refs['lateClaim'] = await create(PRODUCT, v1Id);
    await settledClaim(refs['notAtFault'], false);
    await settledClaim(refs['atFault'], true);
    await settledClaim(refs['strict'], true);
    await settledClaim(refs['unrated'], true);
    const base = async (name: string) => Number((await ratedAt(refs[name]!, 'notice'))['base_premium']);
    for (const [name, reference] of Object.entries(refs)) notices[name] = await scheduleRenewal(reference);
    // Settled after its notice was priced on 4 years: the renewal steps back, the price it was told holds.
    await settledClaim(refs['lateClaim'], true);
    const clean = await base('clean');
    assert.equal(await base('lateClaim'), clean);
    assert.equal(await base('notAtFault'), clean, 'a claim not at fault steps nothing back');
    // 4 years (0.8) → 2 years (0.9) by the default table; → 0 years (1.0) by the strict product's.
    assert.ok(Math.abs((await base('atFault')) / clean - 0.9 / 0.8) < 0.01, String(await base('atFault')));
    assert.ok(Math.abs((await base('strict')) / clean - 1 / 0.8) < 0.01, String(await base('strict')));
    // The stored terms keep the years as sent: the renewal steps them back once.
    for (const reference of Object.values(refs))
      assert.equal((await renewedPolicy(reference)).proposer.ncd, 4);
  });

  test('the renewals are made on the stepped-back years, rated ones and the one rated elsewhere alike', async () => {
    const ended = await t.container.services.policies.endTerms(new Date('2026-06-01T02:00:00Z'));
    assert.equal(ended.renewed, 6, JSON.stringify(ended));
    clock.set('2026-06-02T12:00:00Z');
    const ncd = async (name: string) => (await renewedPolicy(refs[name]!)).proposer.ncd;
    assert.equal(await ncd('clean'), 4);
    assert.equal(await ncd('notAtFault'), 4);
    assert.equal(await ncd('atFault'), 2);
    assert.equal(await ncd('strict'), 0);
    assert.equal(await ncd('unrated'), 2, 'a renewal rated elsewhere records the new years');
    const unrated = await renewedPolicy(refs['unrated']!);
    assert.deepEqual(
      unrated.pricing,
      notices['unrated']?.renewal?.pricing,
      'and keeps the pricing it was given',
    );
    const atFault = await renewedPolicy(refs['atFault']!);
    assert.deepEqual(atFault.pricing, notices['atFault']?.renewal?.pricing, 'at the price of its notice');

    // A claim settled after the notice: the renewal carries the stepped-back years, and rated on them
    // costs more than the notice said; it is made at the notice's price (ICOBS 6.5, PRIN 2A.5).
    const late = await renewedPolicy(refs['lateClaim']!);
    assert.equal(late.proposer.ncd, 2);
    assert.deepEqual(late.pricing, notices['lateClaim']?.renewal?.pricing, 'at the price of its notice');
    const made = await renewalPriced(refs['lateClaim']!);
    assert.deepEqual(made.held_to_notice, ['fixed']);
    assert.ok(Number(made.rated_pricing?.['base_premium']) > Number(made.renewal_pricing?.['base_premium']));
    assert.equal(made.renewal_pricing?.['base_premium'], late.pricing['base_premium']);
    assert.deepEqual((await renewalPriced(refs['clean']!)).held_to_notice, []);
  });

  test('fault is a claims handler’s to record: viewers 403, bad body 422, another company’s claim 404', async () => {
    clock.set('2025-07-20T12:00:00Z');
    const claim = await reportClaim(t, acme.sandbox, refs['clean']!, nowS() - 60);
    const viewer = await signInStaff(t, 'vic@insurer.example', 'viewer');
    const url = `/claims/${claim.claim_reference}/fault`;
    const staffOf = (s: SignedInStaff) => ({
      ...s.headers,
      'x-csrf-token': s.csrf,
      client_id: acme.client_id,
      environment: 'sandbox',
    });
    const refused = await t.app.inject({
      method: 'PUT',
      url,
      headers: staffOf(viewer),
      payload: { at_fault: true },
    });
    assert.equal(refused.statusCode, 403, refused.body);
    const bad = await t.app.inject({
      method: 'PUT',
      url,
      headers: acme.sandbox,
      payload: { at_fault: 'yes' },
    });
    assert.equal(bad.statusCode, 422, bad.body);
    const rival = await createCompany(t.app, 'Rival');
    const hidden = await t.app.inject({
      method: 'PUT',
      url,
      headers: rival.sandbox,
      payload: { at_fault: true },
    });
    assert.equal(hidden.statusCode, 404, hidden.body);
    // The handler's fault changes are in the audit trail, with the claim's row after the change.
    const audit = await t.app.inject({
      url: `/admin/audit?actor=${encodeURIComponent('staff:hal@insurer.example')}&limit=100`,
      headers: t.adminHeaders,
    });
    assert.equal(audit.statusCode, 200, audit.body);
    const rows = audit.json<{
      data: Array<{ table: string | null; after: Record<string, unknown> | null }>;
    }>().data;
    assert.equal(rows.filter((r) => r.table === 'claims' && r.after?.['at_fault'] === true).length, 4);
  });

  test('a product’s step-back table that adds years is refused', async () => {
    const r = await t.app.inject({
      method: 'PUT',
      url: `/products/${STRICT}`,
      headers: as(ada),
      payload: { rules: { no_claims_step_back: { '3': 4 } } },
    });
    assert.equal(r.statusCode, 422, r.body);
    assert.match(r.body, /no_claims_step_back\/3/);
  });
});
