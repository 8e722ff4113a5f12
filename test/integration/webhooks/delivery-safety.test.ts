import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { createWebhookService } from '../../../src/modules/webhooks/index.ts';
import { STRICT_URL_POLICY, urlPolicyFor } from '../../../src/modules/webhooks/rules/url-safety.ts';
import { sendWebhook, systemResolver, type Resolver } from '../../../src/modules/webhooks/webhook-sender.ts';
import { asTenant, type DataEnvironment } from '../../../src/modules/companies/index.ts';
import type { AppError } from '../../../src/platform/errors.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';

const LOCAL = urlPolicyFor('sandbox', true);
const payload = { headers: { 'content-type': 'application/json' }, body: '{"id":"x"}' };

/** A local HTTP server whose handler each test sets, counting the requests that reach it. */
let server: http.Server;
let base: string;
let hits = 0;
let handler: http.RequestListener = (_req, res) => res.writeHead(200).end('ok');

before(async () => {
  server = http.createServer((req, res) => {
    hits++;
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => {
        resolve();
      });
    }),
);

const resolvesTo =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('the sender', () => {
  test('a 2xx is a delivery, with status, duration and the start of the answer', async () => {
    handler = (_req, res) => res.writeHead(204).end();
    const outcome = await sendWebhook({ url: `${base}/ok`, policy: LOCAL, ...payload });
    assert.deepEqual([outcome.delivered, outcome.statusCode, outcome.error], [true, 204, null]);
    assert.ok(outcome.durationMs >= 0);
  });

  test('redirects are not followed: a 3xx is a failure and its target gets nothing', async () => {
    let followed = false;
    handler = (req, res) => {
      if (req.url === '/target') followed = true;
      res.writeHead(307, { location: `${base}/target` }).end();
    };
    const outcome = await sendWebhook({ url: `${base}/moved`, policy: LOCAL, ...payload });
    assert.deepEqual([outcome.delivered, outcome.statusCode], [false, 307]);
    assert.equal(followed, false);
  });

  test('no answer within the time limit is a failure', async () => {
    handler = () => undefined; // never answers
    const outcome = await sendWebhook({ url: `${base}/slow`, policy: LOCAL, timeoutMs: 200, ...payload });
    assert.equal(outcome.delivered, false);
    assert.equal(outcome.statusCode, null);
    assert.match(outcome.error ?? '', /no response within 200 ms/);
    assert.ok(outcome.durationMs >= 150 && outcome.durationMs < 5_000, `${outcome.durationMs} ms`);
  });

  test('a huge answer is read only up to 1 KiB', async () => {
    handler = (_req, res) => {
      res.writeHead(500);
      // 10 MB, written without waiting: the sender stops reading long before the end.
      const chunk = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 160; i++) res.write(chunk);
      res.end();
    };
    const outcome = await sendWebhook({ url: `${base}/huge`, policy: LOCAL, ...payload });
    assert.deepEqual([outcome.delivered, outcome.statusCode], [false, 500]);
    assert.equal(outcome.responseBody?.length, 1024);
  });

  test('addresses are checked on the connection itself: a name resolving to a private address is refused before connecting', async () => {
    handler = (_req, res) => res.writeHead(200).end();
    const before = hits;
    const port = (server.address() as AddressInfo).port;
    const cases: Array<[string, Resolver, RegExp]> = [
      [`https://rebind.example:${port}/`, resolvesTo('127.0.0.1'), /loopback address \(127\.0\.0\.1\)/],
      [
        `https://rebind.example:${port}/`,
        resolvesTo('93.184.216.34', '10.0.0.7'),
        /private address \(10\.0\.0\.7\)/,
      ],
      [`https://rebind.example:${port}/`, resolvesTo('::ffff:127.0.0.1'), /loopback/],
    ];
    for (const [url, resolve, reason] of cases) {
      const outcome = await sendWebhook({ url, policy: STRICT_URL_POLICY, resolve, ...payload });
      assert.equal(outcome.delivered, false);
      assert.match(outcome.error ?? '', reason);
    }
    // Even where private addresses are allowed (sandbox), link-local (cloud metadata) is not.
    const metadata = await sendWebhook({
      url: `http://metadata.example:${port}/`,
      policy: LOCAL,
      resolve: resolvesTo('169.254.169.254'),
      ...payload,
    });
    assert.match(metadata.error ?? '', /link-local/);
    // A name that resolves to an allowed address connects to that address.
    const allowed = await sendWebhook({
      url: `http://receiver.example:${port}/`,
      policy: LOCAL,
      resolve: resolvesTo('127.0.0.1'),
      ...payload,
    });
    assert.equal(allowed.delivered, true, allowed.error ?? '');
    assert.equal(hits, before + 1, 'only the allowed request reached the server');
  });

  test('literal addresses and http are refused by the strict policy without any lookup', async () => {
    const before = hits;
    for (const url of [`${base}/x`, 'https://127.0.0.1:1/x', 'https://[::ffff:7f00:1]:1/x']) {
      const outcome = await sendWebhook({
        url,
        policy: STRICT_URL_POLICY,
        resolve: () => Promise.reject(new Error('no lookup expected')),
        ...payload,
      });
      assert.equal(outcome.delivered, false, url);
      assert.match(outcome.error ?? '', /the URL must/, url);
    }
    assert.equal(hits, before);
  });
});

