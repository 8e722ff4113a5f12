import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { hashToken } from '../../../src/platform/crypto.ts';
import type { Clock } from '../../../src/platform/clock.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { startSmtpServer } from '../../support/smtp.ts';

export type Smtp = Awaited<ReturnType<typeof startSmtpServer>>;
export type Headers = Record<string, string>;

export interface Holder {
  readonly email: string;
  readonly username: string;
  readonly temporaryPassword: string;
  readonly userReference: string;
  readonly policyReference: string;
}

export interface DoneBody {
  username: string;
  access_token: string;
  refresh_token: string;
  expiry: number;
  type: 'DONE';
}

let counter = 0;
/** A fresh address per call unless one is given, so that per-address throttling never spills between tests. */
export const nextAddress = (): string => `198.51.${Math.floor(++counter / 250) % 250}.${(counter % 250) + 1}`;
export const uniqueEmail = (tag = 'holder'): string => `${tag}.${process.pid}.${++counter}@example.com`;

/** A strong personal password (passes the policy). */
export const strongPassword = (tag = ''): string => `Tangerine-Kettle-${tag}${++counter}-Orbit`;

/** The value of a `Label: value` line of an email's text part (the first: the HTML part comes after). */
export function emailLine(text: string, label: string): string | undefined {
  return new RegExp(`^${label}: (\\S+)\\r?$`, 'm').exec(text)?.[1];
}

export function createAuthClient(t: TestApp, smtp: Smtp) {
  async function token(
    headers: Headers,
    body: unknown,
    address = nextAddress(),
  ): Promise<LightMyRequestResponse> {
    return t.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers,
      payload: body as object,
      remoteAddress: address,
    });
  }

  /** Creates a policy for a new email and reads the welcome email from the SMTP server. */
  async function newHolder(company: Headers, email = uniqueEmail()): Promise<Holder> {
    const policy = await make.policy(t.app, company, { proposer: { email } });
    const [message] = await smtp.waitFor(email);
    const username = emailLine(message!.text, 'Username');
    const temporaryPassword = emailLine(message!.text, 'Temporary password');
    assert.ok(username !== undefined && temporaryPassword !== undefined);
    return {
      email,
      username,
      temporaryPassword,
      userReference: policy.userReference,
      policyReference: policy.reference,
    };
  }

  /** Rows 1 and 2: temporary password → session → personal password. */
  async function confirm(company: Headers, holder: Holder, password = strongPassword()): Promise<string> {
    const first = await token(company, {
      type: 'USER_PASSWORD_AUTH',
      username: holder.username,
      password: holder.temporaryPassword,
    });
    assert.equal(first.statusCode, 200, first.body);
    const { session } = first.json<{ session: string }>();
    const second = await token(company, {
      type: 'NEW_PASSWORD_REQUIRED',
      username: holder.username,
      session,
      new_password: password,
    });
    assert.equal(second.statusCode, 200, second.body);
    assert.deepEqual(second.json(), { type: 'PASSWORD_RESET' });
    return password;
  }

  async function login(company: Headers, username: string, password: string): Promise<DoneBody> {
    const r = await token(company, { type: 'USER_PASSWORD_AUTH', username, password });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json<DoneBody>();
    assert.equal(body.type, 'DONE');
    return body;
  }

  /** A confirmed policyholder with tokens. */
  async function loggedIn(company: Headers) {
    const holder = await newHolder(company);
    const password = await confirm(company, holder);
    return { holder, password, tokens: await login(company, holder.username, password) };
  }

  const get = (url: string, headers: Headers) => t.app.inject({ method: 'GET', url, headers });

  return { token, newHolder, confirm, login, loggedIn, get };
}

/** The problem body without the per-request id. */
export function withoutRequestId(response: LightMyRequestResponse): Record<string, unknown> {
  const { request_id: _id, ...rest } = response.json<Record<string, unknown>>();
  return rest;
}

export function assertProblem(response: LightMyRequestResponse, status: number, code: string): void {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /application\/problem\+json/);
  assert.equal(response.json<{ code: string }>().code, code, response.body);
}

/**
 * Moves a spent refresh token's rotation `ms` further into the past, as if that long had passed on the
 * database's clock (the one the reuse grace is measured on), without waiting for it.
 */
export async function backdateRotation(t: TestApp, refreshToken: string, ms: number): Promise<void> {
  const result = await sql`
    update auth_refresh_tokens set rotated_at = rotated_at - ${ms}::int * interval '1 millisecond'
    where token_hash = ${hashToken(refreshToken)} and rotated_at is not null`.execute(
    t.container.database.db,
  );
  assert.equal(Number(result.numAffectedRows), 1, 'one rotated token');
}

/** An app with workers on `clock`, a real SMTP server for its emails, and an auth client over both. */
export async function startAuthApp(clock: Clock) {
  const smtp = await startSmtpServer();
  const t = await createTestApp({ env: { SMTP_URL: smtp.url }, overrides: { clock }, startJobs: true });
  return {
    t,
    smtp,
    client: createAuthClient(t, smtp),
    close: async (): Promise<void> => {
      try {
        await t.close();
      } finally {
        await smtp.close();
      }
    },
  };
}
