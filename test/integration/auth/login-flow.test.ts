import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createLogger } from '../../../src/platform/logging.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { startSmtpServer } from '../../support/smtp.ts';
import {
  assertProblem,
  backdateRotation,
  createAuthClient,
  emailLine,
  nextAddress,
  strongPassword,
  uniqueEmail,
  withoutRequestId,
  type DoneBody,
  type Smtp,
} from './auth-support.ts';

// Inside the example policy's term; the clock only moves forward in this file.
const clock = fixedClock('2025-06-01T12:00:00Z');
const logs: string[] = [];
let smtp: Smtp;
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let client: ReturnType<typeof createAuthClient>;
/** Every secret the tests see; none may appear in the logs. */
const secrets = new Set<string>();

before(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({
    env: { SMTP_URL: smtp.url },
    overrides: {
      clock,
      logger: createLogger('debug', { write: (line: string) => void logs.push(line) }),
    },
    startJobs: true,
  });
  acme = await createCompany(t.app, 'Acme');
  client = createAuthClient(t, smtp);
});
after(async () => {
  try {
    await t.close();
  } finally {
    await smtp.close();
  }
});

const keep = <T extends string | undefined>(secret: T): T => {
  if (secret !== undefined) secrets.add(secret);
  return secret;
};

async function resetCode(email: string, count: number): Promise<string> {
  const messages = await smtp.waitFor(email, count);
  const withCode = messages.filter((m) => /^Code: /m.test(m.text));
  const code = emailLine(withCode.at(-1)?.text ?? '', 'Code');
  assert.match(code ?? '', /^\d{6}$/);
  return keep(code!);
}

