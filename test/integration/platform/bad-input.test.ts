import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { encodePolyline } from '../../../src/platform/geo/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
interface Problem {
  status: number;
  code: string;
  errors?: Array<{ path: string; message: string }>;
}

const clock = fixedClock('2025-09-20T12:00:00Z');
let t: TestApp;
let acme: Company;
let base: string;
let policyReference: string;

before(async () => {
  t = await createTestApp({ overrides: { clock }, listen: true });
  base = `http://127.0.0.1:${String((t.app.server.address() as { port: number }).port)}`;
  acme = await createCompany(t.app, 'Acme');
  policyReference = (await make.policy(t.app, acme, { proposer: { email: 'bad.input@example.com' } }))
    .reference;
});
after(async () => {
  await t.close();
});

/** Every route of the OpenAPI document, with `{param}` filled with a harmless value. */
async function documentedRoutes(): Promise<Array<{ method: string; url: string }>> {
  const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, unknown>>;
  }>();
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.keys(operations)
      .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map((method) => ({ method: method.toUpperCase(), url: path.replaceAll(/\{[^}]+\}/g, 'x') })),
  );
}

const SANDBOX_ROUTES = [
  'POST /sandbox/stripe/v1/customers',
  'POST /sandbox/stripe/v1/customers/cus_x',
  'POST /sandbox/stripe/v1/payment_methods/pm_x/attach',
  'POST /sandbox/stripe/v1/payment_intents',
  'POST /sandbox/stripe/v1/payment_intents/pi_x/confirm',
  'POST /sandbox/stripe/v1/refunds',
].map((line) => {
  const [method = '', url = ''] = line.split(' ');
  return { method, url };
});

function assertNotPolluted(): void {
  const probe: Record<string, unknown> = {};
  assert.equal(probe['x'], undefined, 'Object.prototype grew an injected property');
  assert.equal(probe['polluted'], undefined, 'Object.prototype grew an injected property');
  assert.equal(Object.getOwnPropertyNames(Object.prototype).includes('x'), false);
}

describe('prototype keys', () => {
  test('no form, JSON or query body reaches a prototype, on any route; the service still answers', async () => {
    const routes = [...(await documentedRoutes()), ...SANDBOX_ROUTES];
    assert.ok(routes.length > 30, `only ${String(routes.length)} routes found`);
    const bodies = [
      { type: 'application/x-www-form-urlencoded', payload: '__proto__[x]=1&constructor[prototype][x]=1' },
      { type: 'application/x-www-form-urlencoded', payload: 'metadata[__proto__][polluted]=1' },
      { type: 'application/json', payload: '{"__proto__":{"x":1}}' },
      { type: 'application/json', payload: '{"constructor":{"prototype":{"x":1}}}' },
      { type: 'application/json', payload: '{"custom":{"prototype":{"polluted":1}}}' },
    ];
    for (const route of routes) {
      for (const body of bodies) {
        const r = await t.app.inject({
          method: route.method,
          url: `${route.url}?__proto__[x]=1`,
          headers: { ...acme.sandbox, 'content-type': body.type, authorization: 'Bearer sk_test_x' },
          ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: body.payload }),
        });
        assert.ok(
          r.statusCode < 500,
          `${route.method} ${route.url} ${body.payload}: ${String(r.statusCode)} ${r.body}`,
        );
        assertNotPolluted();
      }
    }
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 200);
    const ordinary = await t.app.inject({
      method: 'GET',
      url: `/policys/${policyReference}`,
      headers: acme.sandbox,
    });
    assert.equal(ordinary.statusCode, 200);
  });

  test('a prototype key in a JSON body answers 422, named when the JSON parser let it through', async () => {
    const post = (custom: string) =>
      t.app.inject({
        method: 'POST',
        url: '/policys',
        headers: { ...acme.sandbox, 'content-type': 'application/json' },
        payload: JSON.stringify(examplePolicyInput()).replace(/"custom":\{/, `"custom":{${custom},`),
      });
    const named = await post('"prototype":1');
    assert.equal(named.statusCode, 422, named.body);
    assert.deepEqual(named.json<Problem>().errors?.[0]?.path, '/body/custom/prototype');
    for (const key of ['"__proto__":{"x":1}', '"constructor":{"prototype":{"x":1}}']) {
      const refused = await post(key);
      assert.equal(refused.statusCode, 422, refused.body);
    }
    assertNotPolluted();
  });

  test('the sandbox answers a prototype key as Stripe answers a bad parameter: 400', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/sandbox/stripe/v1/customers',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '__proto__[x]=1',
    });
    assert.equal(r.statusCode, 400, r.body);
    assert.equal(r.json<{ error: { type: string } }>().error.type, 'invalid_request_error');
    assertNotPolluted();
  });
});

