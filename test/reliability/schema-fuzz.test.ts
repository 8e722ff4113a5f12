import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { mapConcurrent } from '../../src/platform/concurrency.ts';
import { createLogger } from '../../src/platform/logging.ts';
import {
  createCompany,
  createTestApp,
  signedInPolicyholder,
  TEST_ADMIN_KEY,
  type TestApp,
} from '../support/app.ts';
import { onPostgres } from '../support/database.ts';
import { livePolicyInput } from '../support/policy-arbitraries.ts';
import {
  hostile,
  operationsOf,
  schemaArbitraries,
  type OpenApiDocument,
  type Operation,
} from './openapi-arbitraries.ts';

/**
 * R8, fuzzing from the OpenAPI document: requests generated from each operation's own schemas, valid
 * and mutated (wrong types, missing and extra fields, huge and unicode strings, deep nesting,
 * `__proto__`/`constructor` keys, duplicate keys, odd content types, 2 MB bodies), with the right
 * credentials so that they reach validation and the handlers. No answer may be a 5xx, every error is
 * problem+json, and the log holds none of the canary secrets planted in passwords, codes, tokens and
 * credential headers.
 * RELIABILITY_FUZZ_REQUESTS and RELIABILITY_FUZZ_SEED replay a run; RELIABILITY_LONG=1 sends 100,000.
 */
const REQUESTS = Number(
  process.env['RELIABILITY_FUZZ_REQUESTS'] ??
    (process.env['RELIABILITY_LONG'] === '1' ? 100_000 : onPostgres ? 20_000 : 5_000),
);
const SEED = Number(process.env['RELIABILITY_FUZZ_SEED'] ?? Date.now() % 1_000_000);
const CANARY = 'cnry';

/** A request to send: the body as text (already mutated), or a marker for the 2 MB one. */
interface FuzzRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string | { readonly hugeBytes: number } | undefined;
}

let t: TestApp;
let operations: Operation[] = [];
let valid: ReturnType<typeof schemaArbitraries>['valid'];
let credentials: Record<string, string> = {};
let bearer = '';
let knownValues: string[] = [];
const logged: string[] = [];

before(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged.push(chunk.toString());
      done();
    },
  });
  // The service's own logger and redaction, at info (requests and their errors are logged there).
  t = await createTestApp({ overrides: { logger: createLogger('info', sink) } });
  // Card payments in the sandbox go over a socket through the Stripe SDK (else they answer 503).
  t.container.setListeningUrl(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  const acme = await createCompany(t.app, 'Fuzz Insurer');
  credentials = acme.sandbox;
  const holder = await signedInPolicyholder(
    t,
    credentials,
    'fuzz.holder@example.com',
    livePolicyInput({ proposer: { email: 'fuzz.holder@example.com' } }),
  );
  bearer = `Bearer ${holder.accessToken}`;
  // Real identifiers, so that generated paths also reach existing resources.
  const doc = (await t.app.inject({ url: '/openapi.json' })).json<OpenApiDocument>();
  operations = operationsOf(doc);
  knownValues = [holder.policyReference, acme.company_reference];
  ({ valid } = schemaArbitraries(doc, knownValues, canary));
  process.stdout.write(
    `# R8 schema fuzzing: ${String(REQUESTS)} requests over ${String(operations.length)} operations, seed ${String(SEED)} (RELIABILITY_FUZZ_SEED=${String(SEED)} replays)\n`,
  );
});
after(() => t.close());

let canaries = 0;
const canary = (field: string): fc.Arbitrary<string> =>
  fc.constant(null).map(() => `${CANARY}-${field}-${String(++canaries)}x`);

