import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fixedClock } from '../../../src/platform/clock.ts';
import { encodePolyline } from '../../../src/platform/geo/index.ts';
import { createCompany, createTestApp, TEST_ADMIN_KEY, type TestApp } from '../../support/app.ts';
import { createTestDatabase, onPostgres } from '../../support/database.ts';
import { freePort } from '../../support/free-port.ts';

/**
 * Bodies that cost far more to hold than their bytes (a million keys, a million items, nesting ten
 * thousand deep, a string of 10 MB where a short one is wanted) are refused before they are parsed,
 * on every route that takes a body, while the process keeps answering.
 */

interface Problem {
  status: number;
  code: string;
  errors?: Array<{ path: string; message: string }>;
}

const clock = fixedClock('2025-09-20T12:00:00Z');
let t: TestApp;
let clientHeaders: Record<string, string>;
let stripeSandboxKey: string;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  const acme = await createCompany(t.app, 'Acme');
  clientHeaders = acme.sandbox;
  stripeSandboxKey = acme.stripe_sandbox_secret_key;
});
after(async () => {
  await t.close();
});

/** `{"k0":0,"k1":0,…}`: one object of `count` keys (1,000,000 keys are 11.9 MB). */
function manyKeys(count: number): Buffer {
  const parts: string[] = [];
  for (let k = 0; k < count; k++) parts.push(`"k${String(k)}":0`);
  return Buffer.from(`{${parts.join(',')}}`);
}
/** `{"journeys":[0,0,…]}`: one array of `count` small items. */
function manyItems(count: number): Buffer {
  return Buffer.from(`{"journeys":[${'0,'.repeat(count - 1)}0]}`);
}
/** Arrays `depth` deep. */
function deep(depth: number): Buffer {
  return Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`);
}
/** A batch of one journey whose route is a single string of `characters`. */
function longString(characters: number): Buffer {
  return Buffer.from(`{"journeys":[{"route":"${'x'.repeat(characters)}"}]}`);
}

/** The bombs of the brief, whatever a route's byte limit (refused by their bytes or their shape). */
const bombs = [
  { name: '1,000,000 keys', body: manyKeys(1_000_000) },
  { name: '1,000,000 items', body: manyItems(1_000_000) },
  { name: 'nesting 10,000 deep', body: deep(10_000) },
  { name: 'a string of 10 MB', body: longString(10_000_000) },
];
/** The same, within the 1 MiB byte limit of most routes: only their shape is against them. */
const smallBombs = [
  { name: '80,000 keys in 0.9 MB', body: manyKeys(80_000) },
  { name: '400,000 items in 0.8 MB', body: manyItems(400_000) },
  { name: 'nesting 10,000 deep in 20 kB', body: deep(10_000) },
  { name: 'a string of 1,000,000 characters', body: longString(1_000_000) },
];

/** Every route of the OpenAPI document with a JSON request body, `{param}` filled with a harmless value. */
async function jsonBodyRoutes(): Promise<Array<{ method: string; url: string; types: string[] }>> {
  const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
  }>();
  return Object.entries(doc.paths).flatMap(([route, operations]) =>
    Object.entries(operations).flatMap(([method, operation]) => {
      const types = Object.keys(operation.requestBody?.content ?? {}).filter((type) =>
        /^application\/(?:[\w.-]+\+)?json$/.test(type),
      );
      return types.length === 0
        ? []
        : [{ method: method.toUpperCase(), url: route.replaceAll(/\{[^}]+\}/g, 'x'), types }];
    }),
  );
}

/** GET /healthz again and again until `done` settles (at most `maxProbes`); every answer's status. */
async function probeHealth(done: Promise<unknown>, maxProbes: number): Promise<number[]> {
  const state = { finished: false };
  void done.finally(() => (state.finished = true));
  const statuses: number[] = [];
  while (!state.finished && statuses.length < maxProbes) {
    const r = await t.app.inject({ method: 'GET', url: '/healthz' });
    statuses.push(r.statusCode);
    await sleep(5);
  }
  return statuses;
}

describe('bodies bounded by their shape, not only their bytes', () => {
  test('every JSON route refuses each bomb with 413 problem+json, and /healthz answers throughout', async () => {
    const routes = await jsonBodyRoutes();
    assert.ok(routes.length > 25, `only ${String(routes.length)} JSON routes found`);
    const failures: string[] = [];
    const sendAll = (async () => {
      for (const route of routes)
        for (const type of route.types)
          for (const bomb of [...bombs, ...smallBombs]) {
            // A route of 100,000 points is up to 1,200,000 characters: this string is one they take.
            if (route.url.startsWith('/journeys') && bomb.name.startsWith('a string of 1,000,000')) continue;
            // With the route's credentials: without them a route answers 401 before it reads the body.
            const credentials = route.url.startsWith('/admin/') ? t.adminHeaders : clientHeaders;
            const r = await t.app.inject({
              method: route.method,
              url: route.url,
              headers: { ...credentials, 'content-type': type },
              payload: bomb.body,
            });
            const where = `${route.method} ${route.url} (${type}), ${bomb.name}`;
            // The processor's webhook checks its signature on the raw bytes before anything parses them.
            const expected = route.url === '/webhooks/stripe' ? [401, 413] : [413];
            if (!expected.includes(r.statusCode)) {
              failures.push(`${where}: ${String(r.statusCode)} ${r.body.slice(0, 300)}`);
              continue;
            }
            assert.match(String(r.headers['content-type']), /application\/problem\+json/, where);
            if (r.statusCode === 413) assert.equal(r.json<Problem>().code, 'PAYLOAD_TOO_LARGE', where);
          }
    })();
    const health = await probeHealth(sendAll, 20_000);
    await sendAll;
    assert.deepEqual(failures, []);
    assert.ok(health.length > 0);
    assert.deepEqual(
      health.filter((s) => s !== 200),
      [],
    );
  });

  test('a refusal names where the body went beyond the route’s limit', async () => {
    const send = async (body: Buffer) => {
      const r = await t.app.inject({
        method: 'POST',
        url: '/journeys/batch',
        headers: { ...clientHeaders, 'content-type': 'application/json' },
        payload: body,
      });
      assert.equal(r.statusCode, 413, r.body.slice(0, 300));
      return r.json<Problem>().errors?.[0];
    };
    assert.equal((await send(manyKeys(1_000_000)))?.path, '/body');
    assert.equal((await send(manyItems(1_000_000)))?.path, '/body/journeys');
    assert.equal((await send(longString(10_000_000)))?.path, '/body/journeys/0/route');
    assert.match((await send(deep(10_000)))?.path ?? '', /^\/body(\/0)+$/);
  });

  test('a body within its limits that fails in 190,000 places answers with the first 1,000', async () => {
    // 19,000 positions (within twice the 10,000 the route takes), every field of each of the wrong type.
    const position =
      '{"time":[],"lat":"","lon":"","speed_kmh":"","heading":"","accuracy_m":"","ignition":0,"odometer_metres":""}';
    const r = await t.app.inject({
      method: 'POST',
      url: '/telematics/positions',
      headers: { ...clientHeaders, 'content-type': 'application/json' },
      payload: `{"device_id":"d","positions":[${Array.from({ length: 19_000 }, () => position).join(',')}]}`,
    });
    assert.equal(r.statusCode, 422, r.body.slice(0, 300));
    const problem = r.json<Problem & { detail: string }>();
    assert.equal(problem.errors?.length, 1000);
    assert.match(problem.detail, /; and more$/);
    assert.ok(r.body.length < 1_000_000, `an answer of ${String(r.body.length)} characters`);
  });

  test('form bodies are bounded too: the service’s and the sandbox’s', async () => {
    const fields = Array.from({ length: 80_000 }, (_, k) => `f${String(k)}=1`).join('&');
    const service = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { ...clientHeaders, 'content-type': 'application/x-www-form-urlencoded' },
      payload: fields,
    });
    assert.equal(service.statusCode, 413, service.body.slice(0, 300));
    assert.match(String(service.headers['content-type']), /application\/problem\+json/);
    // The sandbox nests bracketed names (`metadata[policy]`) as Stripe does: their depth is bounded too.
    for (const payload of [fields, `a${'[a]'.repeat(10_000)}=1`]) {
      const sandbox = await t.app.inject({
        method: 'POST',
        url: '/sandbox/stripe/v1/customers',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Bearer ${stripeSandboxKey}`,
        },
        payload,
      });
      // Stripe's own words for a request it will not read: 400 invalid_request_error.
      assert.equal(sandbox.statusCode, 400, sandbox.body.slice(0, 300));
      const { error } = sandbox.json<{ error: { type: string; message: string } }>();
      assert.equal(error.type, 'invalid_request_error');
      assert.match(error.message, /more than/);
    }
  });

  test('a full batch (1,000 journeys, 16 MiB) and a route of 100,000 points still pass', async () => {
    const journeys = Array.from({ length: 1000 }, (_, n) => ({
      route: walk(5_000, n),
      start_time: Date.parse('2025-08-01T08:00:00Z') / 1000 + n * 1800,
      end_time: Date.parse('2025-08-01T08:25:00Z') / 1000 + n * 1800,
      policy_reference: 'no-such-policy',
      provider_reference: `trip-${String(n)}`,
    }));
    const body = JSON.stringify({ journeys });
    assert.ok(body.length > 15 * 1024 * 1024 && body.length < 16 * 1024 * 1024, String(body.length));
    const batch = await t.app.inject({
      method: 'POST',
      url: '/journeys/batch',
      headers: { ...clientHeaders, 'content-type': 'application/json' },
      payload: body,
    });
    assert.equal(batch.statusCode, 200, batch.body.slice(0, 300));
    const results = batch.json<{ results: Array<{ status: number }> }>().results;
    assert.equal(results.length, 1000);
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set([404]));

    const single = await t.app.inject({
      method: 'POST',
      url: '/journeys',
      headers: { ...clientHeaders, 'content-type': 'application/json' },
      payload: { ...journeys[0], route: walk(100_000, 0) },
    });
    assert.equal(single.statusCode, 404, single.body.slice(0, 300));
  });
});