describe('text and numbers that cannot be stored answer 422 naming the field', () => {
  const NUL = 'a\u0000b';
  const LONE = 'a\ud800b';
  const journey = (overrides: Record<string, unknown>) => ({
    policy_reference: policyReference,
    route: encodePolyline([51.501, -0.1416, 51.5115, -0.116], 5),
    start_time: Date.parse('2025-09-10T08:00:00Z') / 1000,
    end_time: Date.parse('2025-09-10T08:20:00Z') / 1000,
    ...overrides,
  });
  const cases = (): Array<{ name: string; method: string; url: string; payload?: unknown; path: string }> => [
    ...[NUL, LONE].flatMap((bad) => [
      {
        name: 'policy proposer name',
        method: 'POST',
        url: '/policys',
        payload: examplePolicyInput({ proposer: { first_names: bad } }),
        path: '/body/proposer/first_names',
      },
      {
        name: 'journey provider reference',
        method: 'POST',
        url: '/journeys',
        payload: journey({ provider_reference: bad }),
        path: '/body/provider_reference',
      },
      {
        name: 'login username',
        method: 'POST',
        url: '/auth/token',
        payload: { type: 'USER_PASSWORD_AUTH', username: bad, password: 'x' },
        path: '/body/username',
      },
      {
        name: 'statement policy reference',
        method: 'POST',
        url: '/statements',
        payload: { policy_reference: bad },
        path: '/body/policy_reference',
      },
      {
        name: 'webhook description',
        method: 'POST',
        url: '/webhooks',
        payload: { url: 'http://127.0.0.1:9/x', description: bad },
        path: '/body/description',
      },
      {
        name: 'payments policy reference',
        method: 'POST',
        url: '/payments',
        payload: { type: 'RETRY_PAYMENT', policy_reference: bad },
        path: '/body/policy_reference',
      },
      {
        name: 'custom key',
        method: 'POST',
        url: '/policys',
        payload: { ...examplePolicyInput(), custom: { [bad]: 1 } },
        path: `/body/custom/${bad}`,
      },
    ]),
    // A processor's id goes into a header (the idempotency key) and a URL path: one that could not
    // be sent there, or that is longer than any of the processor's, names nothing.
    ...['pm_\u4e2d', 'pm_a\nb', 'pm_a\u0001b', `pm_${'a'.repeat(120)}`].flatMap((bad) => [
      {
        name: `card ${JSON.stringify(bad).slice(0, 12)}`,
        method: 'POST',
        url: '/payments',
        payload: {
          type: 'ADD_NEW_PAYMENT_METHOD',
          product_reference: 'p',
          policy_reference: 'x',
          payment_method_id: bad,
        },
        path: '/body/payment_method_id',
      },
      {
        name: `policy payment ${JSON.stringify(bad).slice(0, 12)}`,
        method: 'POST',
        url: '/policys',
        payload: {
          ...examplePolicyInput(),
          payment: { payment_provider: 'stripe', provider_payment_reference: bad, payment_amount: 1 },
        },
        path: '/body/payment/provider_payment_reference',
      },
    ]),
    // A URL carries no lone surrogate (UTF-8 decoding replaces it), but it can carry NUL.
    {
      name: 'query',
      method: 'GET',
      url: '/statements?policy_reference=a%00b',
      path: '/querystring/policy_reference',
    },
    { name: 'path parameter', method: 'GET', url: '/policys/a%00b', path: '/params/policy_reference' },
    {
      name: 'a journey time of 1e309',
      method: 'POST',
      url: '/journeys',
      payload: '__raw__{"policy_reference":"x","route":"_p~iF~ps|U","start_time":1e309,"end_time":1e400}',
      path: '/body/start_time',
    },
    {
      name: 'limit=1e309',
      method: 'GET',
      url: '/statements?policy_reference=x&limit=1e309',
      path: '/querystring/limit',
    },
    {
      name: 'a date of birth in year 0',
      method: 'POST',
      url: '/policys',
      payload: examplePolicyInput({ proposer: { dob: '0000-01-01' } }),
      path: '/body/proposer/dob',
    },
    {
      name: 'a date beyond year 9999',
      method: 'POST',
      url: '/policys',
      payload: examplePolicyInput({ proposer: { dob: '+275760-09-13' } }),
      path: '/body/proposer/dob',
    },
    {
      name: 'a billing run in year 0',
      method: 'POST',
      url: '/admin/billing-runs',
      payload: { date: '0000-01-01' },
      path: '/body/date',
    },
  ];

  test('each case, on this database', async () => {
    for (const c of cases()) {
      const raw = typeof c.payload === 'string' && c.payload.startsWith('__raw__');
      const r = await t.app.inject({
        method: c.method,
        url: c.url,
        headers: { ...acme.sandbox, ...t.adminHeaders, 'content-type': 'application/json' },
        ...(c.payload === undefined
          ? {}
          : { payload: raw ? (c.payload as string).slice(7) : JSON.stringify(c.payload) }),
      });
      assert.equal(r.statusCode, 422, `${c.name}: ${r.body}`);
      assert.match(String(r.headers['content-type']), /application\/problem\+json/);
      const paths = (r.json<Problem>().errors ?? []).map((e) => e.path);
      assert.ok(paths.includes(c.path), `${c.name}: ${paths.join(', ')} does not name ${c.path}`);
    }
  });

  test('the sandbox answers NUL as Stripe does: 400, not 5xx', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/sandbox/stripe/v1/customers',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Bearer ${acme.stripe_sandbox_secret_key}`,
      },
      payload: 'email=a%00b%40example.com',
    });
    assert.equal(r.statusCode, 400, r.body);
    assert.equal(r.json<{ error: { type: string } }>().error.type, 'invalid_request_error');
  });
});

