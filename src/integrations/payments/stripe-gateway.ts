import { createRequire } from 'node:module';
import type Stripe from 'stripe';
import { systemClock, type Clock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import {
  IDEMPOTENCY_METADATA_KEY,
  type ChargeOffSessionInput,
  type ChargeResult,
  type Customer,
  type PaymentEvent,
  type PaymentGateway,
  type PaymentIntent,
  type PaymentIntentStatus,
  type PaymentMethod,
  type RefundStatus,
} from './gateway.ts';

type StripeSdk = typeof Stripe;
let stripeSdk: StripeSdk | undefined;

/**
 * The Stripe SDK, loaded the first time a gateway talks to Stripe or the sandbox: it holds about 27 MB
 * of memory once loaded, which a process that never takes a payment (a worker, or an API process in
 * a quiet hour) need not pay (DESIGN §5: RSS ≤ 200 MB under load). Loaded synchronously through
 * `require` so that the gateway's methods keep their signatures; every use goes through here, so the
 * process holds one copy of the SDK and its error classes.
 */
function loadStripe(): StripeSdk {
  return (stripeSdk ??= createRequire(import.meta.url)('stripe') as StripeSdk);
}

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

const idOf = (value: string | { id: string } | null | undefined): string | null =>
  value === null || value === undefined ? null : typeof value === 'string' ? value : value.id;

function toIntent(pi: Stripe.PaymentIntent): PaymentIntent {
  const error = pi.last_payment_error;
  return {
    id: pi.id,
    status: pi.status as PaymentIntentStatus,
    amountPence: pi.amount,
    amountReceivedPence: pi.amount_received,
    currency: pi.currency,
    customerId: idOf(pi.customer),
    paymentMethodId: idOf(pi.payment_method),
    latestChargeId: idOf(pi.latest_charge),
    metadata: { ...pi.metadata },
    lastPaymentError:
      error === null
        ? null
        : {
            code: error.code ?? null,
            declineCode: error.decline_code ?? null,
            message: error.message ?? null,
          },
    idempotencyKey: pi.metadata[IDEMPOTENCY_METADATA_KEY] ?? null,
  };
}

function toPaymentMethod(pm: Stripe.PaymentMethod): PaymentMethod {
  return {
    id: pm.id,
    brand: pm.card?.brand ?? null,
    last4: pm.card?.last4 ?? null,
    expMonth: pm.card?.exp_month ?? null,
    expYear: pm.card?.exp_year ?? null,
    customerId: idOf(pm.customer),
  };
}

function toCustomer(customer: Stripe.Customer | Stripe.DeletedCustomer): Customer {
  if (customer.deleted === true) throw new AppError('NOT_FOUND', `customer ${customer.id} has been deleted`);
  return {
    id: customer.id,
    email: customer.email,
    name: customer.name ?? null,
    defaultPaymentMethodId: idOf(customer.invoice_settings.default_payment_method),
  };
}

/** Stripe's search syntax quotes values with single quotes; a quote or backslash inside is escaped. */
const searchQuote = (value: string): string => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/**
 * Wraps an SDK error in `AppError`: network, timeouts, 409, 5xx and rate limits are retryable; card
 * errors, invalid requests and authentication failures are not.
 */
export function toAppError(error: unknown, action: string): AppError {
  if (error instanceof AppError) return error;
  // An SDK that was never loaded threw nothing.
  const sdk = stripeSdk;
  if (sdk === undefined || !(error instanceof sdk.errors.StripeError)) {
    return new AppError('UPSTREAM_UNAVAILABLE', `payment processor: ${action} failed`, {
      retryable: false,
      cause: error,
    });
  }
  const detail = `payment processor: ${action}: ${error.message}`;
  if (error instanceof sdk.errors.StripeCardError)
    return new AppError('PAYMENT_DECLINED', detail, { retryable: false, cause: error });
  if (error instanceof sdk.errors.StripeRateLimitError) {
    const retryAfter = Number(error.headers?.['retry-after']);
    return new AppError('UPSTREAM_UNAVAILABLE', detail, {
      retryable: true,
      cause: error,
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
    });
  }
  if (error instanceof sdk.errors.StripeIdempotencyError)
    return new AppError('CONFLICT', detail, { retryable: false, cause: error });
  if (error instanceof sdk.errors.StripeInvalidRequestError) {
    const missing = error.statusCode === 404 || error.code === 'resource_missing';
    return new AppError(missing ? 'NOT_FOUND' : 'VALIDATION_FAILED', detail, {
      retryable: false,
      cause: error,
    });
  }
  if (
    error instanceof sdk.errors.StripeAuthenticationError ||
    error instanceof sdk.errors.StripePermissionError
  ) {
    return new AppError('UPSTREAM_UNAVAILABLE', detail, { retryable: false, cause: error });
  }
  if (error instanceof sdk.errors.StripeSignatureVerificationError) {
    return new AppError('UNAUTHENTICATED', `webhook signature verification failed: ${error.message}`, {
      retryable: false,
      cause: error,
    });
  }
  // StripeConnectionError (network, timeout), StripeAPIError (5xx, 409 idempotency key in use), anything else.
  return new AppError('UPSTREAM_UNAVAILABLE', detail, { retryable: true, cause: error });
}

/** Whether a failed charge request may have been carried out: the caller must reconcile, never re-charge. */
function isAmbiguous(error: Stripe.errors.StripeError): boolean {
  const sdk = loadStripe();
  if (error instanceof sdk.errors.StripeConnectionError) return true;
  if (error instanceof sdk.errors.StripeAPIError) return true;
  return error.statusCode === undefined || error.statusCode >= 500 || error.statusCode === 409;
}

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

/** The SDK's client, made on first use (see loadStripe). */
type Client = () => Stripe;

/** Runs one SDK call; whatever it throws comes out as `AppError` (see toAppError). */
async function call<T>(action: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toAppError(error, action);
  }
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
  'createPaymentIntent' | 'retrievePaymentIntent' | 'findPaymentIntentByKey' | 'chargeOffSession'
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
    return { kind: 'other', id: event.id, type: event.type, createdAt };
  };
}
