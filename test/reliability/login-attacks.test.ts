import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ACCOUNT_THROTTLE } from '../../src/modules/auth/index.ts';
import type { Clock } from '../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { make } from '../support/factories.ts';
import { createStaff } from '../integration/staff/staff-support.ts';
import { seededRandom } from '../support/random.ts';

/**
 * R6, brute force and enumeration as a bounded suite, for policyholders (`POST /auth/token`) and staff
 * (`POST /staff/session`):
 * - one account attacked: 5 free failures, then a delay that doubles with each failure (1 s, 2 s, 4 s…,
 *   at most 15 minutes), answered 429 with `Retry-After`, the right password included while it lasts;
 * - many accounts from one address: 20 free failures for the address, whatever the usernames;
 * - enumeration: attempts on existing and unknown usernames, interleaved in a seeded order, get the same
 *   status and body, and take the same time within noise (an unknown name pays the same argon2id).
 * RELIABILITY_LOGIN_ACCOUNTS, RELIABILITY_LOGIN_SEED replay or resize a run.
 */
const ACCOUNTS = Number(process.env['RELIABILITY_LOGIN_ACCOUNTS'] ?? 20);
const SEED = Number(process.env['RELIABILITY_LOGIN_SEED'] ?? Date.now() % 1_000_000);
/** Tries per existing account in the timing sample: fewer than the free failures, so none is delayed. */
const TRIES_PER_ACCOUNT = 4;

let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
const usernames: string[] = [];
let addressCounter = 0;
/** A fresh client address (TEST-NET-2), so that per-address counting stays out of a per-account test. */
const nextAddress = () =>
  `198.51.${String(Math.floor(++addressCounter / 250))}.${String((addressCounter % 250) + 1)}`;

before(async () => {
  process.stdout.write(
    `# R6 login attacks: ${String(ACCOUNTS)} accounts × ${String(TRIES_PER_ACCOUNT)} timed tries a side, seed ${String(SEED)}\n`,
  );
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app);
  for (let i = 0; i < ACCOUNTS; i++) {
    const holder = await make.policyholder(
      t,
      acme,
      { proposer: { email: `target${String(i)}@example.com` } },
      { live: true },
    );
    usernames.push(holder.username);
  }
});
after(() => t.close());

const login = (username: string, password: string, address = nextAddress()) =>
  t.app.inject({
    method: 'POST',
    url: '/auth/token',
    headers: { client_id: acme.client_id, environment: 'sandbox' },
    payload: { type: 'USER_PASSWORD_AUTH', username, password },
    remoteAddress: address,
  });
const staffSignIn = (email: string, password: string, address = nextAddress()) =>
  t.app.inject({
    method: 'POST',
    url: '/staff/session',
    payload: { email, password },
    remoteAddress: address,
  });

type Attempt = (password: string) => ReturnType<typeof login>;

