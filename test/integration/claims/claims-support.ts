import assert from 'node:assert/strict';
import type { Clock } from '../../../src/platform/clock.ts';
import type { ClaimView } from '../../../src/modules/claims/claim-schemas.ts';
import type { TestApp } from '../../support/app.ts';

export type Headers = Record<string, string>;
export type Claim = ClaimView;
export interface Problem {
  code: string;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
}

/** Requests to the app under test. */
export function caller(t: () => TestApp) {
  return (method: 'GET' | 'POST' | 'PUT', url: string, headers: Headers, payload?: object) =>
    t().app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
}

/** A crash body at `timeS` (UNIX seconds) for `deviceId`. */
export const crashBody = (deviceId: string, timeS: number, extra: object = {}) => ({
  device_id: deviceId,
  type: 'crash',
  time: timeS,
  lat: 51.5074,
  lon: -0.1278,
  speed_kmh: 48,
  peak_acceleration_g: 6.2,
  ...extra,
});

/** `count` positions a second apart from `startS`, slowing to a stop at the end. */
export const positionsAround = (startS: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    time: startS + i,
    lat: 51.5 + i * 0.0001,
    lon: -0.1278,
    speed_kmh: Math.max(0, 50 - Math.max(0, i - 60) * 10),
  }));

/** One pass of the claims worker at the clock's time. */
export const claimsPass = (t: TestApp, clock: Clock) => t.container.services.claims.runOnce(clock.now());

/** The policy's claims as its reader sees them; asserts 200. */
export async function claimsOf(t: TestApp, headers: Headers, policyReference: string): Promise<Claim[]> {
  const r = await t.app.inject({ method: 'GET', url: `/policys/${policyReference}/claims`, headers });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ claims: Claim[] }>().claims;
}

/** A reported claim (open at once) for the policy; asserts 201. */
export async function reportClaim(
  t: TestApp,
  headers: Headers,
  policyReference: string,
  occurredAtS: number,
) {
  const r = await t.app.inject({
    method: 'POST',
    url: `/policys/${policyReference}/claims`,
    headers,
    payload: {
      occurred_at: occurredAtS,
      lat: 51.5155,
      lon: -0.1419,
      description: 'Reversed into a bollard in a car park.',
      injuries: false,
      other_vehicles: false,
      police_attended: false,
    },
  });
  assert.equal(r.statusCode, 201, r.body);
  return r.json<Claim>();
}

/** The smallest JPEG and PNG heads: enough bytes for their magic numbers, then filler. */
export const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(200, 1)]);
export const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(200, 2),
]);
export const PDF = Buffer.from('%PDF-1.7\n1 0 obj << >> endobj\n');

/** Fresh bearer headers for a policyholder (the test clock moves past a token's 15 minutes). */
export async function bearerOf(
  t: TestApp,
  clientId: string,
  who: { username: string; password: string },
): Promise<Headers> {
  const r = await t.app.inject({
    method: 'POST',
    url: '/auth/token',
    headers: { client_id: clientId, environment: 'sandbox' },
    payload: { type: 'USER_PASSWORD_AUTH', username: who.username, password: who.password },
  });
  assert.equal(r.statusCode, 200, r.body);
  return { authorization: `Bearer ${r.json<{ access_token: string }>().access_token}`, client_id: clientId };
}
