/**
 * Tracing through the OpenTelemetry API: spans at the service's few boundaries (requests, jobs,
 * statements, processor calls, webhook deliveries), exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT
 * is set. Off (the default), the SDK is never loaded and every helper here runs its work directly: one
 * boolean test, no span object, no context switch.
 *
 * Spans never carry request bodies, query strings, statement parameters, amounts or error messages
 * (any of which may hold personal data): only names, route templates, statuses, queue names, tables.
 */
import {
  context,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

export { SpanKind, type Attributes, type Context, type Span };

const TRACER_NAME = 'milepost';
let enabled = false;

/** True once `startTracing` has registered an exporter in this process. */
export function tracingEnabled(): boolean {
  return enabled;
}

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's OTLP/HTTP base URL; undefined leaves tracing off. */
  readonly endpoint: string | undefined;
  /** OTEL_SERVICE_NAME, the `service.name` of every span. */
  readonly serviceName: string;
  /** `api`, `worker` or `all`: told apart in the collector by `service.instance.id`'s role prefix. */
  readonly role: string;
}

export interface Tracing {
  /** Ends every span still open and sends what is buffered (bounded by the exporter's timeout). */
  shutdown(): Promise<void>;
  /** Sends every ended span now (tests; a shutdown does it anyway). */
  flush(): Promise<void>;
}

/** True when tracing is on and a span is active: a child span made now would belong to a trace. */
export function inTrace(): boolean {
  return enabled && trace.getSpan(context.active()) !== undefined;
}

const off: Tracing = { shutdown: () => Promise.resolve(), flush: () => Promise.resolve() };

/**
 * Registers the SDK with an OTLP/HTTP exporter when `settings.endpoint` is set; otherwise nothing is
 * loaded (the SDK module is imported only here) and every span helper stays a direct call.
 */
export async function startTracing(settings: TracingSettings): Promise<Tracing> {
  if (settings.endpoint === undefined) return off;
  const { startTraceExport } = await import('./tracing-export.ts');
  const exporter = startTraceExport({ ...settings, endpoint: settings.endpoint });
  enabled = true;
  return {
    flush: exporter.flush,
    async shutdown() {
      enabled = false;
      await exporter.shutdown();
    },
  };
}

const tracer = () => trace.getTracer(TRACER_NAME);

/** What a failed span records: the error's code or class, never its message (it may quote input). */
function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && /^[\w.-]{1,64}$/.test(code)) return code;
    if (error instanceof Error) return error.name;
  }
  return 'unknown';
}

/** Marks `span` failed with `error`'s type (`error.type`), as the semantic conventions ask. */
export function recordFailure(span: Span, error: unknown): void {
  const type = errorType(error);
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

async function runInSpan<T>(
  started: { span: Span; context: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const { span } = started;
  try {
    return await context.with(started.context, () => work(span));
  } catch (error) {
    recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}

export interface SpanOptions {
  readonly kind?: SpanKind;
  readonly attributes?: Attributes;
  /** The trace to continue (a job's stored context, a request's headers); undefined: the active one. */
  readonly parent?: Context | undefined;
}

/** Runs `work` in a new span (a child of the active one, or a root); directly when tracing is off. */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const started = startSpan(name, options);
  return started === undefined ? work(undefined) : runInSpan(started, work);
}

/**
 * Like `inSpan`, but only inside a trace: a statement or call made outside any request or job (a poll,
 * a cron check) gets no root span of its own, which would bury the traces worth reading.
 */
export function inChildSpan<T>(
  name: string,
  options: Omit<SpanOptions, 'parent'>,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  return inTrace() ? inSpan(name, options, work) : work(undefined);
}

/** Starts a span that the caller ends (an HTTP request spans several hooks); undefined when off. */
export function startSpan(name: string, options: SpanOptions): { span: Span; context: Context } | undefined {
  if (!enabled) return undefined;
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes ? { attributes: options.attributes } : {}),
    },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `work` with `ctx` active (its callbacks and promises inherit it). */
export function withContext<T>(ctx: Context, work: () => T): T {
  return context.with(ctx, work);
}

/** The W3C trace context (`traceparent`, `tracestate`) of the active span, to store with a job; undefined when off. */
export function currentTraceCarrier(): Record<string, string> | undefined {
  if (!inTrace()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent === undefined ? undefined : carrier;
}

/** The context a stored or received W3C trace context names (headers, a job's carrier); undefined when off. */
export function contextFrom(carrier: Readonly<Record<string, unknown>> | undefined): Context | undefined {
  if (!enabled) return undefined;
  if (carrier === undefined) return context.active();
  return propagation.extract(context.active(), carrier, {
    keys: (c) => Object.keys(c),
    get: (c, key) => {
      const value = c[key];
      return typeof value === 'string' ? value : undefined;
    },
  });
}