/** The doubling delays on one account: each wait honoured, then the next failure doubles it. */
async function bruteForce(attempt: Attempt, rightPassword: string): Promise<number[]> {
  const delays: number[] = [];
  for (let i = 0; i < 5; i++) assert.equal((await attempt(`Wrong-guess-${String(i)}`)).statusCode, 401);
  for (let round = 0; round < 12; round++) {
    const blocked = await attempt(`Wrong-guess-x${String(round)}`);
    assert.equal(blocked.statusCode, 429, blocked.body);
    assert.equal(blocked.json<{ code: string }>().code, 'RATE_LIMITED');
    const wait = Number(blocked.headers['retry-after']);
    delays.push(wait);
    // The right password is no key while the delay lasts: the answer tells nothing.
    assert.equal((await attempt(rightPassword)).statusCode, 429);
    offsetMs += wait * 1000;
    assert.equal((await attempt(`Wrong-guess-y${String(round)}`)).statusCode, 401, 'after the wait, a try');
  }
  return delays;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/**
 * Rounds of the timing sample. A loaded machine (CI runs other suites beside this one) can slow a
 * stretch of tries by tens of milliseconds; a real difference, such as an argon2id skipped for unknown
 * names, shows in every round. Between rounds the clock moves past the accounts' forgetting time.
 */
const TIMING_ROUNDS = 3;

/**
 * Same status and body (but the request id) for existing and unknown names, and the same time within
 * noise. Tries go in pairs, an existing and an unknown name back to back in a seeded order, and the
 * pairs' differences are compared: a burst of load slows both tries of a pair alike.
 */
async function enumeration(
  existing: string[],
  unknownIn: (round: number) => string[],
  attempt: (name: string) => ReturnType<typeof login>,
) {
  const next = seededRandom(SEED);
  const timed = async (name: string, bodies: Set<string>): Promise<number> => {
    const started = performance.now();
    const answer = await attempt(name);
    const elapsed = performance.now() - started;
    assert.equal(answer.statusCode, 401, answer.body);
    const { request_id: _id, ...body } = answer.json<Record<string, unknown>>();
    bodies.add(JSON.stringify(body));
    return elapsed;
  };
  for (let round = 1; ; round++) {
    const unknown = unknownIn(round);
    const pairs = existing
      .map((name, i) => ({ name, other: unknown[i] ?? '', key: next(), knownFirst: next() < 0.5 }))
      .sort((a, b) => a.key - b.key);
    const times = { known: [] as number[], unknown: [] as number[], differences: [] as number[] };
    const bodies = new Set<string>();
    for (const { name, other, knownFirst } of pairs) {
      const [first, second] = knownFirst ? [name, other] : [other, name];
      const [a, b] = [await timed(first, bodies), await timed(second, bodies)];
      const [known, unknownMs] = knownFirst ? [a, b] : [b, a];
      times.known.push(known);
      times.unknown.push(unknownMs);
      times.differences.push(known - unknownMs);
    }
    assert.equal(bodies.size, 1, [...bodies].join('\n'));
    const [k, u, d] = [median(times.known), median(times.unknown), median(times.differences)];
    process.stdout.write(
      `#   round ${String(round)}: median ${k.toFixed(1)} ms existing, ${u.toFixed(1)} ms unknown, ${d.toFixed(1)} ms apart in a pair (${String(pairs.length)} pairs)\n`,
    );
    if (Math.abs(d) <= Math.max(5, 0.35 * Math.max(k, u))) return;
    assert.ok(
      round < TIMING_ROUNDS,
      `existing and unknown names ${d.toFixed(1)} ms apart (medians ${k.toFixed(1)} and ${u.toFixed(1)} ms) in each of ${String(round)} rounds`,
    );
    // The existing accounts' failures forgotten, so the next round's tries are not delayed.
    offsetMs += ACCOUNT_THROTTLE.forgetAfterSeconds * 1000 + 3600_000;
  }
}

describe('R6: brute force and enumeration', () => {
  test('a policyholder account under attack: 5 free failures, then doubling delays up to 15 minutes', async () => {
    const target = usernames[0] ?? '';
    const delays = await bruteForce((password) => login(target, password), 'Juniper-Harbour-Lantern-42');
    assert.deepEqual(delays, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]);
  });

  test('many accounts from one address: the address is held after 20 failures, whatever the names', async () => {
    const address = '203.0.113.66';
    for (let i = 0; i < 20; i++)
      assert.equal((await login(`spray-${String(i)}`, 'Winter2025!', address)).statusCode, 401);
    const held = await login('spray-new', 'Winter2025!', address);
    assert.equal(held.statusCode, 429);
    assert.ok(Number(held.headers['retry-after']) >= 1);
    assert.equal((await login('spray-new', 'Winter2025!')).statusCode, 401, 'another address is not held');
    offsetMs += 3600_000;
  });

  test('no policyholder enumeration: existing and unknown usernames answer alike', async () => {
    const existing = usernames
      .slice(1)
      .flatMap((name) => Array.from({ length: TRIES_PER_ACCOUNT }, () => name));
    const unknownIn = (round: number) => existing.map((_, i) => `nobody${String(i)}x${String(round)}`);
    await enumeration(existing, unknownIn, (name) => login(name, 'Not-the-password-9'));
  });

  test('staff: the same throttling, and no enumeration of staff emails', async () => {
    const emails: string[] = [];
    for (let i = 0; i < Math.max(2, Math.floor(ACCOUNTS / 4)); i++) {
      const email = `staff${String(i)}@insurer.example`;
      await createStaff(t, email, 'viewer');
      emails.push(email);
    }
    const first = emails[0] ?? '';
    const delays = await bruteForce((password) => staffSignIn(first, password), 'irrelevant');
    assert.deepEqual(delays.slice(0, 5), [1, 2, 4, 8, 16]);
    const existing = emails
      .slice(1)
      .flatMap((email) => Array.from({ length: TRIES_PER_ACCOUNT }, () => email));
    const unknownIn = (round: number) =>
      existing.map((_, i) => `nobody${String(i)}.${String(round)}@insurer.example`);
    await enumeration(existing, unknownIn, (email) => staffSignIn(email, 'Not-the-password-9'));
  });
});
