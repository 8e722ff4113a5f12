import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import type { BrowserContext, Page } from 'playwright-core';
import { encodePolyline } from '../../src/platform/geo/index.ts';
import { exampleRateBookContent, make as rating } from '../integration/rating/rate-book-support.ts';
import { signInStaff } from '../integration/staff/staff-support.ts';
import { make, type MadePolicy } from '../support/factories.ts';
import { startWebRig, type WebRig } from './browser-support.ts';

export type StaffRole = 'admin' | 'operations' | 'viewer' | 'claims';

/** The password staff choose in place of their one-time one (12+ characters, not a common one). */
export const STAFF_PASSWORD = 'Quarry-Lantern-Orchard-731';

/**
 * The code an authenticator app shows for a base32 secret (SHA-1, 6 digits, 30 s), `steps` steps from
 * now: the service accepts one step either side and refuses a step at or before the last it accepted,
 * so a second sign-in within 30 s uses the next step's code.
 */
export const totpCode = (secret: string, steps = 0): string =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: Date.now() + steps * 30_000,
  });

/** A policy for the console to find: its reference, vehicle and postcode, and one journey with a route. */
export interface ConsolePolicy {
  readonly reference: string;
  readonly email: string;
  readonly reg: string;
  readonly postcode: string;
  readonly journey: { journey_reference: string; start_name: string | null; end_name: string | null };
}

export interface ConsoleRig extends WebRig {
  /** A staff member created with the admin key, and their one-time password. */
  createStaff(
    tag: string,
    role: StaffRole,
  ): Promise<{ staffId: string; email: string; oneTimePassword: string }>;
  /**
   * A staff member signed in over HTTP as the console would (one-time password, then STAFF_PASSWORD,
   * then for an admin a TOTP enrolment), and a page whose browser holds their session cookie.
   */
  signedInStaff(
    tag: string,
    role: StaffRole,
    width?: number,
  ): Promise<{ email: string; context: BrowserContext; page: Page; problems: string[] }>;
  /** A policy of the rig's company (sandbox) with a journey yesterday along the south coast. */
  newPolicy(tag: string): Promise<ConsolePolicy>;
  /** A mid-term adjustment of a policy made by newPolicy: another vehicle, all else as it was. */
  changeVehicle(reference: string, reg: string): Promise<void>;
}

/** Yesterday at `hour`:00 UTC, UNIX seconds: inside a live test policy's term (it began 30 days ago). */
const yesterdayAt = (hour: number): number =>
  Math.floor(Date.now() / 86_400_000) * 86_400 - 86_400 + hour * 3600;

/** Brighton → Worthing → Chichester, sampled every few hundred metres as a tracker would. */
function southCoastRoute(): string {
  const via: Array<[number, number]> = [
    [50.8225, -0.1372],
    [50.8179, -0.3729],
    [50.8365, -0.7792],
  ];
  const points: number[] = [];
  via.forEach(([lat, lng], leg) => {
    const next = via[leg + 1];
    if (next === undefined) return void points.push(lat, lng);
    for (let k = 0; k < 30; k++)
      points.push(
        lat + ((next[0] - lat) * k) / 30,
        lng + ((next[1] - lng) * k) / 30 + 0.004 * Math.sin(k / 3),
      );
  });
  return encodePolyline(points, 5);
}

/**
 * The page's console errors, less the browser's own line for each refused request the console expects
 * and handles (401 while signed out or for a wrong password, 403 for a forbidden action, 422 for a
 * wrong code): anything left is a script error or a CSP violation.
 */
export const unexpected = (problems: readonly string[]): string[] =>
  problems.filter((problem) => !/the server responded with a status of (401|403|422)\b/.test(problem));

const LETTERS = 'ABCDEFGHJKLMNPRSTUVWXYZ';
/** The letters a postcode's inward code may use (never C, I, K, M, O or V). */
const INWARD_LETTERS = 'ABDEFGHJLNPQRSTUWXYZ';