describe('the state table of POST /auth/token, one row each', () => {
  test('row 1: USER_PASSWORD_AUTH with the temporary password → NEW_PASSWORD_REQUIRED with a session', async () => {
    const holder = await client.newHolder(acme.sandbox);
    keep(holder.temporaryPassword);
    const r = await client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password: holder.temporaryPassword,
    });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json<Record<string, string>>();
    assert.deepEqual(Object.keys(body).sort(), ['session', 'type', 'username']);
    assert.equal(body['type'], 'NEW_PASSWORD_REQUIRED');
    assert.equal(body['username'], holder.username);
    assert.ok((keep(body['session'])?.length ?? 0) >= 40, 'an opaque, unguessable session');
    // The email works as the login too, in any case.
    const byEmail = await client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.email.toUpperCase(),
      password: holder.temporaryPassword,
    });
    assert.equal(byEmail.json<{ type: string }>().type, 'NEW_PASSWORD_REQUIRED');
  });

  test('row 2: NEW_PASSWORD_REQUIRED with username, session and new_password → PASSWORD_RESET; the account is CONFIRMED', async () => {
    const holder = await client.newHolder(acme.sandbox);
    const password = keep(await client.confirm(acme.sandbox, holder));
    const user = await client.get(`/auth/users/${holder.userReference}`, acme.sandbox);
    assert.equal(user.json<{ idp_status: string }>().idp_status, 'CONFIRMED');
    // The temporary password no longer works.
    const old = await client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password: holder.temporaryPassword,
    });
    assertProblem(old, 401, 'INVALID_CREDENTIALS');
    await client.login(acme.sandbox, holder.username, password);
  });

  test('row 3: USER_PASSWORD_AUTH with the personal password → DONE with the exact fields', async () => {
    const holder = await client.newHolder(acme.sandbox);
    const password = keep(await client.confirm(acme.sandbox, holder));
    const r = await client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password,
    });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json<DoneBody>();
    keep(body.access_token);
    keep(body.refresh_token);
    assert.deepEqual(Object.keys(body).sort(), [
      'access_token',
      'expiry',
      'refresh_token',
      'type',
      'username',
    ]);
    assert.equal(body.type, 'DONE');
    assert.equal(body.username, holder.username);
    assert.equal(body.expiry, Math.floor(clock.now().getTime() / 1000) + 900, 'UNIX expiry, 15 minutes');
    assert.equal(body.access_token.split('.').length, 3, 'a JWT');
    const details = await client.get('/policys/details', { authorization: `Bearer ${body.access_token}` });
    assert.equal(details.statusCode, 200, details.body);
    assert.equal(details.json<{ policy_reference: string }>().policy_reference, holder.policyReference);
  });

  test('row 4: FORGOT_PASSWORD for a confirmed user → FORGOT_PASSWORD_CODE and a code emailed to the policy address', async () => {
    const holder = await client.newHolder(acme.sandbox);
    keep(await client.confirm(acme.sandbox, holder));
    const r = await client.token(acme.sandbox, { type: 'FORGOT_PASSWORD', username: holder.username });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(r.json(), { type: 'FORGOT_PASSWORD_CODE' });
    const code = await resetCode(holder.email, 2);
    assert.match(code, /^\d{6}$/);
  });

  test('row 5: FORGOT_PASSWORD with the temporary password expired (fixed clock, 30 days) → FORGOT_PASSWORD_CODE, and the code sets a password', async () => {
    const holder = await client.newHolder(acme.sandbox);
    keep(holder.temporaryPassword);
    const user = await client.get(`/auth/users/${holder.userReference}`, acme.sandbox);
    assert.equal(user.json<{ idp_status: string }>().idp_status, 'FORCE_CHANGE_PASSWORD');
    clock.advance(30 * 86_400_000 + 1000);
    const login = await client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password: holder.temporaryPassword,
    });
    assertProblem(login, 401, 'TEMPORARY_PASSWORD_EXPIRED');
    const r = await client.token(acme.sandbox, { type: 'FORGOT_PASSWORD', username: holder.username });
    assert.equal(r.statusCode, 200, r.body);
    // The same answer as for an account with a personal password: nobody learns it was never used.
    assert.deepEqual(r.json(), { type: 'FORGOT_PASSWORD_CODE' });
    const code = await resetCode(holder.email, 2);
    const password = keep(strongPassword());
    const reset = await client.token(acme.sandbox, {
      type: 'FORGOT_PASSWORD_CODE',
      username: holder.username,
      new_password: password,
      code,
    });
    assert.deepEqual(reset.json(), { type: 'PASSWORD_RESET' });
    await client.login(acme.sandbox, holder.username, password);
  });

  test('FORGOT_PASSWORD answers alike for a personal password, a temporary one and an unknown username', async () => {
    const used = (await client.loggedIn(acme.sandbox)).holder;
    const unused = await client.newHolder(acme.sandbox);
    keep(unused.temporaryPassword);
    const answers = [];
    for (const username of [used.username, unused.username, 'nobody-at-all-here']) {
      const r = await client.token(acme.sandbox, { type: 'FORGOT_PASSWORD', username });
      answers.push({ status: r.statusCode, body: r.body, type: r.headers['content-type'] });
    }
    assert.deepEqual(answers[1], answers[0]);
    assert.deepEqual(answers[2], answers[0]);
  });

  test('row 6: FORGOT_PASSWORD_CODE with username, new_password and code → PASSWORD_RESET; every session ends', async () => {
    const { holder, tokens } = await client.loggedIn(acme.sandbox);
    await client.token(acme.sandbox, { type: 'FORGOT_PASSWORD', username: holder.username });
    const code = await resetCode(holder.email, 2);
    const password = keep(strongPassword());
    const r = await client.token(acme.sandbox, {
      type: 'FORGOT_PASSWORD_CODE',
      username: holder.username,
      new_password: password,
      code,
    });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(r.json(), { type: 'PASSWORD_RESET' });
    await client.login(acme.sandbox, holder.username, password);
    // The password change ended the earlier login: its access and refresh tokens no longer work.
    assertProblem(
      await client.get('/policys/details', { authorization: `Bearer ${tokens.access_token}` }),
      401,
      'INVALID_TOKEN',
    );
    assertProblem(
      await client.token(acme.sandbox, { type: 'REFRESH_TOKEN', refresh_token: tokens.refresh_token }),
      401,
      'INVALID_TOKEN',
    );
  });

  test('row 7: RESEND_PASSWORD → a new temporary password emailed, back at NEW_PASSWORD_REQUIRED', async () => {
    const holder = await client.newHolder(acme.sandbox);
    clock.advance(31 * 86_400_000);
    const r = await client.token(acme.sandbox, { type: 'RESEND_PASSWORD', username: holder.username });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(r.json(), { type: 'TEMPORARY_PASSWORD_SENT' });
    const messages = await smtp.waitFor(holder.email, 2);
    const resent = messages.find((m) => /new temporary password/i.test(m.text));
    assert.ok(resent, 'the resend email');
    const temporaryPassword = keep(emailLine(resent.text, 'Temporary password'));
    assert.equal(emailLine(resent.text, 'Username'), holder.username);
    assert.ok(temporaryPassword !== undefined && temporaryPassword !== holder.temporaryPassword);
    const again = await client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password: temporaryPassword,
    });
    assert.equal(again.json<{ type: string }>().type, 'NEW_PASSWORD_REQUIRED', again.body);
    const password = keep(await client.confirm(acme.sandbox, { ...holder, temporaryPassword }));
    await client.login(acme.sandbox, holder.username, password);
  });

  test('after the first login only USER_PASSWORD_AUTH is needed', async () => {
    const { holder, password } = await client.loggedIn(acme.sandbox);
    for (let k = 0; k < 2; k++) await client.login(acme.sandbox, holder.username, password);
  });
});

