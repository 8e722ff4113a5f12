import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { assertProblem, startAuthApp, type createAuthClient } from './auth-support.ts';

const clock = fixedClock('2025-06-01T12:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let other: Awaited<ReturnType<typeof createCompany>>;
let client: ReturnType<typeof createAuthClient>;
let close: () => Promise<void>;

before(async () => {
  ({ t, client, close } = await startAuthApp(clock));
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
});
after(() => close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const jwks = async () => (await client.get('/.well-known/jwks.json', {})).json<JSONWebKeySet>();

describe('access tokens and signing keys', () => {
  test('an Ed25519 JWT that verifies against /.well-known/jwks.json, with sub, company and environment', async () => {
    const { holder, tokens } = await client.loggedIn(acme.sandbox);
    const r = await client.get('/.well-known/jwks.json', {});
    assert.equal(r.statusCode, 200);
    assert.match(String(r.headers['cache-control']), /max-age=300/);
    assert.equal(r.headers['vary'], 'Origin', 'its CORS headers depend on Origin');
    const set = r.json<JSONWebKeySet>();
    assert.ok(
      set.keys.every((k) => k.kty === 'OKP' && k.crv === 'Ed25519' && k.alg === 'Ed25519' && !('d' in k)),
    );
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, createLocalJWKSet(set), {
      currentDate: clock.now(),
    });
    assert.equal(protectedHeader.alg, 'Ed25519');
    assert.equal(payload.sub, holder.userReference);
    assert.equal(payload['company'], acme.company_reference);
    assert.equal(payload['environment'], 'sandbox');
    assert.equal(payload.exp, tokens.expiry);
  });

  test('rotation: a new key signs, the old one stays published, and withdrawing it ends its tokens', async () => {
    const { holder, password, tokens } = await client.loggedIn(acme.sandbox);
    const oldKid = decodeProtectedHeader(tokens.access_token).kid;
    const unauthorised = await t.app.inject({ method: 'POST', url: '/admin/signing-keys/rotate' });
    assertProblem(unauthorised, 401, 'UNAUTHENTICATED');
    const rotated = await t.app.inject({
      method: 'POST',
      url: '/admin/signing-keys/rotate',
      headers: t.adminHeaders,
    });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const { kid } = rotated.json<{ kid: string }>();
    assert.notEqual(kid, oldKid);
    const fresh = await client.login(acme.sandbox, holder.username, password);
    assert.equal(decodeProtectedHeader(fresh.access_token).kid, kid);
    assert.deepEqual(
      (await jwks()).keys.map((k) => k.kid),
      [kid, oldKid],
    );
    assert.equal(
      (await client.get('/policys/details', bearer(tokens.access_token))).statusCode,
      200,
      'old key still valid',
    );

    const withdrawn = await t.app.inject({
      method: 'POST',
      url: '/admin/signing-keys/rotate',
      headers: t.adminHeaders,
      payload: { withdraw_previous: true },
    });
    assert.equal(withdrawn.statusCode, 200, withdrawn.body);
    assert.deepEqual(
      (await jwks()).keys.map((k) => k.kid),
      [withdrawn.json<{ kid: string }>().kid],
    );
    assertProblem(await client.get('/policys/details', bearer(tokens.access_token)), 401, 'INVALID_TOKEN');
    assertProblem(await client.get('/policys/details', bearer(fresh.access_token)), 401, 'INVALID_TOKEN');
    // Refresh tokens are not signed: they still work, and give tokens from the new key.
    const refreshed = await client.token(acme.sandbox, {
      type: 'REFRESH_TOKEN',
      refresh_token: fresh.refresh_token,
    });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
  });

  test('the key rolls over by itself after SIGNING_KEY_ROTATION_DAYS, without logging anybody out', async () => {
    const { holder, password, tokens } = await client.loggedIn(acme.sandbox);
    const before = decodeProtectedHeader(tokens.access_token).kid;
    clock.advance(30 * 86_400_000 + 1000);
    const after = await client.login(acme.sandbox, holder.username, password);
    assert.notEqual(decodeProtectedHeader(after.access_token).kid, before);
    assert.ok(
      (await jwks()).keys.some((k) => k.kid === before),
      'the retired key is still published',
    );
  });

  test('a tampered, foreign or malformed token → 401', async () => {
    const { tokens } = await client.loggedIn(acme.sandbox);
    const [h, p, s] = tokens.access_token.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'usr_someone_else' })).toString('base64url')}.${s}`;
    for (const token of [forged, `${h}.${p}.${s}x`, 'not-a-jwt', `${h}.${p}`])
      assertProblem(await client.get('/policys/details', bearer(token)), 401, 'INVALID_TOKEN');
    for (const authorization of ['', 'Bearer', 'Bearer undefined', 'Bearer null', 'undefined'])
      assertProblem(await client.get('/policys/details', { authorization }), 401, 'UNAUTHENTICATED');
    assertProblem(await client.get('/policys/details', {}), 401, 'UNAUTHENTICATED');
  });
});

describe('GET /policys/details', () => {
  test('the current policy as GET /policys/:ref returns it, plus the three reference fields; a raw token works', async () => {
    const { holder, tokens } = await client.loggedIn(acme.sandbox);
    const mine = await client.get('/policys/details', bearer(tokens.access_token));
    assert.equal(mine.statusCode, 200, mine.body);
    const body = mine.json<Record<string, unknown> & { policy: Record<string, unknown> }>();
    const asClient = await client.get(`/policys/${holder.policyReference}`, acme.sandbox);
    assert.deepEqual(body, asClient.json());
    assert.equal(body['policy_reference'], holder.policyReference);
    assert.equal(body.policy['policy_reference'], holder.policyReference);
    assert.equal(body.policy['policy_ref'], holder.policyReference);
    const raw = await client.get('/policys/details', {
      authorization: tokens.access_token,
      environment: 'sandbox',
      'content-type': 'application/json',
    });
    assert.equal(raw.statusCode, 200, raw.body);
  });

  test('?policy_reference= picks among several; the current one is the latest live policy', async () => {
    const { holder, tokens } = await client.loggedIn(acme.sandbox);
    const { reference: secondReference } = await make.policy(t.app, acme, {
      proposer: { email: holder.email },
      vehicle: { reg: 'XY70 ZZZ' },
    });
    const current = await client.get('/policys/details', bearer(tokens.access_token));
    assert.equal(current.json<{ policy_reference: string }>().policy_reference, secondReference);
    const first = await client.get(
      `/policys/details?policy_reference=${holder.policyReference}`,
      bearer(tokens.access_token),
    );
    assert.equal(first.json<{ policy_reference: string }>().policy_reference, holder.policyReference);
    const user = await client.get(`/auth/users/${holder.userReference}`, bearer(tokens.access_token));
    assert.deepEqual(user.json<{ policies: string[] }>().policies, [holder.policyReference, secondReference]);
  });

  test('another policyholder’s or another tenant’s policy → 404; an environment the token was not issued in → 401', async () => {
    const { tokens } = await client.loggedIn(acme.sandbox);
    const neighbour = await client.newHolder(acme.sandbox);
    const foreign = await client.newHolder(other.sandbox);
    for (const reference of [neighbour.policyReference, foreign.policyReference, 'no-such-policy']) {
      const r = await client.get(
        `/policys/details?policy_reference=${reference}`,
        bearer(tokens.access_token),
      );
      assertProblem(r, 404, 'NOT_FOUND');
    }
    const production = await client.get('/policys/details', {
      ...bearer(tokens.access_token),
      environment: 'production',
    });
    assertProblem(production, 401, 'INVALID_TOKEN');
    const junk = await client.get('/policys/details', {
      ...bearer(tokens.access_token),
      environment: 'staging',
    });
    assertProblem(junk, 422, 'VALIDATION_FAILED');
  });
});

describe('GET /auth/users/:user_reference', () => {
  test('with client credentials: the User, secrets null', async () => {
    const holder = await client.newHolder(acme.sandbox);
    const r = await client.get(`/auth/users/${holder.userReference}`, acme.sandbox);
    assert.equal(r.statusCode, 200, r.body);
    const user = r.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(user).sort(), [
      'active',
      'client_id',
      'client_secret',
      'client_secret_sandbox',
      'company_reference',
      'created_at',
      'email',
      'f_names',
      'idp_status',
      'l_names',
      'policies',
      'role',
      'updated_at',
      'user_reference',
      'username',
    ]);
    assert.equal(user['f_names'], 'Amelia Rose');
    assert.equal(user['l_names'], 'Clarke');
    assert.equal(user['email'], holder.email);
    assert.equal(user['username'], holder.username);
    assert.equal(user['client_id'], acme.client_id);
    assert.equal(user['client_secret'], null);
    assert.equal(user['client_secret_sandbox'], null);
    assert.equal(user['role'], 'policyholder');
    assert.equal(user['active'], true);
    assert.equal(user['idp_status'], 'FORCE_CHANGE_PASSWORD');
    assert.equal(user['company_reference'], acme.company_reference);
    assert.equal(user['user_reference'], holder.userReference);
    assert.deepEqual(user['policies'], [holder.policyReference]);
    assert.ok(!Number.isNaN(Date.parse(String(user['created_at']))));
  });

  test('with the user’s own token; another user’s reference → 404, with a token or another tenant’s credentials', async () => {
    const { holder, tokens } = await client.loggedIn(acme.sandbox);
    const neighbour = await client.newHolder(acme.sandbox);
    const own = await client.get(`/auth/users/${holder.userReference}`, {
      ...bearer(tokens.access_token),
      client_id: acme.client_id,
    });
    assert.equal(own.statusCode, 200, own.body);
    assert.equal(own.json<{ idp_status: string }>().idp_status, 'CONFIRMED');
    // A blank client_secret beside the token is no secret, as on every route that takes either.
    for (const blank of ['', ' ']) {
      const withBlank = await client.get(`/auth/users/${holder.userReference}`, {
        ...bearer(tokens.access_token),
        client_id: acme.client_id,
        client_secret: blank,
      });
      assert.equal(withBlank.statusCode, 200, withBlank.body);
    }
    assertProblem(
      await client.get(`/auth/users/${neighbour.userReference}`, bearer(tokens.access_token)),
      404,
      'NOT_FOUND',
    );
    assertProblem(await client.get(`/auth/users/${holder.userReference}`, other.sandbox), 404, 'NOT_FOUND');
    assertProblem(await client.get(`/auth/users/${holder.userReference}`, acme.production), 404, 'NOT_FOUND');
  });

  test('credentials are required: none, a client_id alone or a wrong secret → 401', async () => {
    const holder = await client.newHolder(acme.sandbox);
    const url = `/auth/users/${holder.userReference}`;
    assertProblem(await client.get(url, {}), 401, 'INVALID_CLIENT_CREDENTIALS');
    assertProblem(await client.get(url, { client_id: acme.client_id }), 401, 'INVALID_CLIENT_CREDENTIALS');
    assertProblem(
      await client.get(url, { ...acme.sandbox, client_secret: 'wrong' }),
      401,
      'INVALID_CLIENT_CREDENTIALS',
    );
    assertProblem(await client.get(url, { authorization: 'Bearer undefined' }), 401, 'UNAUTHENTICATED');
  });
});

test('the OpenAPI document describes the login routes', async () => {
  const r = await client.get('/openapi.json', {});
  assert.equal(r.statusCode, 200);
  const paths = Object.keys(r.json<{ paths: Record<string, unknown> }>().paths);
  for (const path of [
    '/auth/token',
    '/auth/users/{user_reference}',
    '/policys/details',
    '/.well-known/jwks.json',
  ])
    assert.ok(paths.includes(path), path);
});

test('housekeeping purges what can no longer be used', async () => {
  clock.advance(40 * 86_400_000);
  const deleted = await t.container.services.auth.purgeExpired(clock.now());
  assert.ok(deleted > 0, `deleted ${deleted}`);
  const left = await t.container.database.db
    .selectFrom('auth_refresh_tokens')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(Number(left.n), 0);
});