/** The service and Chromium as startWebRig starts them (it serves /console/ too), with staff helpers. */
export async function startConsoleRig(): Promise<ConsoleRig> {
  const web = await startWebRig();
  const { t, acme, baseUrl } = web;
  let counter = 0;
  /** What each policy was created with, so an adjustment can send the whole snapshot again. */
  const inputs = new Map<string, MadePolicy['input']>();
  const unique = () => `${process.pid}-${++counter}`;

  const createStaff: ConsoleRig['createStaff'] = async (tag, role) => {
    const email = `${tag}.${unique()}@staff.example.com`;
    const created = await t.app.inject({
      method: 'POST',
      url: '/admin/staff',
      headers: t.adminHeaders,
      payload: { email, role },
    });
    assert.equal(created.statusCode, 201, created.body);
    const body = created.json<{ staff_id: string; one_time_password: string }>();
    return { staffId: body.staff_id, email, oneTimePassword: body.one_time_password };
  };

  return {
    ...web,
    createStaff,
    async signedInStaff(tag, role, width = 1280) {
      const staff = await createStaff(tag, role);
      let cookie = '';
      let csrf = '';
      const call = async (method: string, path: string, body: object) => {
        const response = await fetch(`${baseUrl}${path}`, {
          method,
          headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf },
          body: JSON.stringify(body),
        });
        const set = /milepost_staff=([^;]*)/.exec(response.headers.get('set-cookie') ?? '')?.[1];
        if (set !== undefined) cookie = `milepost_staff=${set}`;
        const session = (await response.json()) as {
          stage: string;
          csrf_token: string;
          totp_enrolment?: { secret: string };
        };
        assert.equal(response.status, 200, JSON.stringify(session));
        csrf = session.csrf_token;
        return session;
      };
      await call('POST', '/staff/session', { email: staff.email, password: staff.oneTimePassword });
      let session = await call('POST', '/staff/session/password', { new_password: STAFF_PASSWORD });
      if (session.stage === 'totp_enrol')
        session = await call('POST', '/staff/session/totp', {
          code: totpCode(session.totp_enrolment?.secret ?? ''),
        });
      assert.equal(session.stage, 'active');
      const opened = await web.newPage(width);
      await opened.context.addCookies([
        { name: 'milepost_staff', value: cookie.slice('milepost_staff='.length), url: baseUrl },
      ]);
      return { email: staff.email, ...opened };
    },
    async newPolicy(tag) {
      const n = ++counter;
      const email = `${tag}.${process.pid}.${n}@example.com`;
      // A registration and postcode of this policy alone, so that a search finds just it.
      const letter = (i: number) => LETTERS[(process.pid + n * 7 + i * 3) % LETTERS.length] ?? 'X';
      const reg = `${letter(0)}${letter(1)}${String(10 + (n % 89))} ${letter(2)}${letter(3)}${letter(4)}`;
      const inward = (i: number) => INWARD_LETTERS[(process.pid + n * 5 + i) % INWARD_LETTERS.length] ?? 'A';
      const postcode = `BN${1 + (n % 40)} ${1 + (n % 9)}${inward(0)}${inward(1)}`;
      const { reference, input } = await make.livePolicy(t.app, acme, {
        proposer: { email },
        vehicle: { reg },
        policy: { address: { postcode } },
      });
      inputs.set(reference, input);
      const journey = await make.journey<ConsolePolicy['journey']>(t.app, acme, reference, yesterdayAt(9), {
        route: southCoastRoute(),
        durationSeconds: 3600,
      });
      const stored = await t.app.inject({
        method: 'GET',
        url: `/policys/${reference}`,
        headers: acme.sandbox,
      });
      const policy = stored.json<{ vehicle: { reg: string }; policy: { address: { postcode: string } } }>();
      return {
        reference,
        email,
        reg: policy.vehicle.reg,
        postcode: policy.policy.address.postcode,
        journey,
      };
    },
    async changeVehicle(reference, reg) {
      const input = inputs.get(reference);
      assert.ok(input !== undefined, `${reference} was made by newPolicy`);
      await make.adjustment(t.app, acme, { reference, input }, { vehicle: { reg } });
    },
  };
}

/**
 * A console rig whose company (sandbox) rates `pay-by-mile-car` on the worked example's rate book,
 * approved by a second admin (four eyes), as quotes need.
 */
export async function startRatedConsoleRig(): Promise<ConsoleRig> {
  const rig = await startConsoleRig();
  const ada = await signInStaff(rig.t, 'ada@insurer.example', 'admin');
  const bob = await signInStaff(rig.t, 'bob@insurer.example', 'admin');
  const as = (staff: { headers: Record<string, string> }) => ({
    ...staff.headers,
    client_id: rig.acme.client_id,
    environment: 'sandbox',
  });
  await rating.rateBook(rig.t, rig.acme.sandbox, 'pay-by-mile-car', 'car-rates');
  await rating.approvedVersion(rig.t, 'car-rates', as(ada), as(bob), exampleRateBookContent());
  return rig;
}
