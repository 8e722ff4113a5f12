import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createLogger } from '../../../src/platform/logging.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';

// Over a real socket: a response's duration and its "request completed" line come from Node's
// `http.server.response.finish` diagnostics channel (observability.ts), which injected requests never
// reach, so the other platform tests, which inject, do not cover it.
const lines: Array<Record<string, unknown>> = [];
let t: TestApp;
let base: string;
before(async () => {
  t = await createTestApp({
    listen: true,
    env: { LOG_LEVEL: 'info' },
    overrides: {
      logger: createLogger('info', {
        write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
      }),
    },
  });
  const address = t.app.server.address();
  assert.ok(address !== null && typeof address === 'object');
  base = `http://127.0.0.1:${String(address.port)}`;
});
after(() => t.close());

const count = (metrics: string, route: string, status: number) =>
  Number(
    new RegExp(
      `^http_request_duration_seconds_count\\{method="GET",route="${route}",status_code="${String(status)}"\\} (\\d+)$`,
      'm',
    ).exec(metrics)?.[1] ?? 0,
  );

test('responses sent over a socket are timed, counted by route and status, and logged with their request id', async () => {
  const metricsBefore = await (await fetch(`${base}/metrics`)).text();
  const unauthorised = [await fetch(`${base}/companies/current`), await fetch(`${base}/companies/current`)];
  const unknown = await fetch(`${base}/no/such/path`);
  const health = await fetch(`${base}/healthz`);
  for (const r of [...unauthorised, unknown, health]) await r.arrayBuffer();
  assert.deepEqual(
    [...unauthorised, unknown, health].map((r) => r.status),
    [401, 401, 404, 200],
  );

  const metrics = await (await fetch(`${base}/metrics`)).text();
  assert.equal(
    count(metrics, '/companies/current', 401) - count(metricsBefore, '/companies/current', 401),
    2,
  );
  assert.equal(count(metrics, 'unmatched', 404) - count(metricsBefore, 'unmatched', 404), 1);
  assert.ok(count(metrics, '/healthz', 200) >= 1);

  const requestId = unauthorised[0]!.headers.get('x-request-id');
  assert.ok(requestId !== null);
  const ofRequest = lines.filter((l) => l['reqId'] === requestId);
  assert.deepEqual(
    ofRequest.map((l) => l['msg']),
    ['incoming request', 'request completed'],
  );
  const [incoming, completed] = ofRequest;
  assert.deepEqual(
    {
      method: (incoming!['req'] as Record<string, unknown>)['method'],
      url: (incoming!['req'] as Record<string, unknown>)['url'],
    },
    { method: 'GET', url: '/companies/current' },
  );
  assert.equal((incoming!['req'] as Record<string, unknown>)['remoteAddress'], '127.0.0.1');
  assert.deepEqual(completed!['res'], { statusCode: 401 });
  assert.equal(typeof completed!['responseTime'], 'number');

  // /healthz logs at warn: neither of its lines is written at info.
  const healthId = health.headers.get('x-request-id');
  assert.deepEqual(
    lines.filter((l) => l['reqId'] === healthId),
    [],
  );
});
