import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Clock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { heldOpen, onPostgres, someoneWaitsForLock } from '../../support/database.ts';
import { createStaff, signInStaff, STAFF_PASSWORD, totpCode } from './staff-support.ts';

// A clock the test moves: idle expiry and TOTP steps without waiting.
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
let t: TestApp;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  await createCompany(t.app);
});
after(() => t.close());

const cookieOf = (response: { headers: Record<string, string | string[] | number | undefined> }): string => {
  const value = response.headers['set-cookie'];
  const first = Array.isArray(value) ? (value[0] ?? '') : String(value ?? '');
  return first.split(';')[0] ?? '';
};

async function start(email: string, password: string) {
  return t.app.inject({ method: 'POST', url: '/staff/session', payload: { email, password } });
}

describe('staff sign-in', () => {
  test(
    'a sign-in that checked the old password while the credentials were reset starts no session that outlives the reset',
    { skip: !onPostgres && 'PostgreSQL only: PGlite runs one transaction at a time' },
    async () => {
      // A member without TOTP: the password alone makes the session active.
      const member = await signInStaff(t, 'race.viewer@insurer.example', 'viewer');
      const db = t.container.database.db;
      // A credentials reset as the service makes one (a new password, every session revoked), held
      // open while the sign-in runs.
      const reset = await heldOpen(db, async (trx) => {
        await trx
          .updateTable('staff')
          .set({ password_hash: 'reset', password_is_temporary: true })
          .where('id', '=', member.staffId)
          .execute();
        await trx
          .updateTable('staff_sessions')
          .set({ revoked_at: new Date() })
          .where('staff_id', '=', member.staffId)
          .where('revoked_at', 'is', null)
          .execute();
      });
      const signIn = start(member.email, STAFF_PASSWORD);
      // The sign-in waits for the reset's row lock (without one it finishes at once), then the reset commits.
      await someoneWaitsForLock(db, 3_000);
      await reset.commit();
      const answer = await signIn;
      if (answer.statusCode === 401) return;
      assert.equal(answer.statusCode, 200, answer.body);
      const read = await t.app.inject({ url: '/staff/session', headers: { cookie: cookieOf(answer) } });
      assert.equal(read.statusCode, 401, `the sign-in's session outlived the reset: ${read.body}`);
    },
  );

  test('an admin: one-time password, a new password, TOTP enrolment with a QR code, then active', async () => {
    const created = await createStaff(t, 'Ada.Admin@Insurer.example', 'admin');
    const first = await start('ada.admin@insurer.example', created.one_time_password);
    assert.equal(first.statusCode, 200, first.body);
    const setCookie = String(first.headers['set-cookie']);
    assert.match(setCookie, /^milepost_staff=mps_[\w-]+;/);
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /SameSite=Strict/);
    assert.match(setCookie, /Path=\//);
    assert.doesNotMatch(setCookie, /Secure/, 'plain http here: Secure only over https');
    const cookie = cookieOf(first);
    const view = first.json<{ stage: string; csrf_token: string }>();
    assert.equal(view.stage, 'new_password');
    const headers = { cookie, 'x-csrf-token': view.csrf_token };

    // Nothing else works before the sign-in is finished.
    const early = await t.app.inject({ url: '/admin/companies', headers: { cookie } });
    assert.equal(early.statusCode, 401);

    const weak = await t.app.inject({
      method: 'POST',
      url: '/staff/session/password',
      headers,
      payload: { new_password: 'password1' },
    });
    assert.equal(weak.statusCode, 422);
    const noCsrf = await t.app.inject({
      method: 'POST',
      url: '/staff/session/password',
      headers: { cookie },
      payload: { new_password: STAFF_PASSWORD },
    });
    assert.equal(noCsrf.statusCode, 403);
    assert.equal(noCsrf.json<{ code: string }>().code, 'CSRF_TOKEN_INVALID');

    const changed = await t.app.inject({
      method: 'POST',
      url: '/staff/session/password',
      headers,
      payload: { new_password: STAFF_PASSWORD },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    const enrol = changed.json<{
      stage: string;
      totp_enrolment: { secret: string; otpauth_uri: string; qr_svg: string };
    }>();
    assert.equal(enrol.stage, 'totp_enrol', 'TOTP is mandatory for admins');
    assert.match(enrol.totp_enrolment.otpauth_uri, /^otpauth:\/\/totp\/.*secret=[A-Z2-7]+/);
    assert.match(enrol.totp_enrolment.qr_svg, /^<svg[\s\S]*<\/svg>\s*$/);

    const wrong = await t.app.inject({
      method: 'POST',
      url: '/staff/session/totp',
      headers,
      payload: { code: '000000' },
    });
    assert.equal(wrong.statusCode, 401);
    const code = totpCode(enrol.totp_enrolment.secret, clock.now().getTime());
    const done = await t.app.inject({
      method: 'POST',
      url: '/staff/session/totp',
      headers,
      payload: { code },
    });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json<{ stage: string }>().stage, 'active');
    assert.equal((await t.app.inject({ url: '/admin/companies', headers: { cookie } })).statusCode, 200);

    // The next sign-in asks for a code, and a code is accepted once.
    const again = await start('ada.admin@insurer.example', STAFF_PASSWORD);
    assert.equal(again.json<{ stage: string }>().stage, 'totp');
    const againHeaders = {
      cookie: cookieOf(again),
      'x-csrf-token': again.json<{ csrf_token: string }>().csrf_token,
    };
    const replay = await t.app.inject({
      method: 'POST',
      url: '/staff/session/totp',
      headers: againHeaders,
      payload: { code },
    });
    assert.equal(replay.statusCode, 401, 'the code used at enrolment cannot be used again');
    offsetMs += 30_000;
    const next = await t.app.inject({
      method: 'POST',
      url: '/staff/session/totp',
      headers: againHeaders,
      payload: { code: totpCode(enrol.totp_enrolment.secret, clock.now().getTime()) },
    });
    assert.equal(next.statusCode, 200, next.body);
    assert.equal(next.json<{ stage: string }>().stage, 'active');
  });

  test('operations and viewers: TOTP optional, enrolled from their account', async () => {
    const ops = await signInStaff(t, 'otto@insurer.example', 'operations');
    assert.equal(ops.totpSecret, undefined);
    const begun = await t.app.inject({ method: 'POST', url: '/staff/me/totp', headers: ops.headers });
    assert.equal(begun.statusCode, 200, begun.body);
    const secret = begun.json<{ secret: string }>().secret;
    const confirmed = await t.app.inject({
      method: 'POST',
      url: '/staff/me/totp/confirm',
      headers: ops.headers,
      payload: { code: totpCode(secret, clock.now().getTime()) },
    });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.equal(confirmed.json<{ staff: { totp_enabled: boolean } }>().staff.totp_enabled, true);
    offsetMs += 30_000;
    const next = await start('otto@insurer.example', STAFF_PASSWORD);
    assert.equal(
      next.json<{ stage: string }>().stage,
      'totp',
      'once enrolled, every sign-in asks for a code',
    );
  });

  test('wrong passwords are throttled with Retry-After; an unknown email gets the same answer', async () => {
    await createStaff(t, 'tess@insurer.example', 'viewer');
    const unknown = await start('nobody@insurer.example', 'Wrong-Password-123');
    const known = await start('tess@insurer.example', 'Wrong-Password-123');
    assert.equal(unknown.statusCode, 401);
    assert.equal(known.statusCode, 401);
    const { request_id: _a, ...unknownBody } = unknown.json<Record<string, unknown>>();
    const { request_id: _b, ...knownBody } = known.json<Record<string, unknown>>();
    assert.deepEqual(unknownBody, knownBody);
    let limited;
    for (let i = 0; i < 10 && limited === undefined; i++) {
      const answer = await start('tess@insurer.example', 'Wrong-Password-123');
      if (answer.statusCode === 429) limited = answer;
    }
    assert.ok(limited !== undefined, 'throttled after the free failures');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
  });

  test('sign out, sign out everywhere, idle expiry, deactivation', async () => {
    const one = await signInStaff(t, 'sam@insurer.example', 'viewer');
    const read = () => t.app.inject({ url: '/admin/companies', headers: { cookie: one.cookie } });
    assert.equal((await read()).statusCode, 200);

    // A second browser; signing out everywhere from it ends the first too.
    const second = await start('sam@insurer.example', STAFF_PASSWORD);
    const secondHeaders = {
      cookie: cookieOf(second),
      'x-csrf-token': second.json<{ csrf_token: string }>().csrf_token,
    };
    const everywhere = await t.app.inject({
      method: 'DELETE',
      url: '/staff/sessions',
      headers: secondHeaders,
    });
    assert.equal(everywhere.statusCode, 204);
    assert.equal((await read()).statusCode, 401);

    const fresh = await start('sam@insurer.example', STAFF_PASSWORD);
    const freshCookie = cookieOf(fresh);
    const freshRead = () => t.app.inject({ url: '/staff/session', headers: { cookie: freshCookie } });
    assert.equal((await freshRead()).statusCode, 200);
    offsetMs += 11 * 3_600_000;
    assert.equal((await freshRead()).statusCode, 200, 'used within 12 hours: still open, and moved on');
    offsetMs += 11 * 3_600_000;
    assert.equal((await freshRead()).statusCode, 200, '11 hours after its last use');
    offsetMs += 12 * 3_600_000 + 1000;
    assert.equal((await freshRead()).statusCode, 401, '12 hours unused: ended');

    const admin = await signInStaff(t, 'ann@insurer.example', 'admin');
    const victim = await signInStaff(t, 'vic@insurer.example', 'operations');
    const off = await t.app.inject({
      method: 'PATCH',
      url: `/admin/staff/${victim.staffId}`,
      headers: admin.headers,
      payload: { active: false },
    });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(
      (await t.app.inject({ url: '/admin/companies', headers: { cookie: victim.cookie } })).statusCode,
      401,
    );
    assert.equal((await start('vic@insurer.example', STAFF_PASSWORD)).statusCode, 401);

    const signOut = await t.app.inject({ method: 'DELETE', url: '/staff/session', headers: admin.headers });
    assert.equal(signOut.statusCode, 204);
    assert.equal(
      (await t.app.inject({ url: '/staff/session', headers: { cookie: admin.cookie } })).statusCode,
      401,
    );
  });

  test('npm run cli -- staff create prints a one-time password that signs in (on the service’s database)', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'milepost-cli-'));
    try {
      const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' } as Record<string, string>;
      // On PostgreSQL the command reaches this test's database; on PGlite it has a data directory of its own.
      if (onPostgres) env['DATABASE_URL'] = t.container.database.connectionString ?? '';
      else delete env['DATABASE_URL'];
      const run = (...args: string[]) =>
        promisify(execFile)(process.execPath, ['src/cli.ts', ...args], { env });
      const { stdout } = await run(
        'staff',
        'create',
        '--email',
        'Cleo@Insurer.example',
        '--role',
        'operations',
      );
      const printed = JSON.parse(stdout) as { email: string; role: string; one_time_password: string };
      assert.equal(printed.email, 'cleo@insurer.example');
      assert.equal(printed.role, 'operations');
      assert.match(printed.one_time_password, /^\S{16}$/);
      await assert.rejects(
        run('staff', 'create', '--email', 'x@insurer.example', '--role', 'root'),
        /--role/,
      );
      if (onPostgres) {
        const first = await start('cleo@insurer.example', printed.one_time_password);
        assert.equal(first.statusCode, 200, first.body);
        assert.equal(first.json<{ stage: string }>().stage, 'new_password');
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  test('the admin key still works for automation, and the audit trail keeps sign-ins', async () => {
    assert.equal((await t.app.inject({ url: '/admin/staff', headers: t.adminHeaders })).statusCode, 200);
    const rows = await sql<{ n: number }>`
      select count(*)::int as n from audit_records where action = 'staff.signIn'`.execute(
      t.container.database.db,
    );
    assert.ok((rows.rows[0]?.n ?? 0) >= 4);
  });
});
