import type Stripe from 'stripe';
import { systemClock, type Clock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import {
  IDEMPOTENCY_METADATA_KEY,
  type ChargeOffSessionInput,
  type ChargeResult,
  type PaymentGateway,
  type PaymentIntentStatus,
  type RefundStatus,
} from './gateway.ts';
import { directDebitCalls } from './stripe-direct-debit.ts';
import { toCustomer, toIntent, toPaymentMethod } from './stripe-objects.ts';
import { call, idOf, isAmbiguous, loadStripe, toAppError, type Client } from './stripe-sdk.ts';
import { createWebhookVerifier } from './stripe-webhooks.ts';

export { createWebhookVerifier } from './stripe-webhooks.ts';
export { toAppError };

export interface StripeGatewayOptions {
  /** `sk_live_…` in production; any `sk_test_…` for the sandbox. */
  readonly secretKey: string;
  /**
   * Where the SDK sends requests; undefined is api.stripe.com. A path is kept as a prefix, e.g.
   * `http://127.0.0.1:3000/sandbox/stripe` sends `POST /sandbox/stripe/v1/payment_intents`.
   */
  readonly apiBase?: string | undefined;
  /** The endpoint's `whsec_…` signing secret. */
  readonly webhookSecret: string;
  /** Per request, in milliseconds. */
  readonly timeoutMs: number;
  /** The SDK's own retries of network errors, 409 and 5xx, under the same idempotency key. */
  readonly maxNetworkRetries: number;
  /** Now, for the webhook timestamp tolerance; defaults to the system clock. */
  readonly clock?: Clock;
  /** Seconds between a webhook's signature time and now that are still accepted (Stripe's default: 300). */
  readonly webhookToleranceSeconds?: number;
}

/** Stripe's search syntax quotes values with single quotes; a quote or backslash inside is escaped. */
const searchQuote = (value: string): string => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/** `fetch` that sends every request under `prefix` (the SDK always asks for `/v1/…`). */
function prefixedFetch(prefix: string): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    url.pathname = `${prefix}${url.pathname}`;
    return fetch(input instanceof Request ? new Request(url, input) : url, init);
  };
}

function clientOptions(options: StripeGatewayOptions): Stripe.StripeConfig {
  const base: Stripe.StripeConfig = {
    timeout: options.timeoutMs,
    maxNetworkRetries: options.maxNetworkRetries,
    telemetry: false,
  };
  if (options.apiBase === undefined) return base;
  const url = new URL(options.apiBase);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  const prefix = url.pathname.replace(/\/+$/, '');
  return {
    ...base,
    host: url.hostname,
    port: url.port === '' ? (protocol === 'http' ? 80 : 443) : Number(url.port),
    protocol,
    ...(prefix === '' ? {} : { httpClient: loadStripe().createFetchHttpClient(prefixedFetch(prefix)) }),
  };
}

/** The payment gateway over the official Stripe SDK, against Stripe or the built-in sandbox. */
export function createStripeGateway(options: StripeGatewayOptions): PaymentGateway {
  let client: Stripe | undefined;
  const sdk: Client = () => {
    if (client === undefined) {
      const Sdk = loadStripe();
      client = new Sdk(options.secretKey, clientOptions(options));
    }
    return client;
  };
  return {
    ...customerCalls(sdk),
    ...paymentIntentCalls(sdk),
    ...paymentMethodCalls(sdk),
    ...refundCalls(sdk),
    ...directDebitCalls(sdk),
    constructWebhookEvent: createWebhookVerifier({
      webhookSecret: options.webhookSecret,
      clock: options.clock ?? systemClock,
      toleranceSeconds: options.webhookToleranceSeconds,
    }),
  };
}