/** A seeded random walk of `points` through London, a few tens of metres a step, as a polyline. */
function walk(points: number, seed: number): string {
  let state = 42 + seed;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  const out: number[] = [];
  let lat = 51.5;
  let lng = -0.14;
  let bearing = 0.7;
  for (let k = 0; k < points; k++) {
    out.push(lat, lng);
    bearing += (random() - 0.5) * 0.6;
    const metres = 15 + random() * 25;
    lat += (metres * Math.cos(bearing)) / 111_200;
    lng += (metres * Math.sin(bearing)) / (111_200 * Math.cos((lat * Math.PI) / 180));
  }
  return encodePolyline(out, 5);
}

/** The start script's environment assignments, Node flags and entry point, as `npm start` runs them. */
function startCommand(): { env: Record<string, string>; flags: string[]; entry: string } {
  const { scripts } = JSON.parse(
    fs.readFileSync(path.resolve(import.meta.dirname, '../../../package.json'), 'utf8'),
  ) as { scripts: { start: string } };
  const words = scripts.start.split(/\s+/).filter(Boolean);
  const assignments = words.filter((w) => /^[A-Z_]+=/.test(w));
  return {
    env: Object.fromEntries(
      assignments.map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
    ),
    flags: words.filter((w) => w.startsWith('--')),
    entry: words.find((w) => w.endsWith('.js')) ?? 'dist/main.js',
  };
}

