import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, type TestApp } from '../../support/app.ts';
import { heldOpen, onPostgres, someoneWaitsForLock } from '../../support/database.ts';
import {
  assertProblem,
  backdateRotation,
  startAuthApp,
  type createAuthClient,
  type DoneBody,
} from './auth-support.ts';

const clock = fixedClock('2025-06-01T12:00:00Z');
let acme: Awaited<ReturnType<typeof createCompany>>;
let client: ReturnType<typeof createAuthClient>;
let close: () => Promise<void>;
let t: TestApp;

before(async () => {
  ({ t, client, close } = await startAuthApp(clock));
  acme = await createCompany(t.app, 'Acme');
});
after(() => close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

test('twenty parallel refreshes with one refresh token keep the client logged in, with one new pair', async () => {
  const { tokens } = await client.loggedIn(acme.sandbox);
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      client.token(acme.sandbox, { type: 'REFRESH_TOKEN', refresh_token: tokens.refresh_token }),
    ),
  );
  assert.deepEqual(
    answers.map((r) => r.statusCode),
    Array.from({ length: 20 }, () => 200),
    answers.map((r) => r.body).join('\n'),
  );
  const pairs = answers.map((r) => r.json<DoneBody>());
  assert.equal(new Set(pairs.map((p) => p.refresh_token)).size, 1, 'the same new refresh token to all');
  assert.equal(new Set(pairs.map((p) => p.access_token)).size, 1, 'the same new access token to all');
  const [pair] = pairs;
  assert.equal((await client.get('/policys/details', bearer(pair!.access_token))).statusCode, 200);
  // The family lives on: the new refresh token rotates as usual.
  const next = await client.token(acme.sandbox, {
    type: 'REFRESH_TOKEN',
    refresh_token: pair!.refresh_token,
  });
  assert.equal(next.statusCode, 200, next.body);
});

test('a spent refresh token presented after the grace window ends the login: its access tokens are refused at once', async () => {
  const { tokens } = await client.loggedIn(acme.sandbox);
  const first = await client.token(acme.sandbox, {
    type: 'REFRESH_TOKEN',
    refresh_token: tokens.refresh_token,
  });
  assert.equal(first.statusCode, 200);
  const current = first.json<DoneBody>();
  assert.equal((await client.get('/policys/details', bearer(current.access_token))).statusCode, 200);
  // 11,000 ms later on both clocks: the grace is measured on the database's.
  clock.advance(11_000);
  await backdateRotation(t, tokens.refresh_token, 11_000);
  const replayed = await client.token(acme.sandbox, {
    type: 'REFRESH_TOKEN',
    refresh_token: tokens.refresh_token,
  });
  assertProblem(replayed, 401, 'INVALID_TOKEN');
  // The access tokens of that login, still within their 15 minutes, no longer open anything.
  assertProblem(await client.get('/policys/details', bearer(current.access_token)), 401, 'INVALID_TOKEN');
  assertProblem(await client.get('/policys/details', bearer(tokens.access_token)), 401, 'INVALID_TOKEN');
  assertProblem(
    await client.token(acme.sandbox, { type: 'REFRESH_TOKEN', refresh_token: current.refresh_token }),
    401,
    'INVALID_TOKEN',
  );
});

test(
  'a login that checked the old password while the password changed gets no session that outlives the change',
  { skip: !onPostgres && 'PostgreSQL only: PGlite runs one transaction at a time' },
  async () => {
    const { holder, password } = await client.loggedIn(acme.sandbox);
    const db = t.container.database.db;
    // A password change as the service makes one (the session generation moves on, every refresh
    // token is revoked), held open while the login runs.
    const change = await heldOpen(db, async (trx) => {
      const user = await trx
        .updateTable('users')
        .set((eb) => ({ session_generation: eb('session_generation', '+', 1) }))
        .where('username', '=', holder.username)
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx
        .updateTable('auth_refresh_tokens')
        .set({ revoked_at: new Date(), revoked_reason: 'password changed' })
        .where('user_id', '=', user.id)
        .where('revoked_at', 'is', null)
        .execute();
    });
    const login = client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password,
    });
    // The login waits for the change's row lock; then the change commits.
    assert.ok(await someoneWaitsForLock(db, 10_000), 'the login never waited for the change');
    await change.commit();
    const answer = await login;
    if (answer.statusCode !== 200) {
      assert.equal(answer.statusCode, 401, answer.body);
      return;
    }
    const refreshed = await client.token(acme.sandbox, {
      type: 'REFRESH_TOKEN',
      refresh_token: answer.json<{ refresh_token: string }>().refresh_token,
    });
    assert.equal(
      refreshed.statusCode,
      401,
      `the login's refresh token outlived the change: ${refreshed.body}`,
    );
  },
);