function customerCalls(
  sdk: Client,
): Pick<PaymentGateway, 'createCustomer' | 'retrieveCustomer' | 'setDefaultPaymentMethod'> {
  return {
    createCustomer: (input) =>
      call('create customer', async () =>
        toCustomer(
          await sdk().customers.create(
            {
              email: input.email,
              name: input.name,
              ...(input.metadata === undefined ? {} : { metadata: { ...input.metadata } }),
            },
            { idempotencyKey: input.idempotencyKey },
          ),
        ),
      ),

    retrieveCustomer: (customerId) =>
      call('retrieve customer', async () => toCustomer(await sdk().customers.retrieve(customerId))),

    setDefaultPaymentMethod: (customerId, paymentMethodId) =>
      call('set default payment method', async () => {
        // NOTE: no key of ours: setting a value is idempotent, and a derived key would replay an
        // earlier answer if the customer switched cards and back within 24 hours.
        await sdk().customers.update(customerId, {
          invoice_settings: { default_payment_method: paymentMethodId },
        });
      }),
  };
}

function paymentIntentCalls(
  sdk: Client,
): Pick<
  PaymentGateway,
  | 'createPaymentIntent'
  | 'retrievePaymentIntent'
  | 'confirmPaymentIntent'
  | 'cancelPaymentIntent'
  | 'findPaymentIntentByKey'
  | 'chargeOffSession'
> {
  return {
    createPaymentIntent: (input) =>
      call('create payment intent', async () => {
        const pi = await sdk().paymentIntents.create(
          {
            amount: input.amountPence,
            currency: input.currency.toLowerCase(),
            customer: input.customerId,
            // NOTE: the card the customer confirms with is saved for the off-session charges of later statements.
            setup_future_usage: 'off_session',
            allowed_payment_method_types: ['card'],
            metadata: { ...input.metadata },
          },
          { idempotencyKey: input.idempotencyKey },
        );
        if (pi.client_secret === null)
          throw new AppError(
            'UPSTREAM_UNAVAILABLE',
            `payment intent ${pi.id} came back without a client secret`,
          );
        return {
          id: pi.id,
          clientSecret: pi.client_secret,
          status: pi.status as PaymentIntentStatus,
          amountPence: pi.amount,
          customerId: input.customerId,
        };
      }),

    retrievePaymentIntent: (paymentIntentId) =>
      call('retrieve payment intent', async () =>
        toIntent(await sdk().paymentIntents.retrieve(paymentIntentId)),
      ),

    confirmPaymentIntent: (input) =>
      call('confirm payment intent', async () =>
        toIntent(
          await sdk().paymentIntents.confirm(
            input.paymentIntentId,
            { payment_method: input.paymentMethodId },
            { idempotencyKey: input.idempotencyKey },
          ),
        ),
      ),

    cancelPaymentIntent: (input) =>
      call('cancel payment intent', async () =>
        toIntent(
          await sdk().paymentIntents.cancel(
            input.paymentIntentId,
            { cancellation_reason: 'abandoned' },
            { idempotencyKey: input.idempotencyKey },
          ),
        ),
      ),

    findPaymentIntentByKey: (idempotencyKey) =>
      call('search payment intents', async () => {
        const result = await sdk().paymentIntents.search({
          query: `metadata[${searchQuote(IDEMPOTENCY_METADATA_KEY)}]:${searchQuote(idempotencyKey)}`,
          limit: 10,
        });
        const [first] = result.data;
        return first === undefined ? undefined : toIntent(first);
      }),

    chargeOffSession: (input) => chargeOffSession(sdk, input),
  };
}

/** See `PaymentGateway.chargeOffSession`: card outcomes and ambiguous failures are values. */
async function chargeOffSession(sdk: Client, input: ChargeOffSessionInput): Promise<ChargeResult> {
  let pi: Stripe.PaymentIntent;
  try {
    pi = await sdk().paymentIntents.create(
      {
        amount: input.amountPence,
        currency: input.currency.toLowerCase(),
        customer: input.customerId,
        payment_method: input.paymentMethodId,
        allowed_payment_method_types: ['card'],
        confirm: true,
        off_session: true,
        // NOTE: the key in metadata lets `findPaymentIntentByKey` find this intent after an ambiguous failure.
        metadata: { ...input.metadata, [IDEMPOTENCY_METADATA_KEY]: input.idempotencyKey },
      },
      { idempotencyKey: input.idempotencyKey },
    );
  } catch (error) {
    if (error instanceof loadStripe().errors.StripeCardError) return cardErrorResult(error, input);
    if (error instanceof loadStripe().errors.StripeError && isAmbiguous(error)) {
      return {
        outcome: 'unknown',
        message: `payment processor: charge outcome unknown: ${error.message}`,
      };
    }
    throw toAppError(error, 'charge off session');
  }
  return chargeResultOf(pi);
}

