import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { compileValidators } from '../../../src/app.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp({ env: { BODY_LIMIT_BYTES: '2048' } });
});
after(() => t.close());

const PROBLEM_FIELDS = ['type', 'title', 'status', 'detail', 'code', 'message', 'status_code'];

function assertProblem(
  response: { statusCode: number; headers: Record<string, unknown>; json: () => unknown },
  status: number,
  code?: string,
) {
  assert.equal(response.statusCode, status);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const body = response.json() as Record<string, unknown>;
  for (const field of PROBLEM_FIELDS) assert.ok(field in body, `problem has ${field}`);
  assert.equal(body['status'], status);
  assert.equal(body['status_code'], status);
  assert.equal(body['message'], body['detail']);
  if (code !== undefined) assert.equal(body['code'], code);
  return body;
}

describe('problem+json for bad input, never a 5xx', () => {
  const admin = () => t.adminHeaders;

  test('malformed JSON → 422', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/admin/companies',
      headers: { ...admin(), 'content-type': 'application/json' },
      payload: '{"name":',
    });
    assertProblem(r, 422, 'MALFORMED_BODY');
  });

  test('empty JSON body where a body is required → 422', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/admin/companies',
      headers: { ...admin(), 'content-type': 'application/json' },
      payload: '',
    });
    assertProblem(r, 422);
  });

  test('validation lists every failing path', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/admin/companies',
      headers: admin(),
      payload: { name: 42, colour: 'red' },
    });
    const body = assertProblem(r, 422, 'VALIDATION_FAILED');
    const paths = (body['errors'] as Array<{ path: string }>).map((e) => e.path).sort();
    assert.deepEqual(paths, ['/body/colour', '/body/name']);
  });

  test('a string is never coerced to a number in a body', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/admin/companies?limit=2', headers: admin() });
    assert.equal(r.statusCode, 200, 'query strings are coerced');
    const bad = await t.app.inject({ method: 'GET', url: '/admin/companies?limit=two', headers: admin() });
    assertProblem(bad, 422);
  });

  test('wrong content type → 415', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/admin/companies',
      headers: { ...admin(), 'content-type': 'application/xml' },
      payload: '<name>x</name>',
    });
    assertProblem(r, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  test('text/plain body → 422, not a crash', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/admin/companies',
      headers: { ...admin(), 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    assertProblem(r, 422);
  });

  test('oversized body → 413', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/admin/companies',
      headers: admin(),
      payload: { name: 'x'.repeat(5000) },
    });
    assertProblem(r, 413, 'PAYLOAD_TOO_LARGE');
  });

  test('bad environment header → 422 naming the header', async () => {
    const r = await t.app.inject({
      method: 'GET',
      url: '/companies/current',
      headers: { client_id: 'x', client_secret: 'y', environment: 'staging' },
    });
    const body = assertProblem(r, 422);
    assert.deepEqual((body['errors'] as Array<{ path: string }>)[0]?.path, '/headers/environment');
  });

  test('unknown route → 404 problem', async () => {
    assertProblem(await t.app.inject({ method: 'GET', url: '/nope' }), 404, 'ROUTE_NOT_FOUND');
  });

  test('wrong admin key → 401', async () => {
    assertProblem(
      await t.app.inject({
        method: 'GET',
        url: '/admin/companies',
        headers: { authorization: 'Bearer wrong' },
      }),
      401,
    );
    assertProblem(await t.app.inject({ method: 'GET', url: '/admin/companies' }), 401);
  });
});

describe('CORS', () => {
  test('a preflight succeeds without credentials and echoes the requested headers', async () => {
    const r = await t.app.inject({
      method: 'OPTIONS',
      url: '/policys/details',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization,client_id,client_secret,environment,x-custom',
      },
    });
    assert.equal(r.statusCode, 204);
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.match(String(r.headers['access-control-allow-headers']), /authorization/);
    assert.match(String(r.headers['access-control-allow-headers']), /x-custom/);
  });

  test('a preflight for any path, without credentials, echoes the requested headers', async () => {
    const r = await t.app.inject({
      method: 'OPTIONS',
      url: '/no/such/path',
      headers: {
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, client_id, content-type',
      },
    });
    assert.equal(r.statusCode, 204);
    assert.equal(r.headers['content-length'], '0');
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.match(String(r.headers['access-control-allow-methods']), /POST/);
    assert.equal(r.headers['access-control-max-age'], '600');
    assert.equal(r.headers['access-control-allow-headers'], 'authorization, client_id, content-type');
  });

  test('every response lets a page read the request id', async () => {
    const r = await t.app.inject({ url: '/healthz', headers: { origin: 'https://app.example.com' } });
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.match(String(r.headers['access-control-expose-headers']), /x-request-id/);
    const error = await t.app.inject({
      url: '/companies/current',
      headers: { origin: 'https://app.example.com' },
    });
    assert.equal(error.statusCode, 401);
    assert.match(String(error.headers['access-control-expose-headers']), /x-request-id/);
    const device = await t.app.inject({ url: '/healthz' });
    assert.equal(device.headers['access-control-allow-origin'], '*');
    assert.match(String(device.headers['x-request-id']), /./);
  });

  test('errors carry Access-Control-Allow-Origin too', async () => {
    const r = await t.app.inject({
      method: 'GET',
      url: '/companies/current',
      headers: { origin: 'https://app.example.com' },
    });
    assert.equal(r.statusCode, 401);
    assert.equal(r.headers['access-control-allow-origin'], '*');
  });
});

