import { money, type Caller, type EngineContext, type RequestInfo } from './engine-context.ts';
import { invalidRequest, StripeApiError } from './errors.ts';
import { mergeMetadata, readParams, type FormObject } from './form.ts';
import { newId, randomId, type PaymentIntentObject, type PaymentMethodObject } from './objects.ts';
import { activeMandateFor, isBacs, submitBacsPayment } from './bacs-payments.ts';
import { attemptPayment } from './payment-attempts.ts';
import { resolvePaymentMethod } from './payment-methods.ts';

// Stripe's minimum charge amounts (docs.stripe.com/currencies#minimum-and-maximum-charge-amounts), in minor units.
const MINIMUM_AMOUNT: Readonly<Record<string, number>> = {
  gbp: 30,
  usd: 50,
  eur: 50,
  cad: 50,
  aud: 50,
  chf: 50,
  nzd: 50,
  sek: 300,
  nok: 300,
  dkk: 250,
};
const MAXIMUM_AMOUNT = 99_999_999;
const CONFIRMABLE = new Set(['requires_payment_method', 'requires_confirmation', 'requires_action']);
// A card intent that is not paid yet; Stripe also cancels `requires_capture` and some `processing`
// intents, which the sandbox's automatically captured card intents never are.
const CANCELABLE = CONFIRMABLE;
const CANCELLATION_REASONS = new Set(['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned']);

const INTENT_PARAMS = [
  'amount',
  'currency',
  'customer',
  'payment_method',
  'confirm',
  'off_session',
  'setup_future_usage',
  'metadata',
  'description',
  'receipt_email',
  'statement_descriptor',
  'statement_descriptor_suffix',
  'allowed_payment_method_types',
  'payment_method_types',
  'capture_method',
  'confirmation_method',
  'error_on_requires_action',
  'return_url',
  'use_stripe_sdk',
  'mandate',
  'mandate_data',
  'payment_method_options',
];

/** The payment method types an intent allows: `card` unless it names `bacs_debit` alone. */
function allowedTypes(p: IntentParams): ['card'] | ['bacs_debit'] {
  const types = p.stringArray('allowed_payment_method_types') ?? p.stringArray('payment_method_types');
  return types?.length === 1 && types[0] === 'bacs_debit' ? ['bacs_debit'] : ['card'];
}

/** A payment method of another type than the intent allows is refused, as Stripe refuses it. */
function checkType(types: readonly string[], pm: PaymentMethodObject | undefined): void {
  if (pm === undefined || types.includes(pm.type)) return;
  throw invalidRequest(
    `The PaymentMethod provided (${pm.type}) is not allowed for this PaymentIntent. Allowed types: ${types.join(', ')}.`,
    { param: 'payment_method', code: 'payment_intent_incompatible_payment_method' },
  );
}

function setupFutureUsage(
  value: string | undefined,
  param = 'setup_future_usage',
): 'off_session' | 'on_session' | undefined {
  if (value === undefined || value === 'off_session' || value === 'on_session') return value;
  throw invalidRequest(`Invalid setup_future_usage: must be one of off_session, on_session`, { param });
}

type IntentParams = ReturnType<typeof readParams>;

/** The amount and currency of a new intent, within Stripe's minimum and maximum for the currency. */
function readAmount(p: IntentParams): { amount: number; currency: string } {
  const amount = p.integer('amount');
  if (amount === undefined)
    throw invalidRequest('Missing required param: amount.', { param: 'amount', code: 'parameter_missing' });
  const currencyText = p.requiredString('currency');
  if (!/^[a-z]{3}$/i.test(currencyText))
    throw invalidRequest(`Invalid currency: ${currencyText}.`, {
      param: 'currency',
      code: 'parameter_invalid',
    });
  const currency = currencyText.toLowerCase();
  const minimum = MINIMUM_AMOUNT[currency] ?? 50;
  if (amount < minimum) {
    throw invalidRequest(`Amount must be at least ${money(minimum, currency)}`, {
      param: 'amount',
      code: 'amount_too_small',
    });
  }
  if (amount > MAXIMUM_AMOUNT)
    throw invalidRequest(`Amount must be no more than ${money(MAXIMUM_AMOUNT, currency)}`, {
      param: 'amount',
      code: 'amount_too_large',
    });
  return { amount, currency };
}

