import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { assertProblem, nextAddress, strongPassword } from './auth-support.ts';

// POST /auth/revoke: sign-out (issue 19).
const clock = fixedClock('2025-06-01T12:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let other: Awaited<ReturnType<typeof createCompany>>;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
});
after(() => t.close());

const post = (url: string, headers: Record<string, string>, payload: object) =>
  t.app.inject({ method: 'POST', url, headers, payload, remoteAddress: nextAddress() });

/** A confirmed policyholder of Acme (sandbox), logged in: its DONE answer. */
async function signedIn() {
  const { username, temporaryPassword: temporary } = await make.policyholder(t, acme);
  const company = { client_id: acme.client_id };
  const first = await post('/auth/token', company, {
    type: 'USER_PASSWORD_AUTH',
    username,
    password: temporary,
  });
  const password = strongPassword();
  const { session } = first.json<{ session: string }>();
  await post('/auth/token', company, {
    type: 'NEW_PASSWORD_REQUIRED',
    username,
    session,
    new_password: password,
  });
  const done = await post('/auth/token', company, { type: 'USER_PASSWORD_AUTH', username, password });
  assert.equal(done.statusCode, 200, done.body);
  return done.json<{ access_token: string; refresh_token: string }>();
}

describe('POST /auth/revoke', () => {
  test('ends the login: the refresh token and the access tokens of that login stop working', async () => {
    const tokens = await signedIn();
    const details = () =>
      t.app.inject({
        method: 'GET',
        url: '/policys/details',
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
    assert.equal((await details()).statusCode, 200);
    const r = await post(
      '/auth/revoke',
      { client_id: acme.client_id },
      { refresh_token: tokens.refresh_token },
    );
    assert.equal(r.statusCode, 204, r.body);
    assert.equal(r.body, '');
    assertProblem(await details(), 401, 'INVALID_TOKEN');
    const refresh = await post(
      '/auth/token',
      { client_id: acme.client_id },
      { type: 'REFRESH_TOKEN', refresh_token: tokens.refresh_token },
    );
    assertProblem(refresh, 401, 'INVALID_TOKEN');
    // Revoking again, or a token that never existed: the same answer.
    const again = await post(
      '/auth/revoke',
      { client_id: acme.client_id },
      { refresh_token: tokens.refresh_token },
    );
    assert.equal(again.statusCode, 204);
    const unknown = await post(
      '/auth/revoke',
      { client_id: acme.client_id },
      { refresh_token: 'not-a-token' },
    );
    assert.equal(unknown.statusCode, 204);
  });

  test('another company cannot revoke the token (and is told nothing)', async () => {
    const tokens = await signedIn();
    const r = await post(
      '/auth/revoke',
      { client_id: other.client_id },
      { refresh_token: tokens.refresh_token },
    );
    assert.equal(r.statusCode, 204);
    const refresh = await post(
      '/auth/token',
      { client_id: acme.client_id },
      { type: 'REFRESH_TOKEN', refresh_token: tokens.refresh_token },
    );
    assert.equal(refresh.statusCode, 200, 'still valid for its own company');
  });

  test('validation and client credentials', async () => {
    assertProblem(await post('/auth/revoke', { client_id: acme.client_id }, {}), 422, 'VALIDATION_FAILED');
    assertProblem(
      await post('/auth/revoke', { client_id: acme.client_id }, { refresh_token: 'x', extra: 1 }),
      422,
      'VALIDATION_FAILED',
    );
    assertProblem(await post('/auth/revoke', {}, { refresh_token: 'x' }), 401, 'INVALID_CLIENT_CREDENTIALS');
  });

  test('mock environment: 204 for anything', async () => {
    const r = await post('/auth/revoke', { environment: 'mock' }, { refresh_token: 'whatever' });
    assert.equal(r.statusCode, 204);
  });
});
