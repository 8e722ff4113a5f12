import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  MilepostError,
  createSession,
  memoryTokenStore,
  unwrap,
  type Fetch,
  type Tokens,
} from '../../../sdk/src/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { emailLine, strongPassword } from '../auth/auth-support.ts';

// The SDK against the service over real HTTP: the login flow, silent refresh and sign-out.
let t: TestApp;
let baseUrl: string;
let acme: Awaited<ReturnType<typeof createCompany>>;

before(async () => {
  t = await createTestApp({ listen: true });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  acme = await createCompany(t.app, 'Acme');
});
after(() => t.close());

/** fetch, counting the requests to each path. */
function countingFetch() {
  const calls: string[] = [];
  const send: Fetch = (request) => {
    calls.push(`${request.method} ${new URL(request.url).pathname}`);
    return fetch(request);
  };
  return { calls, send };
}

/** A signed-in session of a new policyholder (first login: temporary password, then a personal one). */
async function signedIn(extra: { onExpired?: () => void; send?: Fetch } = {}) {
  const holder = await make.policyholder(t, acme, {}, { live: true });
  const store = memoryTokenStore();
  const session = createSession({ baseUrl, clientId: acme.client_id, store, ...extra, fetch: extra.send });
  const first = await session.signIn(holder.username, holder.temporaryPassword);
  if (first.step !== 'NEW_PASSWORD_REQUIRED')
    assert.fail(`expected NEW_PASSWORD_REQUIRED, got ${first.step}`);
  const password = strongPassword();
  const second = await session.choosePassword(first, password);
  assert.deepEqual(second, { step: 'SIGNED_IN', username: holder.username });
  return { holder, session, store, password };
}

describe('the SDK session', () => {
  test('first login from the welcome email, then GET /policys/details through the typed client', async () => {
    const { holder, session, store } = await signedIn();
    assert.ok(session.isSignedIn());
    assert.equal(store.load()?.username, holder.username);
    const policy = await unwrap(session.client.GET('/policys/details'));
    assert.equal(policy.policy_reference, holder.reference);
    assert.ok(policy.versions.length >= 1);
  });

  test('a wrong password is a MilepostError with a human sentence, not a body', async () => {
    const holder = await make.policyholder(t, acme, {}, { live: true });
    const session = createSession({ baseUrl, clientId: acme.client_id });
    await assert.rejects(session.signIn(holder.username, 'not-the-password'), (error: unknown) => {
      assert.ok(error instanceof MilepostError);
      assert.equal(error.status, 401);
      assert.equal(error.code, 'INVALID_CREDENTIALS');
      assert.match(error.message, /^[A-Z][^{}]+$/);
      return true;
    });
    assert.equal(session.isSignedIn(), false);
  });

  test('an access token refused with 401 is renewed once with the refresh token, and the request replayed', async () => {
    const { calls, send } = countingFetch();
    const { session, store } = await signedIn({ send });
    const before = store.load()!;
    // The access token no longer works (as after a key withdrawal): the next reads refresh once.
    store.save({ ...before, accessToken: 'expired.access.token' });
    const fresh = createSession({ baseUrl, clientId: acme.client_id, store, fetch: send });
    calls.length = 0;
    const [a, b] = await Promise.all([
      unwrap(fresh.client.GET('/policys/details')),
      unwrap(fresh.client.GET('/policys/details')),
    ]);
    assert.equal(a.policy_reference, b.policy_reference);
    assert.equal(calls.filter((c) => c === 'POST /auth/token').length, 1, 'parallel 401s share one refresh');
    const after = store.load()!;
    assert.notEqual(after.refreshToken, before.refreshToken, 'the refresh token rotated');
    assert.notEqual(after.accessToken, 'expired.access.token');
    assert.ok(session.isSignedIn());
  });

  test('an access token about to expire is renewed before the request', async () => {
    const { calls, send } = countingFetch();
    const { store } = await signedIn({ send });
    const soon: Tokens = { ...store.load()!, expiresAt: Math.floor(Date.now() / 1000) + 5 };
    store.save(soon);
    const session = createSession({ baseUrl, clientId: acme.client_id, store, fetch: send });
    calls.length = 0;
    await unwrap(session.client.GET('/policys/details'));
    assert.deepEqual(calls, ['POST /auth/token', 'GET /policys/details']);
  });

  test('a refused refresh token ends the session (once), and the request answers 401', async () => {
    const { store } = await signedIn();
    let expired = 0;
    store.save({ ...store.load()!, accessToken: 'bad', refreshToken: 'not-a-refresh-token' });
    const session = createSession({
      baseUrl,
      clientId: acme.client_id,
      store,
      onExpired: () => {
        expired++;
      },
    });
    await assert.rejects(unwrap(session.client.GET('/policys/details')), (error: unknown) => {
      assert.ok(error instanceof MilepostError);
      assert.equal(error.status, 401);
      return true;
    });
    assert.equal(expired, 1);
    assert.equal(session.isSignedIn(), false);
    assert.equal(store.load(), undefined);
  });

  test('sign-out revokes the refresh token and the access token', async () => {
    const { session } = await signedIn();
    const tokens = session.tokens()!;
    await session.signOut();
    assert.equal(session.isSignedIn(), false);
    const refresh = await fetch(`${baseUrl}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', client_id: acme.client_id },
      body: JSON.stringify({ type: 'REFRESH_TOKEN', refresh_token: tokens.refreshToken }),
    });
    assert.equal(refresh.status, 401);
    const details = await fetch(`${baseUrl}/policys/details`, {
      headers: { authorization: `Bearer ${tokens.accessToken}` },
    });
    assert.equal(details.status, 401);
  });

  test('forgot password → code from the email → new password, signed in', async () => {
    const { holder } = await signedIn();
    const session = createSession({ baseUrl, clientId: acme.client_id });
    await session.forgotPassword(holder.username);
    const emails = await t.container.services.notifications.emailsTo(holder.email);
    const code = emails.map((e) => emailLine(e.text ?? '', 'Code')).find((c) => c !== undefined);
    assert.match(code ?? '', /^\d{6}$/);
    const password = strongPassword('reset');
    assert.deepEqual(await session.resetPassword(holder.username, code!, password), {
      step: 'SIGNED_IN',
      username: holder.username,
    });
  });
});