/** One generated value changed where it hurts. */
function mutate(value: unknown): fc.Arbitrary<string> {
  const json = value === undefined ? 'null' : JSON.stringify(value);
  const asObject =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  const keys = Object.keys(asObject);
  return fc.oneof(
    // Wrong type at a field, or for the whole body.
    fc
      .tuple(
        fc.constantFrom(...(keys.length > 0 ? keys : ['x'])),
        fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostile),
      )
      .map(([key, bad]) => JSON.stringify({ ...asObject, [key]: bad })),
    // A required field missing.
    fc
      .constantFrom(...(keys.length > 0 ? keys : ['x']))
      .map((key) => JSON.stringify(Object.fromEntries(Object.entries(asObject).filter(([k]) => k !== key)))),
    // Extra fields, prototype keys among them (written as text: an object literal would not carry them).
    fc
      .constantFrom('__proto__', 'constructor', 'prototype', 'extra_field')
      .map((key) =>
        keys.length === 0
          ? `{"${key}":{"polluted":true}}`
          : `${json.slice(0, -1)},"${key}":{"polluted":true,"isAdmin":true}}`,
      ),
    // Duplicate keys: the last one wins in JSON.parse; it must not smuggle anything past validation.
    fc.constant(
      keys.length === 0 ? '{"a":1,"a":2}' : `${json.slice(0, -1)},"${keys[0] ?? 'x'}":{"dup":true}}`,
    ),
    // Deep nesting.
    fc.integer({ min: 100, max: 20_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
    fc.integer({ min: 100, max: 5_000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
    // Broken JSON and unicode.
    fc.constantFrom(
      json.slice(0, Math.max(1, json.length >> 1)),
      `${json}}`,
      '\ufeff' + json,
      json.replaceAll('"', "'"),
      '"\\ud800"',
      'NaN',
      '[1,]',
    ),
  );
}

function requestFor(operation: Operation): fc.Arbitrary<FuzzRequest> {
  const pathParams = operation.parameters.filter((p) => p.in === 'path');
  const queryParams = operation.parameters.filter((p) => p.in === 'query');
  const pathValue = fc.oneof(
    fc.constantFrom(...knownValues),
    fc.string({ minLength: 1, maxLength: 30 }),
    hostile.filter((s) => s.length > 0),
  );
  const query = fc.record(
    Object.fromEntries(
      queryParams.map((p) => [p.name, fc.oneof(valid(p.schema ?? {}).map(String), hostile)]),
    ),
    { requiredKeys: [] },
  );
  const bodyValue = operation.body === undefined ? fc.constant(undefined) : valid(operation.body);
  const body =
    operation.body === undefined
      ? fc.oneof(fc.constant(undefined), hostile)
      : fc.oneof(
          { weight: 3, arbitrary: bodyValue.map((v) => JSON.stringify(v)) },
          { weight: 5, arbitrary: bodyValue.chain(mutate) },
          { weight: 1, arbitrary: fc.constant({ hugeBytes: 2 * 1024 * 1024 }) },
        );
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant('application/json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/xml',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=utf-16',
        'application/gpx+xml',
        'application/geo+json',
        '',
      ),
    },
  );
  const authenticated = operation.path.startsWith('/admin')
    ? { authorization: `Bearer ${TEST_ADMIN_KEY}` }
    : operation.security.some((s) => 'policyholderToken' in s) &&
        !operation.security.some((s) => 'clientSecret' in s)
      ? { ...credentials, authorization: bearer }
      : credentials;
  const auth = fc.oneof(
    { weight: 18, arbitrary: fc.constant(authenticated) },
    // Canary credentials: refused, and never written to the log.
    {
      weight: 1,
      arbitrary: fc.constant(null).map(() => ({
        client_id: credentials['client_id'] ?? '',
        client_secret: `${CANARY}-secret-${String(++canaries)}x`,
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constant(null)
        .map(() => ({ ...credentials, authorization: `Bearer ${CANARY}-bearer-${String(++canaries)}x` })),
    },
  );
  const environment = fc.oneof(
    { weight: 9, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('production', 'mock', 'PRODUCTION', '', 'x'.repeat(300)) },
  );
  return fc
    .record({
      params: fc.array(pathValue, { minLength: pathParams.length, maxLength: pathParams.length }),
      query,
      body,
      contentType,
      auth,
      environment,
    })
    .map(({ params, query: q, body: b, contentType: type, auth: a, environment: env }) => {
      let url = operation.path;
      pathParams.forEach((p, i) => {
        url = url.replace(`{${p.name}}`, encodeURIComponent((params[i] ?? 'x').toWellFormed()));
      });
      const search = new URLSearchParams(q as Record<string, string>).toString();
      const headers: Record<string, string> = { ...a };
      if (env !== undefined) headers['environment'] = env;
      if (b !== undefined && type !== '') headers['content-type'] = type;
      return { method: operation.method, url: search === '' ? url : `${url}?${search}`, headers, body: b };
    });
}

test(
  'requests generated from the OpenAPI document: no 5xx, every error problem+json, no secret in the log',
  { timeout: 1_800_000 },
  async () => {
    const arbitrary = fc.oneof(...operations.map(requestFor));
    const requests = fc.sample(arbitrary, { numRuns: REQUESTS, seed: SEED });
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    await mapConcurrent(
      requests.map((request, index) => ({ request, index })),
      4,
      async ({ request, index }) => {
        const options: InjectOptions = {
          method: request.method,
          url: request.url,
          headers: request.headers,
        };
        if (typeof request.body === 'string') options.payload = request.body;
        else if (request.body !== undefined)
          options.payload = `{"a":"${'x'.repeat(request.body.hugeBytes)}"}`;
        const response = await t.app.inject(options);
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        const describe = () =>
          `#${String(index)} ${request.method} ${request.url.slice(0, 200)} ${JSON.stringify(request.headers).slice(0, 200)} body ${typeof request.body === 'string' ? request.body.slice(0, 300) : JSON.stringify(request.body)} → ${String(response.statusCode)} ${response.body.slice(0, 300)}`;
        if (response.statusCode >= 500) failures.push(describe());
        else if (response.statusCode >= 400) {
          const problem = /^application\/problem\+json/.test(String(response.headers['content-type']));
          let status: unknown;
          try {
            status = (JSON.parse(response.body) as { status?: unknown }).status;
          } catch {
            status = undefined;
          }
          if (!problem || status !== response.statusCode) failures.push(`not problem+json: ${describe()}`);
        }
      },
    );
    const summary = [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${String(s)}×${String(n)}`)
      .join(' ');
    process.stdout.write(`# R8 statuses: ${summary}\n`);
    assert.deepEqual(
      failures.slice(0, 10),
      [],
      `${String(failures.length)} bad answers (seed ${String(SEED)})`,
    );
    const leaks = logged.filter(
      (line) =>
        line.includes(CANARY) ||
        line.includes(credentials['client_secret'] ?? '\u0000') ||
        line.includes(TEST_ADMIN_KEY),
    );
    assert.deepEqual(
      leaks.slice(0, 5).map((line) => line.slice(0, 500)),
      [],
      `${String(leaks.length)} log lines with a secret`,
    );
    assert.ok(logged.length > 0, 'the log was captured');
  },
);
