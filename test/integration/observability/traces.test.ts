import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { fixedClock } from '../../../src/platform/clock.ts';
import { TRACE_CONTEXT_KEY } from '../../../src/platform/jobs/jobs.ts';
import { startTracing, type Tracing } from '../../../src/platform/tracing.ts';
import { createCompany, createTestApp, TEST_ADMIN_KEY, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';

// One billing run's trace, as a collector receives it: spans exported over OTLP/HTTP (JSON) to a
// receiver here, from the request through the job queue to the worker, down to each statement.

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status?: { code?: number };
}

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

/** An OTLP/HTTP receiver: what a collector's `otlp` receiver accepts at `/v1/traces`, decoded from JSON. */
async function startReceiver() {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (request.url !== '/v1/traces' || request.headers['content-type'] !== 'application/json') {
        response.writeHead(404).end();
        return;
      }
      bodies.push(body);
      const decoded = JSON.parse(body) as {
        resourceSpans: Array<{
          scopeSpans: Array<{
            spans: Array<
              Omit<ReceivedSpan, 'attributes'> & {
                attributes?: Array<{ key: string; value: Record<string, string | number | boolean> }>;
              }
            >;
          }>;
        }>;
      };
      for (const resource of decoded.resourceSpans)
        for (const scope of resource.scopeSpans)
          for (const span of scope.spans) {
            const attributes: ReceivedSpan['attributes'] = {};
            for (const { key, value } of span.attributes ?? []) {
              const [kind, raw] = Object.entries(value)[0] ?? ['', ''];
              attributes[key] = kind === 'intValue' ? Number(raw) : raw;
            }
            spans.push({ ...span, attributes });
          }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    spans,
    bodies,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

// The example policy's term starts 2025-06-01 with billing day 1: 2025-07-01 bills its first month.
const clock = fixedClock('2025-07-20T12:00:00Z');
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let tracing: Tracing;
let t: TestApp;

before(async () => {
  receiver = await startReceiver();
  tracing = await startTracing({ endpoint: receiver.url, serviceName: 'milepost-test', role: 'all' });
  t = await createTestApp({ overrides: { clock }, startJobs: true, listen: true });
});
after(async () => {
  await t.close();
  await tracing.shutdown();
  await receiver.close();
});

test("a billing run's trace: request → statements, processor calls and jobs → each job's statements", async () => {
  const acme = await createCompany(t.app, 'Acme');
  const policy = await make.cardPaidPolicy(t, acme, {
    pricing: { upfront_premium: 95.5, subscription_premium: 42, subscription_installments: 12 },
  });
  await make.journey(t.app, acme, policy.reference, '2025-06-12T08:00:00Z');

  // The caller's own span: the request continues its trace (W3C traceparent).
  const traceId = randomBytes(16).toString('hex');
  const callerSpanId = randomBytes(8).toString('hex');
  const run = await t.app.inject({
    method: 'POST',
    url: '/admin/billing-runs',
    headers: { ...t.adminHeaders, traceparent: `00-${traceId}-${callerSpanId}-01` },
    payload: { date: '2025-07-01' },
  });
  assert.equal(run.statusCode, 200, run.body);
  assert.equal(run.json<{ billed: number }>().billed, 1);

  // The statement's email is sent by a job in the worker; its span ends after the handler's statements.
  const inTrace = () => receiver.spans.filter((s) => s.traceId === traceId);
  const emailJob = () => inTrace().find((s) => s.name === 'process notifications.send-email');
  for (let i = 0; i < 200 && emailJob() === undefined; i++) {
    await tracing.flush();
    await sleep(100);
  }
  await tracing.flush();
  const spans = inTrace();
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const job = emailJob();
  assert.ok(
    job !== undefined,
    `the email job's span is in the run's trace (${spans.map((s) => s.name).join(', ')})`,
  );

  // The request: a SERVER span named by its route template, child of the caller's span.
  const request = spans.find((s) => s.kind === SERVER);
  assert.ok(request !== undefined);
  assert.equal(request.name, 'POST /admin/billing-runs');
  assert.equal(request.parentSpanId, callerSpanId);
  assert.equal(request.attributes['http.route'], '/admin/billing-runs');
  assert.equal(request.attributes['http.response.status_code'], 200);
  assert.equal(spans.filter((s) => s.kind === SERVER).length, 1, 'one request in the trace');

  // Every other span hangs from the request: its parent is in the trace.
  const ancestors = (span: ReceivedSpan): ReceivedSpan[] => {
    const parent = span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId);
    return parent === undefined ? [] : [parent, ...ancestors(parent)];
  };
  for (const span of spans) {
    if (span === request) continue;
    assert.ok(ancestors(span).includes(request), `${span.name} descends from the request`);
  }

  // The request's own statements: CLIENT spans named by operation and table, children of the request.
  const statementsOf = (parent: ReceivedSpan) =>
    spans.filter((s) => s.parentSpanId === parent.spanId && s.attributes['db.system.name'] === 'postgresql');
  const requestStatements = statementsOf(request).map((s) => s.name);
  assert.ok(requestStatements.includes('SELECT policies'), requestStatements.join(', '));
  assert.ok(requestStatements.includes('INSERT statements'), requestStatements.join(', '));
  for (const s of statementsOf(request)) {
    assert.equal(s.kind, CLIENT);
    assert.equal(typeof s.attributes['db.operation.name'], 'string');
  }

  // The statement's charge: the processor's call, a child of the request.
  const charge = spans.find((s) => s.name === 'payments chargeOffSession');
  assert.ok(charge !== undefined, 'the charge is traced');
  assert.equal(charge.kind, CLIENT);
  assert.equal(charge.parentSpanId, request.spanId);
  assert.equal(charge.attributes['payment.processor'], 'sandbox');

  // The job: a CONSUMER span continuing the trace stored with it, and its handler's statements.
  assert.equal(job.kind, CONSUMER);
  assert.equal(job.attributes['messaging.destination.name'], 'notifications.send-email');
  assert.ok(ancestors(job).includes(request));
  const stored = await sql<{ data: Record<string, unknown> }>`
    select data from pgboss.job where id = ${String(job.attributes['messaging.message.id'])}`.execute(
    t.container.database.db,
  );
  const carrier = stored.rows[0]?.data[TRACE_CONTEXT_KEY] as { traceparent?: string } | undefined;
  assert.match(
    carrier?.traceparent ?? '',
    new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`),
    'stored with the job',
  );
  assert.equal((await t.container.services.notifications.emailsTo(policy.email)).length >= 2, true);
  const jobStatements = statementsOf(job).map((s) => s.name);
  assert.ok(
    jobStatements.some((name) => name.endsWith(' outbox_emails')),
    jobStatements.join(', '),
  );

  // No values: not the policy, the policyholder, the date asked for, the key, nor a statement's text.
  const exported = receiver.bodies.join('\n');
  for (const value of [
    policy.reference,
    policy.email,
    TEST_ADMIN_KEY,
    acme.client_secret_sandbox,
    '2025-07-01',
  ])
    assert.ok(!exported.includes(value), `${value} is in no span`);
  assert.doesNotMatch(exported, /"db\.query\.text"|"url\.(full|query)"/);
});