/** A card error (402): the issuer declined, or wants the customer to authenticate. */
function cardErrorResult(error: Stripe.errors.StripeCardError, input: ChargeOffSessionInput): ChargeResult {
  const intent = error.payment_intent;
  if (error.code === 'authentication_required' && intent !== undefined) {
    return {
      outcome: 'authentication_required',
      intentId: intent.id,
      clientSecret: intent.client_secret,
      paymentMethodId: idOf(intent.last_payment_error?.payment_method) ?? input.paymentMethodId,
      message: error.message,
    };
  }
  // NOTE: typed as always present, but Stripe leaves it out for card errors that are not issuer declines.
  const raw = error.raw as { decline_code?: unknown } | undefined;
  const declineCode = typeof raw?.decline_code === 'string' ? raw.decline_code : undefined;
  return {
    outcome: 'declined',
    ...(intent === undefined ? {} : { intentId: intent.id }),
    code: error.code ?? 'card_declined',
    declineCode: declineCode ?? error.code ?? 'generic_decline',
    message: error.message,
  };
}

/** The outcome of an off-session intent that was created and confirmed without a card error. */
function chargeResultOf(pi: Stripe.PaymentIntent): ChargeResult {
  switch (pi.status) {
    case 'succeeded':
      return { outcome: 'succeeded', intentId: pi.id, chargeId: idOf(pi.latest_charge) };
    case 'requires_action':
      return {
        outcome: 'authentication_required',
        intentId: pi.id,
        clientSecret: pi.client_secret,
        paymentMethodId: idOf(pi.payment_method),
        message: 'The card issuer requires the customer to authenticate this payment.',
      };
    case 'requires_payment_method':
      return {
        outcome: 'declined',
        intentId: pi.id,
        code: pi.last_payment_error?.code ?? 'card_declined',
        declineCode: pi.last_payment_error?.decline_code ?? 'generic_decline',
        message: pi.last_payment_error?.message ?? 'The payment was declined.',
      };
    default:
      // processing, requires_capture, …: not final for a card charge we capture automatically.
      return { outcome: 'unknown', intentId: pi.id, message: `payment intent ${pi.id} is ${pi.status}` };
  }
}

function paymentMethodCalls(
  sdk: Client,
): Pick<PaymentGateway, 'attachPaymentMethod' | 'retrievePaymentMethod'> {
  return {
    attachPaymentMethod: (input) =>
      call('attach payment method', async () =>
        toPaymentMethod(
          await sdk().paymentMethods.attach(
            input.paymentMethodId,
            { customer: input.customerId },
            { idempotencyKey: input.idempotencyKey },
          ),
        ),
      ),

    retrievePaymentMethod: (paymentMethodId) =>
      call('retrieve payment method', async () =>
        toPaymentMethod(await sdk().paymentMethods.retrieve(paymentMethodId)),
      ),
  };
}

function refundCalls(sdk: Client): Pick<PaymentGateway, 'refund'> {
  return {
    refund: (input) =>
      call('refund', async () => {
        const refund = await sdk().refunds.create(
          {
            payment_intent: input.paymentIntentId,
            ...(input.amountPence === undefined ? {} : { amount: input.amountPence }),
            ...(input.metadata === undefined ? {} : { metadata: { ...input.metadata } }),
          },
          { idempotencyKey: input.idempotencyKey },
        );
        return {
          id: refund.id,
          status: (refund.status ?? 'pending') as RefundStatus,
          amountPence: refund.amount,
        };
      }),
  };
}