/** What the sandbox does not do (other payment method types, manual capture) is refused, not ignored. */
function refuseUnsupported(p: IntentParams): void {
  for (const name of ['allowed_payment_method_types', 'payment_method_types']) {
    const types = p.stringArray(name);
    const supported = types?.length === 1 && (types[0] === 'card' || types[0] === 'bacs_debit');
    if (types !== undefined && !supported) {
      throw invalidRequest(
        `The sandbox supports the payment method types card or bacs_debit, one at a time (got ${types.join(', ')}).`,
        { param: name, code: 'payment_method_unactivated' },
      );
    }
  }
  const capture = p.string('capture_method');
  if (capture !== undefined && capture !== 'automatic' && capture !== 'automatic_async') {
    throw invalidRequest('The sandbox supports only capture_method=automatic.', {
      param: 'capture_method',
    });
  }
}

/** `POST /v1/payment_intents`, confirmed at once with `confirm=true` (off session for saved cards). */
export async function createPaymentIntent(
  ctx: EngineContext,
  params: FormObject,
  request: RequestInfo,
): Promise<PaymentIntentObject> {
  const p = readParams(params, INTENT_PARAMS);
  const { amount, currency } = readAmount(p);
  refuseUnsupported(p);
  const confirm = p.boolean('confirm') ?? false;
  const offSession = p.boolean('off_session') ?? false;
  if (offSession && !confirm)
    throw invalidRequest('off_session can only be used with confirm=true.', { param: 'off_session' });
  const customer = p.string('customer');
  if (customer !== undefined) await ctx.loadCustomer(customer, 'customer');
  const paymentMethod = p.string('payment_method');
  const pm =
    paymentMethod === undefined
      ? undefined
      : await resolvePaymentMethod(ctx, paymentMethod, customer ?? null, 'payment_method');
  if (confirm && pm === undefined) {
    throw invalidRequest("You cannot confirm this PaymentIntent because it's missing a payment method.", {
      param: 'payment_method',
      code: 'payment_intent_unexpected_state',
    });
  }
  const types = allowedTypes(p);
  checkType(types, pm);
  // NOTE: a Bacs payment without an active mandate is refused before any intent exists.
  const mandate =
    confirm && pm !== undefined && isBacs(pm)
      ? await activeMandateFor(ctx, pm, p.string('mandate'), currency)
      : undefined;
  const intent = newIntent(ctx, p, { amount, currency, customer, pm, types });
  await ctx.store.put(intent);
  if (!confirm || pm === undefined) return intent;
  return ctx.withLock(intent.id, () =>
    isBacs(pm) && mandate !== undefined
      ? submitBacsPayment(ctx, intent, pm, mandate, request)
      : attemptPayment(ctx, intent, pm, offSession, request),
  );
}

function newIntent(
  ctx: EngineContext,
  p: IntentParams,
  fields: {
    amount: number;
    currency: string;
    customer: string | undefined;
    pm: PaymentMethodObject | undefined;
    types: ['card'] | ['bacs_debit'];
  },
): PaymentIntentObject {
  const { amount, currency, customer, pm, types } = fields;
  const id = newId('pi');
  return {
    id,
    object: 'payment_intent',
    amount,
    amount_capturable: 0,
    amount_details: { tip: {} },
    amount_received: 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: 'automatic',
    client_secret: `${id}_secret_${randomId(25)}`,
    confirmation_method: 'automatic',
    created: ctx.now(),
    currency,
    customer: customer ?? null,
    description: p.string('description') ?? null,
    excluded_payment_method_types: null,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    metadata: mergeMetadata({}, p.metadata()),
    next_action: null,
    on_behalf_of: null,
    payment_method: pm?.id ?? null,
    payment_method_configuration_details: null,
    payment_method_options:
      types[0] === 'bacs_debit'
        ? { bacs_debit: { mandate_options: {} } }
        : {
            card: {
              installments: null,
              mandate_options: null,
              network: null,
              request_three_d_secure: 'automatic',
            },
          },
    payment_method_types: types,
    processing: null,
    receipt_email: p.string('receipt_email') ?? null,
    review: null,
    setup_future_usage: setupFutureUsage(p.string('setup_future_usage')) ?? null,
    shipping: null,
    source: null,
    statement_descriptor: p.string('statement_descriptor') ?? null,
    statement_descriptor_suffix: p.string('statement_descriptor_suffix') ?? null,
    status: pm === undefined ? 'requires_payment_method' : 'requires_confirmation',
    transfer_data: null,
    transfer_group: null,
  };
}

/** Retrieval by a secret key, or by a browser presenting the intent's client secret. */
export async function retrievePaymentIntent(
  ctx: EngineContext,
  id: string,
  params: FormObject,
  caller: Caller,
): Promise<PaymentIntentObject> {
  const p = readParams(params, ['client_secret', 'expand', 'key']);
  const intent = await ctx.loadIntent(id);
  if (caller.kind === 'publishable') checkClientSecret(intent, p.string('client_secret'));
  return intent;
}

