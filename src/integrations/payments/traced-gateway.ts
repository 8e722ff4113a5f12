import { SpanKind, inSpan, tracingEnabled } from '../../platform/tracing.ts';
import type { PaymentGateway } from './gateway.ts';

/**
 * `gateway` with each call to the processor in a CLIENT span (`payments chargeOffSession`) naming the
 * processor and the operation, never an amount, a customer or a key. With tracing off, `gateway` itself.
 * Webhook verification is local (a signature check), so it is not a call and gets no span.
 */
export function tracedGateway(gateway: PaymentGateway, processor: 'stripe' | 'sandbox'): PaymentGateway {
  if (!tracingEnabled()) return gateway;
  const traced: Record<string, unknown> = { ...gateway };
  for (const [operation, call] of Object.entries(gateway) as Array<[string, unknown]>) {
    if (typeof call !== 'function' || operation === 'constructWebhookEvent') continue;
    const method = call as (...args: unknown[]) => Promise<unknown>;
    traced[operation] = (...args: unknown[]) =>
      inSpan(
        `payments ${operation}`,
        {
          kind: SpanKind.CLIENT,
          attributes: { 'payment.processor': processor, 'payment.operation': operation },
        },
        () => method.apply(gateway, args),
      );
  }
  return traced as unknown as PaymentGateway;
}
