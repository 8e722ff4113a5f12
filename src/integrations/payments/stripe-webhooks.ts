import type Stripe from 'stripe';
import { systemClock, type Clock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import type { PaymentEvent, RefundStatus } from './gateway.ts';
import { toIntent, toMandate, toSetupIntent } from './stripe-objects.ts';
import { idOf, loadStripe, toAppError } from './stripe-sdk.ts';

/**
 * Verifies a webhook delivery with the official SDK against the raw body (the exact bytes Stripe signed,
 * or their UTF-8 text) and its `Stripe-Signature` header, and reduces the event to what we act on.
 * Needs only the endpoint's signing secret: no API key, no request to Stripe. Throws
 * `AppError('UNAUTHENTICATED')` for a missing header, a signature no secret made, or one older than
 * `toleranceSeconds` (Stripe's default, 300) on `clock`.
 */
export function createWebhookVerifier(options: {
  readonly webhookSecret: string;
  readonly clock?: Clock;
  readonly toleranceSeconds?: number | undefined;
}): (rawBody: string | Uint8Array, signatureHeader: string | undefined) => PaymentEvent {
  const clock = options.clock ?? systemClock;
  const tolerance = options.toleranceSeconds ?? 300;
  return (rawBody, signatureHeader) => {
    if (signatureHeader === undefined || signatureHeader === '') {
      throw new AppError(
        'UNAUTHENTICATED',
        'webhook signature verification failed: no Stripe-Signature header',
      );
    }
    let event: Stripe.Event;
    try {
      // NOTE: the SDK takes the time of receipt in milliseconds (it divides by 1000 itself); in
      // seconds, every signature would look fresh, and a captured delivery could be replayed for ever.
      event = loadStripe().webhooks.constructEvent(
        rawBody,
        signatureHeader,
        options.webhookSecret,
        tolerance,
        undefined,
        clock.now().getTime(),
      );
    } catch (error) {
      if (error instanceof loadStripe().errors.StripeSignatureVerificationError) {
        // The SDK's first sentence says what failed; the rest is advice for its own users.
        const reason = /^[^.\n]*/.exec(error.message)?.[0] ?? error.message;
        throw new AppError('UNAUTHENTICATED', `webhook signature verification failed: ${reason}`, {
          retryable: false,
          cause: error,
        });
      }
      throw toAppError(error, 'verify webhook');
    }
    const createdAt = new Date(event.created * 1000);
    const object: unknown = event.data.object;
    const kind = (object as { object?: unknown }).object;
    if (kind === 'payment_intent') {
      return {
        kind: 'payment_intent',
        id: event.id,
        type: event.type,
        createdAt,
        paymentIntent: toIntent(object as Stripe.PaymentIntent),
      };
    }
    if (kind === 'charge') {
      const charge = object as Stripe.Charge;
      return {
        kind: 'charge',
        id: event.id,
        type: event.type,
        createdAt,
        charge: {
          id: charge.id,
          paymentIntentId: idOf(charge.payment_intent),
          amountPence: charge.amount,
          amountRefundedPence: charge.amount_refunded,
          refunded: charge.refunded,
          metadata: { ...charge.metadata },
        },
      };
    }
    if (kind === 'refund') {
      const refund = object as Stripe.Refund;
      return {
        kind: 'refund',
        id: event.id,
        type: event.type,
        createdAt,
        refund: {
          id: refund.id,
          status: (refund.status ?? 'pending') as RefundStatus,
          amountPence: refund.amount,
          paymentIntentId: idOf(refund.payment_intent),
          failureReason: refund.failure_reason ?? null,
          metadata: { ...refund.metadata },
        },
      };
    }
    if (kind === 'setup_intent') {
      const setupIntent = toSetupIntent(object as Stripe.SetupIntent);
      return { kind: 'setup_intent', id: event.id, type: event.type, createdAt, setupIntent };
    }
    if (kind === 'mandate') {
      const mandate = toMandate(object as Stripe.Mandate);
      return { kind: 'mandate', id: event.id, type: event.type, createdAt, mandate };
    }
    if (kind === 'dispute') {
      const dispute = object as Stripe.Dispute;
      return {
        kind: 'dispute',
        id: event.id,
        type: event.type,
        createdAt,
        dispute: {
          id: dispute.id,
          chargeId: idOf(dispute.charge),
          paymentIntentId: idOf(dispute.payment_intent),
          amountPence: dispute.amount,
          reason: dispute.reason,
          status: dispute.status,
        },
      };
    }
    return { kind: 'other', id: event.id, type: event.type, createdAt };
  };
}