describe('negative paths', () => {
  test('wrong password → 401 INVALID_CREDENTIALS', async () => {
    const { holder } = await client.loggedIn(acme.sandbox);
    const r = await client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password: 'nope-nope-nope',
    });
    assertProblem(r, 401, 'INVALID_CREDENTIALS');
  });

  test('an expired session → 401 INVALID_SESSION (sessions live 5 minutes)', async () => {
    const holder = await client.newHolder(acme.sandbox);
    const first = await client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password: holder.temporaryPassword,
    });
    const { session } = first.json<{ session: string }>();
    clock.advance(301_000);
    const r = await client.token(acme.sandbox, {
      type: 'NEW_PASSWORD_REQUIRED',
      username: holder.username,
      session,
      new_password: strongPassword(),
    });
    assertProblem(r, 401, 'INVALID_SESSION');
  });

  test('a reused session → 401 INVALID_SESSION; so is a session of another user or a made-up one', async () => {
    const holder = await client.newHolder(acme.sandbox);
    const other = await client.newHolder(acme.sandbox);
    const first = await client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password: holder.temporaryPassword,
    });
    const { session } = first.json<{ session: string }>();
    const body = {
      type: 'NEW_PASSWORD_REQUIRED',
      username: holder.username,
      session,
      new_password: strongPassword(),
    };
    assertProblem(
      await client.token(acme.sandbox, { ...body, username: other.username }),
      401,
      'INVALID_SESSION',
    );
    assertProblem(
      await client.token(acme.sandbox, { ...body, session: 'mps_made-up' }),
      401,
      'INVALID_SESSION',
    );
    assert.equal((await client.token(acme.sandbox, body)).statusCode, 200);
    assertProblem(await client.token(acme.sandbox, body), 401, 'INVALID_SESSION');
  });

  test('a weak new password → 422 on /body/new_password, and the session still works', async () => {
    const holder = await client.newHolder(acme.sandbox);
    const first = await client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password: holder.temporaryPassword,
    });
    const { session } = first.json<{ session: string }>();
    for (const weak of ['short1!', 'password123', 'P@ssw0rd!', '12345678', `${holder.username}-Orbit`]) {
      const r = await client.token(acme.sandbox, {
        type: 'NEW_PASSWORD_REQUIRED',
        username: holder.username,
        session,
        new_password: weak,
      });
      assertProblem(r, 422, 'VALIDATION_FAILED');
      assert.deepEqual(
        r.json<{ errors: Array<{ path: string }> }>().errors.map((e) => e.path),
        ['/body/new_password'],
        weak,
      );
    }
    const ok = await client.token(acme.sandbox, {
      type: 'NEW_PASSWORD_REQUIRED',
      username: holder.username,
      session,
      new_password: strongPassword(),
    });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('a wrong code → 401 INVALID_CODE; the right one still works', async () => {
    const { holder } = await client.loggedIn(acme.sandbox);
    await client.token(acme.sandbox, { type: 'FORGOT_PASSWORD', username: holder.username });
    const code = await resetCode(holder.email, 2);
    const wrong = code === '000000' ? '000001' : '000000';
    const body = { type: 'FORGOT_PASSWORD_CODE', username: holder.username, new_password: strongPassword() };
    assertProblem(await client.token(acme.sandbox, { ...body, code: wrong }), 401, 'INVALID_CODE');
    assertProblem(await client.token(acme.sandbox, { ...body, code: 'abc' }), 422, 'VALIDATION_FAILED');
    assert.equal((await client.token(acme.sandbox, { ...body, code })).statusCode, 200);
    assertProblem(await client.token(acme.sandbox, { ...body, code }), 401, 'INVALID_CODE');
  });

  test('an expired code (after 1 hour) → 401 INVALID_CODE', async () => {
    const { holder } = await client.loggedIn(acme.sandbox);
    await client.token(acme.sandbox, { type: 'FORGOT_PASSWORD', username: holder.username });
    const code = await resetCode(holder.email, 2);
    clock.advance(3600_000 + 1000);
    const r = await client.token(acme.sandbox, {
      type: 'FORGOT_PASSWORD_CODE',
      username: holder.username,
      new_password: strongPassword(),
      code,
    });
    assertProblem(r, 401, 'INVALID_CODE');
  });

  test('the right code after 5 wrong tries → 401 INVALID_CODE; a new FORGOT_PASSWORD gives a new code', async () => {
    const { holder } = await client.loggedIn(acme.sandbox);
    await client.token(acme.sandbox, { type: 'FORGOT_PASSWORD', username: holder.username });
    const code = await resetCode(holder.email, 2);
    const wrong = code === '999999' ? '999998' : '999999';
    const body = { type: 'FORGOT_PASSWORD_CODE', username: holder.username, new_password: strongPassword() };
    for (let k = 0; k < 5; k++) {
      assertProblem(await client.token(acme.sandbox, { ...body, code: wrong }), 401, 'INVALID_CODE');
    }
    clock.advance(1500); // past the account throttle's first delay: this is about the code's own limit
    assertProblem(await client.token(acme.sandbox, { ...body, code }), 401, 'INVALID_CODE');
  });

  test('an expired access token → 401 INVALID_TOKEN; REFRESH_TOKEN gives a working one', async () => {
    const { tokens } = await client.loggedIn(acme.sandbox);
    clock.advance(901_000);
    assertProblem(
      await client.get('/policys/details', { authorization: `Bearer ${tokens.access_token}` }),
      401,
      'INVALID_TOKEN',
    );
    const r = await client.token(acme.sandbox, {
      type: 'REFRESH_TOKEN',
      refresh_token: tokens.refresh_token,
    });
    assert.equal(r.statusCode, 200, r.body);
    const fresh = r.json<DoneBody>();
    keep(fresh.access_token);
    keep(fresh.refresh_token);
    assert.equal(
      (await client.get('/policys/details', { authorization: fresh.access_token })).statusCode,
      200,
    );
  });

  test('refresh reuse after the 10-second grace window: a spent refresh token → 401, and its whole family is revoked', async () => {
    const { tokens } = await client.loggedIn(acme.sandbox);
    const first = await client.token(acme.sandbox, {
      type: 'REFRESH_TOKEN',
      refresh_token: tokens.refresh_token,
    });
    assert.equal(first.statusCode, 200, first.body);
    const second = first.json<DoneBody>();
    assert.notEqual(second.refresh_token, tokens.refresh_token, 'rotated');
    // 10,001 ms later on both clocks: the grace is measured on the database's.
    clock.advance(10_001);
    await backdateRotation(t, tokens.refresh_token, 10_001);
    const reuse = await client.token(acme.sandbox, {
      type: 'REFRESH_TOKEN',
      refresh_token: tokens.refresh_token,
    });
    assertProblem(reuse, 401, 'INVALID_TOKEN');
    const afterReuse = await client.token(acme.sandbox, {
      type: 'REFRESH_TOKEN',
      refresh_token: second.refresh_token,
    });
    assertProblem(afterReuse, 401, 'INVALID_TOKEN');
  });

  test('bad bodies → 422 naming the fields', async () => {
    const cases: Array<[unknown, string[]]> = [
      [{ type: 'USER_PASSWORD_AUTH', username: 'x' }, ['/body/password']],
      [{ type: 'FORGOT_PASSWORD_CODE', username: 'x' }, ['/body/new_password', '/body/code']],
      [{ type: 'USER_PASSWORD_AUTH', username: 'x', password: 'y', code: '123456' }, ['/body/code']],
      [{ username: 'x', password: 'y' }, ['/body/type']],
      [{ type: 'LOGIN', username: 'x' }, ['/body/type']],
      [{ type: 'FORGOT_PASSWORD', username: 'x', colour: 'red' }, ['/body/colour']],
    ];
    for (const [body, paths] of cases) {
      const r = await client.token(acme.sandbox, body);
      assertProblem(r, 422, 'VALIDATION_FAILED');
      const got = r.json<{ errors: Array<{ path: string }> }>().errors.map((e) => e.path);
      for (const path of paths) assert.ok(got.includes(path), `${path} in ${got.join(', ')}`);
    }
    const notJson = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { ...acme.sandbox, 'content-type': 'application/json' },
      payload: '[object Object]',
    });
    assertProblem(notJson, 422, 'MALFORMED_BODY');
    const text = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { ...acme.sandbox, 'content-type': 'text/json' },
      payload: '{"type":"FORGOT_PASSWORD","username":"x"}',
    });
    assertProblem(text, 422, 'VALIDATION_FAILED');
    const xml = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { ...acme.sandbox, 'content-type': 'application/xml' },
      payload: '<type/>',
    });
    assertProblem(xml, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  test('client credentials: client_id required; a client_secret is checked when sent; form bodies work', async () => {
    const body = { type: 'FORGOT_PASSWORD', username: 'someone' };
    assertProblem(await client.token({}, body), 401, 'INVALID_CLIENT_CREDENTIALS');
    assertProblem(
      await client.token({ client_id: 'mp_client_unknown' }, body),
      401,
      'INVALID_CLIENT_CREDENTIALS',
    );
    assertProblem(
      await client.token({ ...acme.sandbox, client_secret: 'wrong' }, body),
      401,
      'INVALID_CLIENT_CREDENTIALS',
    );
    assert.equal(
      (await client.token({ client_id: acme.client_id }, body)).statusCode,
      200,
      'no secret: sandbox',
    );
    assert.equal((await client.token(acme.production, body)).statusCode, 200);
    const form = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { client_id: acme.client_id, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'type=FORGOT_PASSWORD&username=someone',
    });
    assert.equal(form.statusCode, 200, form.body);
  });

  test('sandbox and production never mix: a sandbox account does not log in to production', async () => {
    const { holder, password } = await client.loggedIn(acme.sandbox);
    const r = await client.token(acme.production, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password,
    });
    assertProblem(r, 401, 'INVALID_CREDENTIALS');
  });
});

