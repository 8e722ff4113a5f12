import { attemptOutcome, type AttemptFailure } from './attempt-outcome.ts';
import type { EngineContext, RequestInfo } from './engine-context.ts';
import { StripeApiError } from './errors.ts';
import {
  behaviourOfLast4,
  docUrl,
  newId,
  type ChargeObject,
  type LastPaymentError,
  type PaymentIntentObject,
  type PaymentMethodObject,
} from './objects.ts';

/** One payment attempt on a confirmable intent; stores the outcome before answering (402 for card errors). */
export async function attemptPayment(
  ctx: EngineContext,
  intent: PaymentIntentObject,
  pm: PaymentMethodObject,
  offSession: boolean,
  request: RequestInfo,
): Promise<PaymentIntentObject> {
  const outcome = attemptOutcome(
    { status: intent.status, paymentMethodId: intent.payment_method },
    pm.id,
    behaviourOfLast4(pm.card.last4),
    offSession,
  );
  const created = ctx.now();
  if (outcome.kind === 'succeed') return succeed(ctx, intent, pm, created, request);
  if (outcome.kind === 'require_action') return awaitAuthentication(ctx, intent, pm);
  const failedCharge = outcome.charged ? chargeOf(intent, pm, created, outcome.failure) : undefined;
  return fail(ctx, { intent, pm, failure: outcome.failure, failedCharge }, request);
}

async function succeed(
  ctx: EngineContext,
  intent: PaymentIntentObject,
  pm: PaymentMethodObject,
  created: number,
  request: RequestInfo,
): Promise<PaymentIntentObject> {
  const paid = chargeOf(intent, pm, created);
  await ctx.store.put(paid);
  const succeeded: PaymentIntentObject = {
    ...intent,
    status: 'succeeded',
    amount_received: intent.amount,
    latest_charge: paid.id,
    payment_method: pm.id,
    last_payment_error: null,
    next_action: null,
  };
  await ctx.store.put(succeeded);
  await ctx.emit('payment_intent.succeeded', succeeded, request);
  return succeeded;
}

async function awaitAuthentication(
  ctx: EngineContext,
  intent: PaymentIntentObject,
  pm: PaymentMethodObject,
): Promise<PaymentIntentObject> {
  const waiting: PaymentIntentObject = {
    ...intent,
    status: 'requires_action',
    payment_method: pm.id,
    last_payment_error: null,
    next_action: {
      type: 'use_stripe_sdk',
      use_stripe_sdk: {
        type: 'three_d_secure_redirect',
        stripe_js: `https://hooks.stripe.com/3d_secure_2/hosted?intent=${intent.id}`,
        source: newId('src'),
      },
    },
  };
  await ctx.store.put(waiting);
  return waiting;
}

/** Back to `requires_payment_method`, with the failed charge if the issuer saw one; always throws the 402. */
async function fail(
  ctx: EngineContext,
  attempt: {
    readonly intent: PaymentIntentObject;
    readonly pm: PaymentMethodObject;
    readonly failure: AttemptFailure;
    readonly failedCharge: ChargeObject | undefined;
  },
  request: RequestInfo,
): Promise<never> {
  const { intent, pm, failure, failedCharge } = attempt;
  if (failedCharge !== undefined) await ctx.store.put(failedCharge);
  const lastError: LastPaymentError = {
    type: 'card_error',
    code: failure.code,
    decline_code: failure.declineCode,
    doc_url: docUrl(failure.code),
    message: failure.message,
    ...(failedCharge === undefined ? {} : { charge: failedCharge.id }),
    payment_method: pm,
  };
  const failed: PaymentIntentObject = {
    ...intent,
    status: 'requires_payment_method',
    payment_method: null,
    latest_charge: failedCharge?.id ?? intent.latest_charge,
    last_payment_error: lastError,
    next_action: null,
  };
  await ctx.store.put(failed);
  await ctx.emit('payment_intent.payment_failed', failed, request);
  throw new StripeApiError(402, {
    type: 'card_error',
    code: lastError.code,
    decline_code: lastError.decline_code,
    doc_url: lastError.doc_url,
    message: lastError.message,
    ...(failedCharge === undefined ? {} : { charge: failedCharge.id }),
    payment_intent: failed,
    payment_method: pm,
  });
}

/** The charge of an attempt: succeeded, or failed with the issuer's `failure`. */
function chargeOf(
  intent: PaymentIntentObject,
  pm: PaymentMethodObject,
  created: number,
  failure?: AttemptFailure,
): ChargeObject {
  const status = failure === undefined ? 'succeeded' : 'failed';
  return {
    id: newId('ch'),
    object: 'charge',
    amount: intent.amount,
    amount_captured: status === 'succeeded' ? intent.amount : 0,
    amount_refunded: 0,
    balance_transaction: status === 'succeeded' ? newId('txn') : null,
    billing_details: pm.billing_details,
    captured: status === 'succeeded',
    created,
    currency: intent.currency,
    customer: intent.customer,
    description: intent.description,
    disputed: false,
    failure_code: failure?.code ?? null,
    failure_message: failure?.message ?? null,
    livemode: false,
    metadata: intent.metadata,
    outcome:
      status === 'succeeded'
        ? {
            network_status: 'approved_by_network',
            reason: null,
            risk_level: 'normal',
            seller_message: 'Payment complete.',
            type: 'authorized',
          }
        : {
            network_status: 'declined_by_network',
            reason: failure?.code ?? null,
            risk_level: 'normal',
            seller_message: 'The bank did not return any further details with this decline.',
            type: 'issuer_declined',
          },
    paid: status === 'succeeded',
    payment_intent: intent.id,
    payment_method: pm.id,
    payment_method_details: {
      card: {
        brand: pm.card.brand,
        country: pm.card.country,
        exp_month: pm.card.exp_month,
        exp_year: pm.card.exp_year,
        funding: pm.card.funding,
        last4: pm.card.last4,
        network: pm.card.brand,
        three_d_secure: null,
      },
      type: 'card',
    },
    receipt_url: null,
    refunded: false,
    status,
  };
}
