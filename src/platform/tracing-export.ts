/**
 * The OpenTelemetry SDK: a tracer provider exporting over OTLP/HTTP (JSON) in batches. Imported only by
 * `startTracing` when OTEL_EXPORTER_OTLP_ENDPOINT is set, so a process with tracing off never loads it.
 */
import { randomUUID } from 'node:crypto';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/**
 * The traces URL of an OTLP/HTTP base endpoint: the specification appends `v1/traces` to the base
 * (`http://collector:4318` → `http://collector:4318/v1/traces`), keeping any path it has.
 */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * Registers the global tracer provider (every span sampled, or as the caller's `traceparent` says), the
 * W3C trace-context propagator and an AsyncLocalStorage context, which carries the active span through
 * awaits and callbacks.
 */
export function startTraceExport(settings: { endpoint: string; serviceName: string; role: string }) {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.serviceName,
      // One process among many of a deployment; the role prefix tells API processes from workers.
      'service.instance.id': `${settings.role}-${randomUUID()}`,
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: tracesUrl(settings.endpoint) }),
        // NOTE: a busy API process ends thousands of spans a second (a request and its statements): sent
        // every second in batches of a thousand, with room for eight seconds of a slow collector. Past
        // that, spans are dropped rather than held: tracing never grows the process without bound.
        scheduledDelayMillis: 1000,
        maxExportBatchSize: 1024,
        maxQueueSize: 8192,
      }),
    ],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