describe('protection', () => {
  test('unknown and known usernames get identical bodies, after similar work', async () => {
    const { holder } = await client.loggedIn(acme.sandbox);
    // The fastest of four each, known and unknown taken in turn: a loaded machine only ever slows a
    // request down, so the minimum is the work the request itself did, and taking them in turn lets a
    // burst of load (another test file's threads on the same cores) slow both sides alike. Four
    // failures stay under the five free ones.
    type Timed = { r: Awaited<ReturnType<typeof client.token>>; ms: number };
    const fastest = (a: Timed | undefined, b: Timed): Timed => (a === undefined || b.ms < a.ms ? b : a);
    const once = async (body: object): Promise<Timed> => {
      const started = performance.now();
      const r = await client.token(acme.sandbox, body);
      return { r, ms: performance.now() - started };
    };
    let known: Timed | undefined;
    let unknown: Timed | undefined;
    for (let round = 0; round < 4; round++) {
      known = fastest(
        known,
        await once({ type: 'USER_PASSWORD_AUTH', username: holder.username, password: 'Wrong-Password-1' }),
      );
      unknown = fastest(
        unknown,
        await once({ type: 'USER_PASSWORD_AUTH', username: 'nobody.here', password: 'Wrong-Password-1' }),
      );
    }
    assert.ok(known !== undefined && unknown !== undefined);
    assert.equal(known.r.statusCode, unknown.r.statusCode);
    assert.deepEqual(withoutRequestId(known.r), withoutRequestId(unknown.r));
    // Both verified an argon2id hash (a dummy one for the unknown name): neither answered in a blink.
    assert.ok(
      unknown.ms > known.ms * 0.3,
      `unknown ${unknown.ms.toFixed(1)} ms vs known ${known.ms.toFixed(1)} ms`,
    );

    const forgotKnown = await client.token(acme.sandbox, {
      type: 'FORGOT_PASSWORD',
      username: holder.username,
    });
    const forgotUnknown = await client.token(acme.sandbox, {
      type: 'FORGOT_PASSWORD',
      username: 'nobody.here',
    });
    assert.deepEqual(forgotKnown.json(), forgotUnknown.json());
    const codeKnown = await client.token(acme.sandbox, {
      type: 'FORGOT_PASSWORD_CODE',
      username: holder.username,
      new_password: strongPassword(),
      code: '123456',
    });
    const codeUnknown = await client.token(acme.sandbox, {
      type: 'FORGOT_PASSWORD_CODE',
      username: 'nobody.here',
      new_password: strongPassword(),
      code: '123456',
    });
    if (codeKnown.statusCode !== 200)
      assert.deepEqual(withoutRequestId(codeKnown), withoutRequestId(codeUnknown));
    const resendKnown = await client.token(acme.sandbox, {
      type: 'RESEND_PASSWORD',
      username: holder.username,
    });
    const resendUnknown = await client.token(acme.sandbox, {
      type: 'RESEND_PASSWORD',
      username: 'nobody.here',
    });
    assert.deepEqual(resendKnown.json(), resendUnknown.json());
  });

  test('per account: after 5 failures 429 with Retry-After, doubling; a correct password waits too, then works', async () => {
    const { holder, password } = await client.loggedIn(acme.sandbox);
    const wrong = { type: 'USER_PASSWORD_AUTH', username: holder.username, password: 'Wrong-Password-1' };
    for (let k = 0; k < 5; k++)
      assertProblem(await client.token(acme.sandbox, wrong), 401, 'INVALID_CREDENTIALS');
    const blocked = await client.token(acme.sandbox, { ...wrong, password });
    assertProblem(blocked, 429, 'RATE_LIMITED');
    assert.equal(blocked.headers['retry-after'], '1');
    clock.advance(1000);
    assertProblem(await client.token(acme.sandbox, wrong), 401, 'INVALID_CREDENTIALS');
    const doubled = await client.token(acme.sandbox, wrong);
    assertProblem(doubled, 429, 'RATE_LIMITED');
    assert.equal(doubled.headers['retry-after'], '2');
    clock.advance(2000);
    await client.login(acme.sandbox, holder.username, password);
    // A success clears the account's count.
    assertProblem(await client.token(acme.sandbox, wrong), 401, 'INVALID_CREDENTIALS');

    // Unknown usernames are throttled exactly alike (nothing tells them apart).
    const ghost = { type: 'USER_PASSWORD_AUTH', username: 'ghost.rider', password: 'Wrong-Password-1' };
    for (let k = 0; k < 5; k++) await client.token(acme.sandbox, ghost);
    assertProblem(await client.token(acme.sandbox, ghost), 429, 'RATE_LIMITED');
    // After a quiet day the count starts again: 4 failures in a row, none delayed.
    clock.advance(86_400_000 + 2000);
    for (let k = 0; k < 4; k++)
      assertProblem(await client.token(acme.sandbox, ghost), 401, 'INVALID_CREDENTIALS');
  });

  test('per account: its username and its email (any case) share one count of failures and of reset emails', async () => {
    const { holder, password } = await client.loggedIn(acme.sandbox);
    const logins = [holder.username, ` ${holder.email.toUpperCase()} `];
    for (let k = 0; k < 5; k++) {
      const wrong = { type: 'USER_PASSWORD_AUTH', username: logins[k % 2], password: 'Wrong-Password-1' };
      assertProblem(await client.token(acme.sandbox, wrong), 401, 'INVALID_CREDENTIALS');
    }
    for (const username of logins)
      assertProblem(
        await client.token(acme.sandbox, { type: 'USER_PASSWORD_AUTH', username, password }),
        429,
        'RATE_LIMITED',
      );
    clock.advance(1000);
    await client.login(acme.sandbox, holder.email, password);

    // Five reset emails in a row, then a wait, whichever login asks for them.
    const other = await client.newHolder(acme.sandbox);
    for (let k = 0; k < 5; k++) {
      const r = await client.token(acme.sandbox, {
        type: 'FORGOT_PASSWORD',
        username: [other.username, other.email][k % 2],
      });
      assert.equal(r.statusCode, 200, r.body);
    }
    for (const username of [other.username, other.email])
      assertProblem(
        await client.token(acme.sandbox, { type: 'FORGOT_PASSWORD', username }),
        429,
        'RATE_LIMITED',
      );
  });

  test('per address: 20 failures from one address → 429 for any username from it', async () => {
    const address = nextAddress();
    for (let k = 0; k < 20; k++) {
      const r = await client.token(
        acme.sandbox,
        { type: 'USER_PASSWORD_AUTH', username: `spray${k}`, password: 'Wrong-Password-1' },
        address,
      );
      assertProblem(r, 401, 'INVALID_CREDENTIALS');
    }
    const r = await client.token(
      acme.sandbox,
      { type: 'USER_PASSWORD_AUTH', username: 'spray-next', password: 'Wrong-Password-1' },
      address,
    );
    assertProblem(r, 429, 'RATE_LIMITED');
    assert.ok(Number(r.headers['retry-after']) >= 1);
    const elsewhere = await client.token(
      acme.sandbox,
      { type: 'USER_PASSWORD_AUTH', username: 'spray-next', password: 'Wrong-Password-1' },
      nextAddress(),
    );
    assertProblem(elsewhere, 401, 'INVALID_CREDENTIALS');
  });

  test('per address: an IPv6 client is counted by its /64, so stepping through its addresses gains nothing', async () => {
    const attempt = (username: string, address: string) =>
      client.token(
        acme.sandbox,
        { type: 'USER_PASSWORD_AUTH', username, password: 'Wrong-Password-1' },
        address,
      );
    for (let k = 1; k <= 20; k++)
      assertProblem(await attempt(`hop${k}`, `2001:db8:77:1::${k.toString(16)}`), 401, 'INVALID_CREDENTIALS');
    assertProblem(await attempt('hop-next', '2001:db8:77:1:ffff:1:2:3'), 429, 'RATE_LIMITED');
    // Another /64 is another client.
    assertProblem(await attempt('hop-next', '2001:db8:77:2::1'), 401, 'INVALID_CREDENTIALS');
  });

  test('nothing secret reaches the logs', async () => {
    // Request logging ran at debug for the whole file: no password, code, session or token appears.
    await client.token(acme.sandbox, {
      type: 'USER_PASSWORD_AUTH',
      username: uniqueEmail(),
      password: keep('Never-Logged-9'),
    });
    const text = logs.join('');
    assert.ok(text.length > 1000, 'the log was written');
    for (const secret of secrets) {
      // Whole tokens only: a 6-digit reset code turns up by chance inside the log's timestamps and
      // fractional response times (about 1 run in 40), while a leaked one stands alone, as a string.
      const standalone = new RegExp(`(?<![A-Za-z0-9])${RegExp.escape(secret)}(?![A-Za-z0-9])`);
      assert.ok(!standalone.test(text), `a secret leaked into the log: ${secret.slice(0, 4)}…`);
    }
  });
});