describe('operations', () => {
  test('healthz, readyz, metrics', async () => {
    assert.deepEqual((await t.app.inject('/healthz')).json(), { status: 'ok' });
    assert.deepEqual((await t.app.inject('/readyz')).json(), { status: 'ready', database: 'ok' });
    const metrics = await t.app.inject('/metrics');
    assert.match(metrics.body, /http_request_duration_seconds_bucket\{[^}]*route="\/healthz"/);
    assert.match(metrics.body, /^# TYPE jobs gauge/m);
  });

  test('the request duration histogram counts every response, by method, route and status', async () => {
    const series = async () => {
      const body = (await t.app.inject('/metrics')).body;
      const labels = 'method="GET",route="/companies/current",status_code="401"';
      const value = (name: string, extra = '') =>
        Number(new RegExp(`^${name}\\{${labels}${extra}\\} (\\S+)$`, 'm').exec(body)?.[1] ?? 0);
      const buckets = [
        ...body.matchAll(
          new RegExp(`^http_request_duration_seconds_bucket\\{le="([^"]+)",${labels}\\} (\\d+)$`, 'gm'),
        ),
      ];
      return {
        count: value('http_request_duration_seconds_count'),
        sum: value('http_request_duration_seconds_sum'),
        buckets: buckets.map((m) => [m[1], Number(m[2])] as const),
      };
    };
    const before = await series();
    for (let i = 0; i < 3; i++) await t.app.inject('/companies/current');
    const after = await series();
    assert.equal(after.count - before.count, 3);
    assert.ok(after.sum > before.sum);
    assert.equal(after.buckets.length, 13, 'twelve bounds and +Inf');
    assert.deepEqual(after.buckets.at(-1), ['+Inf', after.count]);
    for (let i = 1; i < after.buckets.length; i++)
      assert.ok(after.buckets[i]![1] >= after.buckets[i - 1]![1], 'buckets are cumulative');
  });

  test('request ids: generated, or taken from a sane x-request-id', async () => {
    const r = await t.app.inject({ url: '/healthz', headers: { 'x-request-id': 'abc-123' } });
    assert.equal(r.headers['x-request-id'], 'abc-123');
    const generated = await t.app.inject({
      url: '/healthz',
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    assert.match(String(generated.headers['x-request-id']), /^[0-9a-f]{12}-[0-9a-z]+$/);
    const another = await t.app.inject({ url: '/healthz' });
    assert.notEqual(another.headers['x-request-id'], generated.headers['x-request-id'], 'unique per request');
  });

  test('OpenAPI 3.1 document and the docs page', async () => {
    const doc = (await t.app.inject('/openapi.json')).json<{
      openapi: string;
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    }>();
    assert.equal(doc.openapi, '3.1.0');
    assert.ok('/admin/companies' in doc.paths);
    assert.ok('Problem' in doc.components.schemas);
    const docs = await t.app.inject('/docs/');
    assert.equal(docs.statusCode, 200);
    assert.match(String(docs.headers['content-type']), /text\/html/);
    assert.match(docs.body, /<html/i);
    assert.match(docs.body, /\/openapi\.json/);
    // The page's script, relative to it, comes from the same (lazily loaded) plugin.
    const script = await t.app.inject('/docs/js/scalar.js');
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /javascript/);
    assert.ok(script.body.length > 100_000);
    const missing = await t.app.inject('/docs/nothing-here');
    assert.equal(missing.statusCode, 404);
    assert.match(String(missing.headers['content-type']), /application\/problem\+json/);
    assert.deepEqual(doc.paths['/docs'], undefined, 'the docs routes stay out of the API document');
  });

  test('every route part’s validator compiles (the service compiles each when first used)', async () => {
    const before = await t.app.inject({
      method: 'POST',
      url: '/admin/companies',
      headers: t.adminHeaders,
      payload: { name: 7 },
    });
    assertProblem(before, 422);
    // Hundreds of routes, each with a body, query, params or headers schema; the one used above is done.
    const compiled = compileValidators(t.app);
    assert.ok(compiled > 200, `${String(compiled)} validators`);
    assert.equal(compileValidators(t.app), 0, 'each is compiled once');
    const after = await t.app.inject({
      method: 'POST',
      url: '/admin/companies',
      headers: t.adminHeaders,
      payload: { name: 7 },
    });
    const { request_id: _first, ...problem } = before.json<Record<string, unknown>>();
    const { request_id: _second, ...again } = after.json<Record<string, unknown>>();
    assert.deepEqual(again, problem);
  });
});
