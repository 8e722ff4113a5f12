import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { Type } from 'typebox';
import {
  SpanKind,
  contextFrom,
  recordFailure,
  startSpan,
  tracingEnabled,
  withContext,
  type Context,
  type Span,
} from '../tracing.ts';
import { problemResponses, sendProblem } from './problem.ts';

export interface ObservabilityDeps {
  /** Resolves when the database answers; rejects otherwise. */
  readonly ping: () => Promise<void>;
  readonly jobCounts?: () => Promise<Array<{ queue: string; state: string; count: number }>>;
  readonly registry: Registry;
}

/** A registry per process (not prom-client's global one), so tests can build many apps. */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

const DURATION_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * `http_request_duration_seconds` by method, route and status, and `http_server_errors_total` (5xx) by
 * route, recorded when each response has been sent (errors and unmatched URLs included).
 */
export function installRequestMetrics(app: FastifyInstance, registry: Registry): void {
  const durations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status_code'],
    buckets: DURATION_BUCKETS_SECONDS,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'http_server_errors_total',
    help: 'Responses with a 5xx status',
    labelNames: ['route'],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    // Unmatched URLs share one label so that scanners cannot blow up the series count.
    const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
    durations.observe(
      { method: request.method, route, status_code: reply.statusCode },
      reply.elapsedTime / 1000,
    );
    if (reply.statusCode >= 500) errors.inc({ route });
  });
}

/**
 * A SERVER span per request when tracing is on, continuing the caller's W3C `traceparent`: named by
 * method and route template (`POST /admin/billing-runs`), with the status; never the URL's values, the
 * query string or a body. The span is made active before the hooks and again once the body is parsed
 * (`preValidation`: a body's stream events run outside it), so that the staff check, authentication,
 * the handler and everything they call are its children.
 */
export function installRequestTracing(app: FastifyInstance): void {
  if (!tracingEnabled()) return;
  const spans = new WeakMap<FastifyRequest, { span: Span; context: Context }>();
  const end = (request: FastifyRequest, statusCode: number | undefined, aborted: boolean) => {
    const started = spans.get(request);
    if (started === undefined) return;
    spans.delete(request);
    const { span } = started;
    const route = request.is404 ? undefined : request.routeOptions.url;
    if (route !== undefined) {
      span.updateName(`${request.method} ${route}`);
      span.setAttribute('http.route', route);
    }
    if (statusCode !== undefined) span.setAttribute('http.response.status_code', statusCode);
    if (aborted) recordFailure(span, { code: 'aborted' });
    else if (statusCode !== undefined && statusCode >= 500) recordFailure(span, { code: String(statusCode) });
    span.end();
  };
  app.addHook('onRequest', (request, _reply, done) => {
    const started = startSpan(request.method, {
      kind: SpanKind.SERVER,
      parent: contextFrom(request.headers),
      attributes: { 'http.request.method': request.method, 'url.scheme': request.protocol },
    });
    if (started === undefined) {
      done();
      return;
    }
    spans.set(request, started);
    withContext(started.context, done);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const started = spans.get(request);
    if (started === undefined) done();
    else withContext(started.context, done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode, false);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    end(request, undefined, true);
    done();
  });
}

/**
 * How long `/metrics` waits for the job counts. NOTE: they are read through the job runner's own pool,
 * which waited 10 s for a connection to a database gone silent (and longer on a connection that went
 * mute), so a scrape took past Prometheus's default 10 s timeout and every metric of the process was
 * lost for the length of the outage.
 */
const JOB_COUNTS_TIMEOUT_MS = 2_000;

/** The job counts, or none when they fail or take longer than JOB_COUNTS_TIMEOUT_MS: `jobs` is left out. */
async function withinJobCountsBound<T>(counts: Promise<T[]>): Promise<T[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T[]>((resolve) => {
    timer = setTimeout(resolve, JOB_COUNTS_TIMEOUT_MS, []);
  });
  try {
    return await Promise.race([counts.catch(() => []), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** `/healthz`, `/readyz` and `/metrics` (request metrics: `installRequestMetrics`). */
export function installObservability(app: FastifyInstance, deps: ObservabilityDeps): void {
  const { registry } = deps;
  if (deps.jobCounts !== undefined) {
    const jobCounts = deps.jobCounts;
    new Gauge({
      name: 'jobs',
      help: 'Jobs per queue and state',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const row of await withinJobCountsBound(jobCounts()))
          this.set({ queue: row.queue, state: row.state }, row.count);
      },
    });
  }

  const hidden = { hide: true } as const;
  app.get(
    '/healthz',
    {
      logLevel: 'warn',
      schema: {
        operationId: 'platform.health',
        tags: ['operations'],
        summary: 'Liveness: the process is up',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      logLevel: 'warn',
      schema: {
        operationId: 'platform.ready',
        tags: ['operations'],
        summary: 'Readiness: the database answers',
        response: {
          200: Type.Object({ status: Type.Literal('ready'), database: Type.Literal('ok') }),
          ...problemResponses(503),
        },
      },
    },
    async (request, reply) => {
      try {
        await deps.ping();
        return { status: 'ready' as const, database: 'ok' as const };
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        return sendProblem(reply, 'SERVICE_UNAVAILABLE', 'The database does not answer', undefined, 5);
      }
    },
  );
  app.get('/metrics', { logLevel: 'warn', schema: { ...hidden } }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}
