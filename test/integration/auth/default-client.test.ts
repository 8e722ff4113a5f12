import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createMetricsRegistry } from '../../../src/platform/http/observability.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { assertProblem, nextAddress } from './auth-support.ts';

// DEFAULT_CLIENT_ID (issue 19, item 4): a single-insurer deployment's apps send no client_id.
const clock = fixedClock('2025-06-01T12:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let other: Awaited<ReturnType<typeof createCompany>>;
/** The same service with DEFAULT_CLIENT_ID naming Acme: its config is read once, at start. */
let single: FastifyInstance;
let unknownDefault: FastifyInstance;

/** The service over the same container, started with `defaultClientId`. */
async function appWithDefault(defaultClientId: string): Promise<FastifyInstance> {
  const app = await buildApp({
    ...t.container,
    config: Object.freeze({ ...t.container.config, defaultClientId }),
    metrics: createMetricsRegistry(),
  });
  await app.ready();
  return app;
}

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
  single = await appWithDefault(acme.client_id);
  unknownDefault = await appWithDefault('mp_client_nobody');
});
after(async () => {
  await single.close();
  await unknownDefault.close();
  await t.close();
});

const login = (app: FastifyInstance, headers: Record<string, string>, username: string, password: string) =>
  app.inject({
    method: 'POST',
    url: '/auth/token',
    headers,
    payload: { type: 'USER_PASSWORD_AUTH', username, password },
    remoteAddress: nextAddress(),
  });

describe('DEFAULT_CLIENT_ID', () => {
  test('unset (the default): a login without client_id answers 401 as before', async () => {
    const holder = await make.policyholder(t, acme.sandbox);
    const r = await login(t.app, {}, holder.username, holder.temporaryPassword);
    assertProblem(r, 401, 'INVALID_CLIENT_CREDENTIALS');
    assert.equal(r.json<{ detail: string }>().detail, 'The client_id header is required');
  });

  test('set: a login without client_id logs in to that company (sandbox when no environment is sent)', async () => {
    const holder = await make.policyholder(t, acme.sandbox);
    const r = await login(single, {}, holder.username, holder.temporaryPassword);
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json<{ type: string }>().type, 'NEW_PASSWORD_REQUIRED');
    // The whole flow goes on without a client id: the session step too.
    const next = await single.inject({
      method: 'POST',
      url: '/auth/token',
      payload: {
        type: 'NEW_PASSWORD_REQUIRED',
        username: holder.username,
        session: r.json<{ session: string }>().session,
        new_password: 'Marmalade-Lantern-Orbit-77',
      },
      remoteAddress: nextAddress(),
    });
    assert.deepEqual(next.json(), { type: 'PASSWORD_RESET' });
    const done = await login(single, {}, holder.username, 'Marmalade-Lantern-Orbit-77');
    assert.equal(done.json<{ type: string }>().type, 'DONE');
  });

  test('set: an explicit client_id still names the company; the default does not leak to another', async () => {
    const holder = await make.policyholder(t, other.sandbox);
    // Another company's user is unknown to the default company, and the answer says no more than that.
    assertProblem(
      await login(single, {}, holder.username, holder.temporaryPassword),
      401,
      'INVALID_CREDENTIALS',
    );
    const r = await login(single, { client_id: other.client_id }, holder.username, holder.temporaryPassword);
    assert.equal(r.json<{ type: string }>().type, 'NEW_PASSWORD_REQUIRED', r.body);
  });

  test('set: the environment header still chooses the environment', async () => {
    const holder = await make.policyholder(t, acme.sandbox);
    const r = await login(single, { environment: 'production' }, holder.username, holder.temporaryPassword);
    assertProblem(r, 401, 'INVALID_CREDENTIALS');
  });

  test('set: every other client route still requires the client credentials', async () => {
    const r = await single.inject({ method: 'GET', url: '/companies/current' });
    assertProblem(r, 401, 'INVALID_CLIENT_CREDENTIALS');
  });

  test('set to a client_id that no company has: 401, never a 5xx', async () => {
    const r = await login(unknownDefault, {}, 'someone', 'Marmalade-Lantern-Orbit-77');
    assertProblem(r, 401, 'INVALID_CLIENT_CREDENTIALS');
  });
});