describe('the delivery worker in production', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  /** The container's webhook service, with DNS that answers `resolve` (there is no internet here). */
  const withDns = (resolve: Resolver, allowPrivate = false) =>
    createWebhookService({
      db: t.container.database.db,
      clock: t.container.clock,
      notifications: t.container.services.notifications,
      allowPrivate,
      retryScheduleMs: [60_000],
      pollIntervalMs: 1_000,
      resolve,
    });
  const tenantOf = async (company: Awaited<ReturnType<typeof createCompany>>, environment: DataEnvironment) =>
    asTenant(
      (
        await t.container.database.db
          .selectFrom('companies')
          .select('id')
          .where('client_id', '=', company.client_id)
          .executeTakeFirstOrThrow()
      ).id,
      environment,
    );
  const lookupFails =
    (code: string): Resolver =>
    () =>
      Promise.reject(Object.assign(new Error(`getaddrinfo ${code}`), { code }));

  test('registration resolves a production name: unknown to DNS or private, 422 naming the URL; public, or DNS silent, accepted', async () => {
    const company = await createCompany(t.app);
    const production = await tenantOf(company, 'production');
    const url = 'https://hooks.insurer.example/milepost';
    const refused = async (resolve: Resolver, message: RegExp) =>
      assert.rejects(withDns(resolve).create(production, { url }), (error: AppError) => {
        assert.equal(error.code, 'VALIDATION_FAILED');
        const [field] = error.errors;
        assert.equal(field?.path, '/body/url');
        assert.match(field.message, message);
        return true;
      });
    await refused(lookupFails('ENOTFOUND'), /names a host that does not resolve \(hooks\.insurer\.example:/);
    await refused(lookupFails('ENODATA'), /does not resolve/);
    await refused(resolvesTo('93.184.216.34', '10.0.0.7'), /resolves to a private address \(10\.0\.0\.7\)/);
    // The system's own resolver: `.invalid` never resolves (RFC 2606), with or without the internet.
    await assert.rejects(
      withDns(systemResolver).create(production, { url: 'https://hooks.insurer.invalid/x' }),
      /names a host that does not resolve/,
    );
    // A resolver that cannot answer now says nothing about the URL; deliveries resolve it again.
    for (const resolve of [resolvesTo('93.184.216.34'), lookupFails('EAI_AGAIN')])
      assert.equal((await withDns(resolve).create(production, { url })).url, url);
  });

  test('a sandbox that refuses private addresses (WEBHOOKS_ALLOW_PRIVATE=false) still takes a name DNS does not know yet', async () => {
    const company = await createCompany(t.app);
    const sandbox = await tenantOf(company, 'sandbox');
    const created = await withDns(lookupFails('ENOTFOUND')).create(sandbox, {
      url: 'https://hooks.insurer.example/later',
    });
    assert.equal(created.url, 'https://hooks.insurer.example/later');
    await assert.rejects(
      withDns(resolvesTo('127.0.0.1')).create(sandbox, { url: 'https://hooks.insurer.example/local' }),
      /resolves to a loopback address/,
    );
  });

  test('by default a sandbox endpoint is held to production’s addresses: loopback, private and http are refused', async () => {
    const { webhooksAllowPrivate } = loadConfig({});
    const sandbox = await tenantOf(await createCompany(t.app), 'sandbox');
    const refused = async (url: string, resolve: Resolver, message: RegExp) =>
      assert.rejects(withDns(resolve, webhooksAllowPrivate).create(sandbox, { url }), (error: AppError) => {
        assert.equal(error.code, 'VALIDATION_FAILED');
        assert.equal(error.errors[0]?.path, '/body/url');
        assert.match(error.errors[0].message, message);
        return true;
      });
    const publicDns = resolvesTo('93.184.216.34');
    await refused('https://127.0.0.1:8080/hook', publicDns, /loopback/);
    await refused('https://[::ffff:10.1.2.3]/hook', publicDns, /private/);
    await refused('https://localhost/hook', publicDns, /loopback/);
    await refused('https://hooks.insurer.example/x', resolvesTo('192.168.1.20'), /private address/);
    await refused('http://hooks.insurer.example/x', publicDns, /https/);
    // And when an endpoint saved while its name was public is delivered to, the worker refuses too.
    const saved = await withDns(publicDns, webhooksAllowPrivate).create(sandbox, {
      url: 'https://hooks.insurer.example/later',
    });
    assert.equal(saved.url, 'https://hooks.insurer.example/later');
    assert.deepEqual(urlPolicyFor('sandbox', webhooksAllowPrivate), STRICT_URL_POLICY);
  });

  test('an endpoint whose name later resolves to a private address gets nothing: the attempt fails and is logged', async () => {
    const company = await createCompany(t.app);
    // Registered while its name pointed at a public address.
    const registered = await withDns(resolvesTo('93.184.216.34')).create(
      await tenantOf(company, 'production'),
      {
        url: 'https://hooks.rebind.example/milepost',
      },
    );
    const endpoint = { id: registered.id };
    const sent = await t.app.inject({
      method: 'POST',
      url: `/webhooks/${endpoint.id}/test`,
      headers: company.production,
    });
    assert.equal(sent.statusCode, 202, sent.body);
    // The same service as the container's, but its DNS now answers with an internal address.
    const rebound = withDns(resolvesTo('10.0.0.7'), true);
    assert.equal(await rebound.deliverDue(), 1);
    const [delivery] = (
      await t.app.inject({ url: `/webhooks/${endpoint.id}/deliveries`, headers: company.production })
    ).json<{
      deliveries: Array<{
        status: string;
        attempts: Array<{ status: string; response_status_code: number | null; error: string }>;
      }>;
    }>().deliveries;
    assert.equal(delivery?.status, 'pending', 'retried later, in case DNS is fixed');
    const [attempt] = delivery.attempts;
    assert.ok(attempt);
    assert.equal(attempt.status, 'failed');
    assert.equal(attempt.response_status_code, null);
    assert.match(attempt.error, /hooks\.rebind\.example resolves to a private address \(10\.0\.0\.7\)/);
  });
});
