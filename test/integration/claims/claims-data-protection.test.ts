import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { caller, JPEG, reportClaim, type Claim } from './claims-support.ts';

// Claims under subject access and erasure: an erasure keeps a claim in progress whole under a
// recorded legal hold, and erases the personal data of a finished one (its money kept).
const clock = fixedClock('2025-09-01T10:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
const call = caller(() => t);
const nowS = () => Math.floor(clock.now().getTime() / 1000);

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme Insurance');
});
after(() => t.close());

test('erasure keeps an open claim under a legal hold and erases a closed one; the export holds both', async () => {
  const policy = await make.policy(t.app, acme);
  const open = await reportClaim(t, acme.sandbox, policy.reference, nowS() - 3600);
  const finished = await reportClaim(t, acme.sandbox, policy.reference, nowS() - 7200);
  const photo = await t.app.inject({
    method: 'POST',
    url: `/policys/${policy.reference}/claims/${finished.claim_reference}/photos`,
    headers: { ...acme.sandbox, 'content-type': 'image/jpeg' },
    payload: JPEG,
  });
  assert.equal(photo.statusCode, 201, photo.body);
  const exposure = (
    await call('POST', `/claims/${finished.claim_reference}/exposures`, acme.sandbox, {
      kind: 'own_vehicle',
      reserve: 300,
    })
  ).json<Claim>().exposures[0]!.exposure_id;
  await call('POST', `/claims/${finished.claim_reference}/exposures/${exposure}/payments`, acme.sandbox, {
    amount: 300,
    final: true,
    payee: 'Repairer Ltd',
  });
  for (const state of ['settled', 'closed'])
    assert.equal(
      (await call('POST', `/claims/${finished.claim_reference}/transitions`, acme.sandbox, { state }))
        .statusCode,
      200,
    );

  const exported = await call('GET', `/admin/policyholders/${policy.userReference}/export`, t.adminHeaders);
  assert.equal(exported.statusCode, 200, exported.body.slice(0, 300));
  const doc = exported.json<{ claims: Array<{ id: string; photos: Array<{ content_base64: string }> }> }>();
  assert.deepEqual(
    doc.claims.map((c) => c.id).toSorted(),
    [open.claim_reference, finished.claim_reference].toSorted(),
  );
  assert.equal(
    doc.claims.find((c) => c.id === finished.claim_reference)?.photos[0]?.content_base64,
    JPEG.toString('base64'),
  );

  const erased = await call('POST', `/admin/policyholders/${policy.userReference}/erase`, t.adminHeaders, {
    reason: 'Subject asked for erasure',
    force: true,
  });
  assert.equal(erased.statusCode, 200, erased.body);
  const kept = erased.json<{
    claims_kept: Array<{ claim_reference: string; state: string; reason: string }>;
  }>().claims_kept;
  assert.deepEqual(
    kept.map((k) => [k.claim_reference, k.state]),
    [[open.claim_reference, 'open']],
  );
  assert.match(kept[0]!.reason, /17\(3\)\(e\)/);

  const held = await call('GET', `/claims/${open.claim_reference}`, acme.sandbox);
  assert.equal(held.json<Claim>().description, open.description, 'kept whole');
  assert.match(held.json<Claim>().legal_hold?.reason ?? '', /legal claims/);
  const gone = (await call('GET', `/claims/${finished.claim_reference}`, acme.sandbox)).json<Claim>();
  assert.deepEqual([gone.description, gone.place_name, gone.lat, gone.photos.length], [null, null, null, 0]);
  assert.deepEqual(
    gone.payments.map((p) => p.amount),
    [300],
    'its money stays',
  );
});
