import { Secret, TOTP } from 'otpauth';
import type { TestApp } from '../../support/app.ts';

/** The code an authenticator app shows now for `secret` (base32), `stepOffset` steps from now. */
export const totpCode = (secret: string, at: number, stepOffset = 0): string =>
  new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({
    timestamp: at + stepOffset * 30_000,
  });

/** A staff member signed in as the console does: one-time password, new password, TOTP where due. */
export interface SignedInStaff {
  readonly email: string;
  readonly staffId: string;
  readonly role: string;
  readonly cookie: string;
  readonly csrf: string;
  readonly totpSecret: string | undefined;
  /** Headers of a state-changing request of this session. */
  readonly headers: Record<string, string>;
}

export const STAFF_PASSWORD = 'Quarry-Lantern-Meadow-77';

const cookieOf = (setCookie: string | string[] | undefined): string => {
  const first = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  return (first ?? '').split(';')[0] ?? '';
};

/** A staff member made through the admin API, with their one-time password. */
export async function createStaff(t: TestApp, email: string, role: string) {
  const created = await t.app.inject({
    method: 'POST',
    url: '/admin/staff',
    headers: t.adminHeaders,
    payload: { email, role },
  });
  if (created.statusCode !== 201) throw new Error(`staff create failed: ${created.body}`);
  return created.json<{ staff_id: string; one_time_password: string }>();
}

export async function signInStaff(
  t: TestApp,
  email: string,
  role: 'admin' | 'operations' | 'viewer' | 'claims',
  options: { enrolTotp?: boolean } = {},
): Promise<SignedInStaff> {
  const created = await createStaff(t, email, role);
  const first = await t.app.inject({
    method: 'POST',
    url: '/staff/session',
    payload: { email, password: created.one_time_password },
  });
  if (first.statusCode !== 200) throw new Error(`sign-in failed: ${first.body}`);
  const cookie = cookieOf(first.headers['set-cookie']);
  let view = first.json<{ stage: string; csrf_token: string; totp_enrolment?: { secret: string } }>();
  const step = async (url: string, payload: object) => {
    const answer = await t.app.inject({
      method: 'POST',
      url,
      headers: { cookie, 'x-csrf-token': view.csrf_token },
      payload,
    });
    if (answer.statusCode !== 200) throw new Error(`${url} failed: ${answer.body}`);
    view = answer.json();
  };
  await step('/staff/session/password', { new_password: STAFF_PASSWORD });
  let totpSecret: string | undefined;
  if (view.stage === 'totp_enrol') {
    totpSecret = view.totp_enrolment?.secret ?? '';
    await step('/staff/session/totp', { code: totpCode(totpSecret, t.container.clock.now().getTime()) });
  }
  if (options.enrolTotp === true && totpSecret === undefined) {
    const begun = await t.app.inject({
      method: 'POST',
      url: '/staff/me/totp',
      headers: { cookie, 'x-csrf-token': view.csrf_token },
    });
    totpSecret = begun.json<{ secret: string }>().secret;
    await step('/staff/me/totp/confirm', { code: totpCode(totpSecret, t.container.clock.now().getTime()) });
  }
  if (view.stage !== 'active') throw new Error(`sign-in ended at ${view.stage}`);
  return {
    email,
    staffId: created.staff_id,
    role,
    cookie,
    csrf: view.csrf_token,
    totpSecret,
    headers: { cookie, 'x-csrf-token': view.csrf_token },
  };
}