describe('the service as npm start runs it (dist/main.js, old space capped at 256 MB)', () => {
  test('survives a body of 1,000,000 keys and each other bomb, answering /healthz throughout', async () => {
    const command = startCommand();
    assert.ok(command.flags.includes('--max-old-space-size=256'), command.flags.join(' '));
    const root = path.resolve(import.meta.dirname, '../../..');
    // As `npm start`'s prestart: dist/ brought up to date with src/.
    execFileSync(process.execPath, ['--disable-warning=ExperimentalWarning', 'src/build.ts'], { cwd: root });
    const database = onPostgres ? await createTestDatabase() : undefined;
    const dataDir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'milepost-bombs-'));
    const port = await freePort();
    const child = spawn(process.execPath, [...command.flags, command.entry], {
      cwd: root,
      env: {
        PATH: process.env['PATH'] ?? '',
        ...command.env,
        ROLE: 'api',
        HOST: '127.0.0.1',
        PORT: String(port),
        ADMIN_API_KEY: TEST_ADMIN_KEY,
        LOG_LEVEL: 'warn',
        ...(database === undefined
          ? { DATA_DIR: dataDir }
          : { DATABASE_URL: database.connectionString ?? '' }),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-20_000);
    });
    const base = `http://127.0.0.1:${String(port)}`;
    try {
      // A new embedded database is created and migrated first: tens of seconds on a loaded machine.
      for (let attempt = 0; ; attempt++) {
        assert.equal(child.exitCode, null, `the service exited: ${stderr.slice(-3000)}`);
        assert.ok(attempt < 1800, `the service did not start: ${stderr.slice(-3000)}`);
        if (
          await fetch(`${base}/healthz`)
            .then((r) => r.ok)
            .catch(() => false)
        )
          break;
        await sleep(100);
      }
      const company = await fetch(`${base}/admin/companies`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Acme' }),
      });
      assert.equal(company.status, 201);
      const credentials = (await company.json()) as { client_id: string; client_secret_sandbox: string };
      const headers = {
        client_id: credentials.client_id,
        client_secret: credentials.client_secret_sandbox,
        'content-type': 'application/json',
      };
      const probing = { finished: false };
      const probes: Array<number | string> = [];
      const polling = (async () => {
        while (!probing.finished && probes.length < 5_000) {
          // A bound on each probe, so that a process that stops answering fails the test instead of hanging it.
          probes.push(
            await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(120_000) })
              .then((r) => r.status)
              .catch((error: unknown) => String(error)),
          );
          await sleep(20);
        }
      })();
      try {
        // The batch takes a string of 1,000,000 characters (a route): not a bomb there.
        const small = smallBombs.filter((bomb) => !bomb.name.startsWith('a string'));
        for (const bomb of [...bombs, ...small]) {
          const r = await fetch(`${base}/journeys/batch`, {
            method: 'POST',
            headers,
            body: bomb.body,
            signal: AbortSignal.timeout(120_000),
          }).catch((error: unknown) => assert.fail(`${bomb.name}: ${String(error)}\n${stderr.slice(-3000)}`));
          const text = await r.text();
          assert.equal(r.status, 413, `${bomb.name}: ${text.slice(0, 300)}`);
          assert.match(r.headers.get('content-type') ?? '', /application\/problem\+json/);
          assert.equal((JSON.parse(text) as Problem).code, 'PAYLOAD_TOO_LARGE');
        }
      } finally {
        probing.finished = true;
        await polling;
      }
      assert.ok(probes.length > 0);
      assert.deepEqual(
        probes.filter((p) => p !== 200),
        [],
      );
      assert.equal(child.exitCode, null, `the service exited: ${stderr.slice(-3000)}`);
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      await fs.promises.rm(dataDir, { recursive: true, force: true });
      await database?.close();
    }
  });
});