function checkClientSecret(intent: PaymentIntentObject, clientSecret: string | undefined): void {
  if (clientSecret === undefined) {
    throw new StripeApiError(401, {
      type: 'invalid_request_error',
      message:
        'You did not provide an API key. A publishable key may only be used with the PaymentIntent client_secret.',
    });
  }
  if (clientSecret !== intent.client_secret) {
    throw invalidRequest(
      'The client_secret provided does not match the client_secret associated with the PaymentIntent.',
      { param: 'client_secret' },
    );
  }
}

/** `POST /v1/payment_intents/:id/confirm`, by the service's secret key or a browser's client secret. */
export async function confirmPaymentIntent(
  ctx: EngineContext,
  id: string,
  params: FormObject,
  caller: Caller,
  request: RequestInfo,
): Promise<PaymentIntentObject> {
  const p = readParams(params, [
    'payment_method',
    'client_secret',
    'key',
    'off_session',
    'return_url',
    'setup_future_usage',
    'use_stripe_sdk',
    'expected_payment_method_type',
    'receipt_email',
    'error_on_requires_action',
    'payment_method_options',
    'mandate_data',
  ]);
  return ctx.withLock(id, async () => {
    const intent = await ctx.loadIntent(id);
    const clientSecret = p.string('client_secret');
    if (caller.kind === 'publishable' || clientSecret !== undefined) checkClientSecret(intent, clientSecret);
    const offSession = p.boolean('off_session') ?? false;
    if (offSession && caller.kind !== 'secret')
      throw invalidRequest('off_session requires a secret key.', { param: 'off_session' });
    if (!CONFIRMABLE.has(intent.status)) {
      throw invalidRequest(
        `You cannot confirm this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be confirmed: requires_confirmation, requires_action, requires_payment_method.`,
        { code: 'payment_intent_unexpected_state' },
      );
    }
    const requested = p.string('payment_method');
    const pm =
      requested === undefined
        ? intent.payment_method === null
          ? undefined
          : await ctx.load<PaymentMethodObject>(
              intent.payment_method,
              'payment_method',
              'PaymentMethod',
              'payment_method',
            )
        : await resolvePaymentMethod(ctx, requested, intent.customer, 'payment_method');
    if (pm === undefined) {
      throw invalidRequest(
        "You cannot confirm this PaymentIntent because it's missing a payment method. Provide a payment_method.",
        {
          param: 'payment_method',
          code: 'payment_intent_unexpected_state',
        },
      );
    }
    checkType(intent.payment_method_types, pm);
    const usage = setupFutureUsage(p.string('setup_future_usage'));
    const receiptEmail = p.string('receipt_email');
    const updated: PaymentIntentObject = {
      ...intent,
      ...(usage === undefined ? {} : { setup_future_usage: usage }),
      ...(receiptEmail === undefined ? {} : { receipt_email: receiptEmail }),
    };
    if (isBacs(pm)) {
      const mandate = await activeMandateFor(ctx, pm, undefined, updated.currency);
      return submitBacsPayment(ctx, updated, pm, mandate, request);
    }
    return attemptPayment(ctx, updated, pm, offSession, request);
  });
}

/**
 * `POST /v1/payment_intents/:id/cancel`, by the secret key: an intent not yet paid becomes `canceled`
 * (its client secret completes it no more) and `payment_intent.canceled` is sent; in another state, 400
 * `payment_intent_unexpected_state` and the intent is as it was.
 */
export async function cancelPaymentIntent(
  ctx: EngineContext,
  id: string,
  params: FormObject,
  request: RequestInfo,
): Promise<PaymentIntentObject> {
  const p = readParams(params, ['cancellation_reason', 'expand']);
  const reason = p.string('cancellation_reason') ?? null;
  if (reason !== null && !CANCELLATION_REASONS.has(reason))
    throw invalidRequest(
      `Invalid cancellation_reason: must be one of ${[...CANCELLATION_REASONS].join(', ')}`,
      {
        param: 'cancellation_reason',
      },
    );
  return ctx.withLock(id, async () => {
    const intent = await ctx.loadIntent(id);
    if (!CANCELABLE.has(intent.status))
      throw invalidRequest(
        `You cannot cancel this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be canceled: requires_payment_method, requires_capture, requires_confirmation, requires_action, processing.`,
        { code: 'payment_intent_unexpected_state' },
      );
    const canceled: PaymentIntentObject = {
      ...intent,
      status: 'canceled',
      canceled_at: ctx.now(),
      cancellation_reason: reason,
      next_action: null,
    };
    await ctx.store.put(canceled);
    await ctx.emit('payment_intent.canceled', canceled, request);
    return canceled;
  });
}