/** A request over a real socket, where Node's own parser runs (inject skips it). */
function raw(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}${path}`,
      { method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('errors before routing speak problem+json with the request id and CORS headers', () => {
  const origin = { origin: 'https://app.example.com' };
  // Bodies are sent with credentials: without them the route answers 401 before it reads the body.
  const cases: Array<{ name: string; status: number; send: () => ReturnType<typeof raw> }> = [
    {
      name: 'malformed JSON',
      status: 422,
      send: () =>
        raw('/policys', {
          method: 'POST',
          headers: { ...origin, ...acme.sandbox, 'content-type': 'application/json' },
          body: '{"a":',
        }),
    },
    {
      name: 'unsupported media type',
      status: 415,
      send: () =>
        raw('/policys', {
          method: 'POST',
          headers: { ...origin, ...acme.sandbox, 'content-type': 'application/xml' },
          body: '<a/>',
        }),
    },
    {
      name: 'body too large',
      status: 413,
      send: () =>
        raw('/policys', {
          method: 'POST',
          headers: { ...origin, ...acme.sandbox, 'content-type': 'application/json' },
          body: `{"a":"${'x'.repeat(1_100_000)}"}`,
        }),
    },
    {
      name: 'URI too long',
      status: 414,
      send: () => raw(`/policys/${'x'.repeat(20_000)}`, { headers: origin }),
    },
    {
      name: 'URI too long in its query',
      status: 414,
      send: () => raw(`/statements?policy_reference=${'x'.repeat(20_000)}`, { headers: origin }),
    },
    {
      name: 'headers beyond what Node parses',
      status: 431,
      send: () => raw(`/healthz?q=${'x'.repeat(70_000)}`, { headers: origin }),
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await c.send();
      assert.equal(r.status, c.status, r.body);
      assert.match(String(r.headers['content-type']), /application\/problem\+json/);
      assert.match(String(r.headers['x-request-id']), /./);
      assert.equal(r.headers['access-control-allow-origin'], '*');
      assert.match(String(r.headers['access-control-expose-headers']), /x-request-id/);
      const problem = JSON.parse(r.body) as Problem & { request_id: string };
      assert.equal(problem.status, c.status);
      assert.equal(problem.request_id, r.headers['x-request-id']);
    });
  }
});
