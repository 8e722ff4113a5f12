import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer, type Container, type ContainerOverrides } from '../../src/container.ts';
import { createLogger } from '../../src/platform/logging.ts';
import type { PolicyInput } from '../../src/modules/policies/policy-schemas.ts';
import { createTestDatabase } from './database.ts';
import { make } from './factories.ts';

export const TEST_ADMIN_KEY = 'test-admin-key-0123456789abcdef0123456789';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly container: Container;
  readonly adminHeaders: Record<string, string>;
  close(): Promise<void>;
}

/**
 * The whole service on a fresh database, for `app.inject`. Jobs start only when asked, since most
 * tests drive services directly.
 */
export async function createTestApp(
  options: {
    env?: Record<string, string>;
    overrides?: ContainerOverrides;
    startJobs?: boolean;
    listen?: boolean;
  } = {},
): Promise<TestApp> {
  // Queues always exist (anything that enqueues needs them); workers and cron run only when asked.
  const config = loadConfig({
    ROLE: options.startJobs === true ? 'all' : 'api',
    ADMIN_API_KEY: TEST_ADMIN_KEY,
    LOG_LEVEL: process.env['TEST_LOG_LEVEL'] ?? 'silent',
    // The tests' webhook receivers listen on 127.0.0.1, as an integrator's do on a service run locally.
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    ...options.env,
  });
  const database = options.overrides?.database ?? (await createTestDatabase());
  const container = await createContainer(config, {
    logger: createLogger(config.logLevel),
    cronIntervalSeconds: 1,
    jobPollingSeconds: 0.5,
    // Most test files make no lookup, and the load is 0.2 s of CPU.
    warmGeocoder: false,
    ...options.overrides,
    database,
  });
  const app = await buildApp(container);
  await app.ready();
  // Card payments in the sandbox go over real HTTP through the Stripe SDK, so such tests listen.
  if (options.listen === true) container.setListeningUrl(await app.listen({ port: 0, host: '127.0.0.1' }));
  await container.start();
  return {
    app,
    container,
    adminHeaders: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
    async close() {
      await app.close();
      await container.close();
    },
  };
}

/** Creates a company through the admin API and returns its credentials as request headers. */
export async function createCompany(app: FastifyInstance, name = 'Test Insurer') {
  const response = await app.inject({
    method: 'POST',
    url: '/admin/companies',
    headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
    payload: { name },
  });
  if (response.statusCode !== 201) throw new Error(`company create failed: ${response.body}`);
  const credentials = response.json<{
    company_reference: string;
    client_id: string;
    client_secret: string;
    client_secret_sandbox: string;
    stripe_sandbox_secret_key: string;
  }>();
  return {
    ...credentials,
    sandbox: {
      client_id: credentials.client_id,
      client_secret: credentials.client_secret_sandbox,
      environment: 'sandbox',
    },
    production: {
      client_id: credentials.client_id,
      client_secret: credentials.client_secret,
      environment: 'production',
    },
  };
}

/** A policyholder signed in after the first login, as the apps hold them. */
export interface SignedInPolicyholder {
  readonly email: string;
  readonly policyReference: string;
  readonly username: string;
  readonly password: string;
  readonly accessToken: string;
  readonly refreshToken: string;
  /** UNIX seconds. */
  readonly expiry: number;
}

/**
 * Creates a policy for `email` (from `input`), then signs its policyholder in as a new one would: the
 * welcome email's temporary password, a password of their own (`password`), and a login with it.
 */
export async function signedInPolicyholder(
  t: TestApp,
  company: Readonly<Record<string, string>>,
  email: string,
  input: PolicyInput,
  password = 'Juniper-Harbour-Lantern-42',
): Promise<SignedInPolicyholder> {
  const created = await make.policyFrom(t.app, company, input);
  const welcome = (await t.container.services.notifications.emailsTo(email))[0]?.text ?? '';
  const line = (label: string) => new RegExp(`^${label}: (\\S+)\\r?$`, 'm').exec(welcome)?.[1] ?? '';
  const username = line('Username');
  const token = async (payload: Record<string, string>) => {
    const answer = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { client_id: company['client_id'] ?? '', environment: company['environment'] ?? 'sandbox' },
      payload,
    });
    if (answer.statusCode !== 200) throw new Error(`${payload['type'] ?? ''} failed: ${answer.body}`);
    return answer.json<Record<string, string>>();
  };
  const challenge = await token({
    type: 'USER_PASSWORD_AUTH',
    username,
    password: line('Temporary password'),
  });
  await token({
    type: 'NEW_PASSWORD_REQUIRED',
    username,
    session: challenge['session'] ?? '',
    new_password: password,
  });
  const done = await token({ type: 'USER_PASSWORD_AUTH', username, password });
  return {
    email,
    policyReference: created.reference,
    username,
    password,
    accessToken: done['access_token'] ?? '',
    refreshToken: done['refresh_token'] ?? '',
    expiry: Number(done['expiry']),
  };
}
