import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { caller, claimsPass, crashBody, reportClaim, type Claim, type Headers } from './claims-support.ts';

// The retention of ended claims: closed, rejected or withdrawn more than the company's retention years ago
// (default 6), their personal data is erased by the nightly job and their crash deleted; their money stays.
const clock = fixedClock('2025-08-01T09:00:00Z');
const nowS = () => Math.floor(clock.now().getTime() / 1000);
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let brief: Awaited<ReturnType<typeof createCompany>>;
const call = caller(() => t);
const claims: Record<string, Claim> = {};
let crashId: string;

async function act(headers: Headers, claim: Claim, path: string, body: object): Promise<Claim> {
  const r = await call(
    path === '/settings' ? 'PUT' : 'POST',
    `/claims/${claim.claim_reference}${path}`,
    headers,
    body,
  );
  assert.ok(r.statusCode === 200 || r.statusCode === 201, `${path}: ${r.body}`);
  return r.json<Claim>();
}

/** A claim taken to `closed` along the state table: an exposure paid in full, settled, closed. */
async function closed(headers: Headers, claim: Claim): Promise<Claim> {
  const withExposure = await act(headers, claim, '/exposures', { kind: 'own_vehicle', reserve: 250 });
  const exposure = withExposure.exposures[0]!.exposure_id;
  await act(headers, claim, `/exposures/${exposure}/payments`, { amount: 250, final: true, payee: 'Garage' });
  await act(headers, claim, '/transitions', { state: 'settled' });
  return act(headers, claim, '/transitions', { state: 'closed' });
}

async function get(headers: Headers, claim: Claim): Promise<Claim> {
  const r = await call('GET', `/claims/${claim.claim_reference}`, headers);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<Claim>();
}

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme Insurance');
  brief = await createCompany(t.app, 'Brief Motor');
  const settings = await call('PUT', '/claims-settings', brief.sandbox, {
    response_hours: 24,
    retention_years: 2,
  });
  assert.equal(settings.statusCode, 200, settings.body);
  assert.equal(settings.json<{ retention_years: number }>().retention_years, 2);
  const policy = (await make.policy(t.app, acme)).reference;
  const briefPolicy = (await make.policy(t.app, brief)).reference;
  const deviceId = (await make.device(t.app, acme, policy)).device_id;

  clock.advance(3_600_000);
  const crash = await call('POST', '/telematics/events', acme.sandbox, crashBody(deviceId, nowS() - 60));
  assert.equal(crash.statusCode, 201, crash.body);
  crashId = crash.json<{ crash_reference: string }>().crash_reference;
  await claimsPass(t, clock);
  const [fromCrash] = (await call('GET', `/policys/${policy}/claims`, acme.sandbox)).json<{
    claims: Claim[];
  }>().claims;
  assert.ok(fromCrash);
  await act(acme.sandbox, fromCrash, '/transitions', { state: 'open' });
  claims['crash'] = await closed(acme.sandbox, fromCrash);
  claims['closed'] = await closed(acme.sandbox, await reportClaim(t, acme.sandbox, policy, nowS() - 60));
  const rejected = await reportClaim(t, acme.sandbox, policy, nowS() - 60);
  claims['rejected'] = await act(acme.sandbox, rejected, '/transitions', { state: 'rejected' });
  claims['open'] = await reportClaim(t, acme.sandbox, policy, nowS() - 60);
  claims['reopened'] = await act(
    acme.sandbox,
    await closed(acme.sandbox, await reportClaim(t, acme.sandbox, policy, nowS() - 60)),
    '/transitions',
    { state: 'reopened' },
  );
  claims['brief'] = await closed(
    brief.sandbox,
    await reportClaim(t, brief.sandbox, briefPolicy, nowS() - 60),
  );
});
after(() => t.close());

const pseudonymise = (iso: string) => t.container.services.claims.pseudonymiseEnded(new Date(iso));
const erased = (claim: Claim) =>
  claim.place_name === null && claim.description === null && claim.crash_file === null && claim.lat === null;

describe('the nightly retention of ended claims', () => {
  test('a company’s own retention years: its claims ended two years ago are pseudonymised, others kept', async () => {
    assert.equal(await pseudonymise('2027-07-31T09:00:00Z'), 0, 'two years have not passed');
    assert.equal(await pseudonymise('2027-08-01T11:00:00Z'), 1);
    assert.ok(erased(await get(brief.sandbox, claims['brief']!)));
    for (const name of ['crash', 'closed', 'rejected', 'open'])
      assert.ok(!erased(await get(acme.sandbox, claims[name]!)), `${name} is kept`);
  });

  test('six years after they ended, by default: the personal data goes, the money and the crash’s claim stay', async () => {
    assert.equal(await pseudonymise('2031-08-01T08:00:00Z'), 0, 'six years have not passed');
    assert.equal(await pseudonymise('2031-08-01T11:00:00Z'), 3);
    for (const name of ['crash', 'closed', 'rejected']) {
      const claim = await get(acme.sandbox, claims[name]!);
      assert.ok(erased(claim), name);
      assert.equal(claim.state, claims[name]!.state);
      assert.ok(
        claim.notes?.every((n) => n.text === '[erased]'),
        name,
      );
    }
    const money = await get(acme.sandbox, claims['closed']!);
    assert.deepEqual(
      money.exposures.map((e) => [e.reserve, e.paid]),
      [[250, 250]],
      'exposures and payments are kept',
    );
    assert.equal(money.payments.length, 1);
    const crashes = await t.container.database.db
      .selectFrom('crash_events')
      .select('id')
      .where('id', '=', crashId)
      .execute();
    assert.deepEqual(crashes, [], 'the crash that opened it is deleted');
    // Live claims are never taken: one in progress (which a legal hold keeps), and one reopened.
    for (const name of ['open', 'reopened']) assert.ok(!erased(await get(acme.sandbox, claims[name]!)), name);
  });

  test('a second run takes nothing: the job is idempotent', async () => {
    assert.equal(await pseudonymise('2031-08-02T03:40:00Z'), 0);
  });

  test('the claimant was emailed as their claims were opened, settled, rejected and closed', async () => {
    const emails = await t.container.database.db
      .selectFrom('outbox_emails as o')
      .innerJoin('companies as c', 'c.id', 'o.company_id')
      .select('o.template')
      .where('c.company_reference', '=', acme.company_reference)
      .where('o.template', 'like', 'claim-%')
      .execute();
    const count = (template: string) => emails.filter((e) => e.template === template).length;
    assert.equal(count('claim-crash-detected'), 1);
    assert.equal(count('claim-open'), 1, 'the crash’s draft opened; a reported claim is the claimant’s own');
    assert.equal(count('claim-settled'), 3);
    assert.equal(count('claim-closed'), 3);
    assert.equal(count('claim-rejected'), 1);
    assert.equal(count('claim-reopened'), 0);
  });

  test('the retention years are validated: 1 to 100', async () => {
    for (const years of [0, 101, 2.5]) {
      const r = await call('PUT', '/claims-settings', brief.sandbox, {
        response_hours: 24,
        retention_years: years,
      });
      assert.equal(r.statusCode, 422, r.body);
    }
    const kept = await call('PUT', '/claims-settings', brief.sandbox, { response_hours: 48 });
    assert.equal(kept.json<{ retention_years: number }>().retention_years, 2, 'absent: kept as set');
  });
});
