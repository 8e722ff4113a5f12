import type { Clock } from '../../../platform/clock.ts';
import { checkCardDetails } from './card-details.ts';
import { invalidRequest, noSuch, StripeApiError } from './errors.ts';
import { mergeMetadata, readParams, type FormObject } from './form.ts';
import {
  behaviourOfLast4,
  docUrl,
  newId,
  paymentMethodFromTestCard,
  randomId,
  TEST_CARDS,
  type ChargeObject,
  type CustomerObject,
  type LastPaymentError,
  type PaymentIntentObject,
  type PaymentMethodObject,
  type RefundObject,
} from './objects.ts';
import type { SandboxObject, SandboxStore } from './store.ts';

/** Who is calling: a secret key (full access), or a browser holding only a client secret. */
export type Caller = { readonly kind: 'secret' } | { readonly kind: 'publishable' };

/** The request an event came from, as Stripe reports it in `event.request`. */
export interface RequestInfo {
  readonly id: string;
  readonly idempotencyKey: string | null;
}

export type Emit = (type: string, object: SandboxObject, request: RequestInfo) => Promise<void>;

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

const money = (amount: number, currency: string): string =>
  `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;

/** Runs `work` after every earlier call with the same key has finished: read-modify-write per object. */
function createLocks() {
  const tails = new Map<string, Promise<void>>();
  return async <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const previous = tails.get(key) ?? Promise.resolve();
    let release = (): void => undefined;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => current);
    tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

/** The Stripe behaviour of the sandbox, over its store; HTTP concerns live in the plugin. */
export function createSandboxEngine(deps: { store: SandboxStore; clock: Clock; emit: Emit }) {
  const { store, clock, emit } = deps;
  const withLock = createLocks();
  const now = (): number => Math.floor(clock.now().getTime() / 1000);

  async function load<T extends SandboxObject>(
    id: string,
    object: T['object'],
    kind: string,
    param?: string,
  ): Promise<T> {
    const found = await store.get(id);
    if (found?.object !== object) throw noSuch(kind, id, param);
    return found as T;
  }
  const loadCustomer = (id: string, param?: string) =>
    load<CustomerObject>(id, 'customer', 'customer', param);
  const loadIntent = (id: string, param?: string) =>
    load<PaymentIntentObject>(id, 'payment_intent', 'payment_intent', param);
  const loadCharge = (id: string) => load<ChargeObject>(id, 'charge', 'charge', 'charge');

  /**
   * A `pm_card_*` test token becomes a new card (attached to `customer` when there is one);
   * a real id is loaded and, if unattached, attached to `customer`.
   */
  async function resolvePaymentMethod(
    idOrToken: string,
    customer: string | null,
    param: string,
  ): Promise<PaymentMethodObject> {
    const card = TEST_CARDS[idOrToken];
    if (card !== undefined) {
      const created = paymentMethodFromTestCard(card, now(), customer);
      await store.put(created);
      return created;
    }
    return withLock(idOrToken, async () => {
      const pm = await load<PaymentMethodObject>(idOrToken, 'payment_method', 'PaymentMethod', param);
      if (customer === null || pm.customer === customer) return pm;
      if (pm.customer !== null) {
        throw invalidRequest(
          `The payment method ${pm.id} belongs to another customer and cannot be used with ${customer}.`,
          { param },
        );
      }
      const attached = { ...pm, customer };
      await store.put(attached);
      return attached;
    });
  }

  async function createCustomer(params: FormObject): Promise<CustomerObject> {
    const p = readParams(params, [
      'email',
      'name',
      'description',
      'phone',
      'metadata',
      'payment_method',
      'invoice_settings',
    ]);
    const id = newId('cus');
    const paymentMethod = p.string('payment_method');
    const pm =
      paymentMethod === undefined
        ? undefined
        : await resolvePaymentMethod(paymentMethod, id, 'payment_method');
    const settings = readParams(p.object('invoice_settings') ?? {}, ['default_payment_method']);
    const requestedDefault = settings.string('default_payment_method');
    if (requestedDefault !== undefined && requestedDefault !== pm?.id) {
      throw invalidRequest(`The customer does not have a payment method with the ID ${requestedDefault}.`, {
        param: 'invoice_settings[default_payment_method]',
        code: 'resource_missing',
      });
    }
    const customer: CustomerObject = {
      id,
      object: 'customer',
      address: null,
      balance: 0,
      created: now(),
      currency: null,
      default_source: null,
      delinquent: false,
      description: p.string('description') ?? null,
      email: p.string('email') ?? null,
      invoice_prefix: randomId(8).toUpperCase(),
      invoice_settings: {
        custom_fields: null,
        default_payment_method: requestedDefault ?? null,
        footer: null,
        rendering_options: null,
      },
      livemode: false,
      metadata: mergeMetadata({}, p.metadata()),
      name: p.string('name') ?? null,
      next_invoice_sequence: 1,
      phone: p.string('phone') ?? null,
      preferred_locales: [],
      shipping: null,
      tax_exempt: 'none',
      test_clock: null,
    };
    await store.put(customer);
    return customer;
  }

  async function updateCustomer(id: string, params: FormObject): Promise<CustomerObject> {
    const p = readParams(params, ['email', 'name', 'description', 'phone', 'metadata', 'invoice_settings']);
    return withLock(id, async () => {
      const customer = await loadCustomer(id);
      const settings = p.object('invoice_settings');
      let defaultPaymentMethod = customer.invoice_settings.default_payment_method;
      if (settings !== undefined) {
        const requested = readParams(settings, ['default_payment_method']).string('default_payment_method');
        if (requested === '') defaultPaymentMethod = null;
        else if (requested !== undefined) {
          const pm = await store.get(requested);
          if (pm?.object !== 'payment_method' || pm['customer'] !== id) {
            throw invalidRequest(
              `The customer does not have a payment method with the ID ${requested}. The payment method must be attached to the customer.`,
              { param: 'invoice_settings[default_payment_method]', code: 'resource_missing' },
            );
          }
          defaultPaymentMethod = requested;
        }
      }
      const textOr = (name: string, current: string | null): string | null => {
        const value = p.string(name);
        return value === undefined ? current : value === '' ? null : value;
      };
      const updated: CustomerObject = {
        ...customer,
        email: textOr('email', customer.email),
        name: textOr('name', customer.name),
        description: textOr('description', customer.description),
        phone: textOr('phone', customer.phone),
        metadata: mergeMetadata(customer.metadata, p.metadata()),
        invoice_settings: { ...customer.invoice_settings, default_payment_method: defaultPaymentMethod },
      };
      await store.put(updated);
      return updated;
    });
  }

  async function retrievePaymentMethod(id: string): Promise<PaymentMethodObject> {
    const card = TEST_CARDS[id];
    if (card !== undefined) {
      const created = paymentMethodFromTestCard(card, now(), null);
      await store.put(created);
      return created;
    }
    return load<PaymentMethodObject>(id, 'payment_method', 'PaymentMethod');
  }

  /**
   * A card from its details, as Stripe.js creates one in the browser. The number decides the card's
   * behaviour when charged (as the `pm_card_*` tokens do); only brand, last 4, expiry and fingerprint
   * are kept, never the number or the CVC.
   */
  async function createPaymentMethod(params: FormObject): Promise<PaymentMethodObject> {
    // Stripe.js sends its key and its telemetry along with the card.
    const p = readParams(params, [
      'type',
      'card',
      'metadata',
      'key',
      'payment_user_agent',
      'time_on_page',
      'guid',
      'muid',
      'sid',
    ]);
    if (p.requiredString('type') !== 'card') {
      throw invalidRequest('The sandbox supports only the payment method type card.', {
        param: 'type',
        code: 'payment_method_unactivated',
      });
    }
    const details = p.object('card');
    if (details === undefined)
      throw invalidRequest('Missing required param: card.', { param: 'card', code: 'parameter_missing' });
    const card = readParams(details, ['number', 'exp_month', 'exp_year', 'cvc']);
    const required = (name: string): string => {
      const value = card.string(name);
      if (value === undefined || value === '')
        throw invalidRequest(`Missing required param: card[${name}].`, {
          param: `card[${name}]`,
          code: 'parameter_missing',
        });
      return value;
    };
    const checked = checkCardDetails(
      {
        number: required('number'),
        expMonth: required('exp_month'),
        expYear: required('exp_year'),
        cvc: card.string('cvc'),
      },
      clock.now(),
    );
    if (!checked.ok) {
      throw new StripeApiError(402, {
        type: 'card_error',
        code: checked.code,
        ...(checked.declineCode === undefined ? {} : { decline_code: checked.declineCode }),
        doc_url: docUrl(checked.code),
        message: checked.message,
        param: checked.param,
      });
    }
    const created = paymentMethodFromTestCard(checked.card.testCard, now(), null, checked.card);
    const withMetadata = { ...created, metadata: mergeMetadata({}, p.metadata()) };
    await store.put(withMetadata);
    return withMetadata;
  }

  async function attachPaymentMethod(id: string, params: FormObject): Promise<PaymentMethodObject> {
    const p = readParams(params, ['customer']);
    const customer = p.requiredString('customer');
    await loadCustomer(customer, 'customer');
    if (TEST_CARDS[id] !== undefined) return resolvePaymentMethod(id, customer, 'payment_method');
    return withLock(id, async () => {
      const pm = await load<PaymentMethodObject>(id, 'payment_method', 'PaymentMethod');
      if (pm.customer === customer) return pm;
      if (pm.customer !== null)
        throw invalidRequest('The payment method you provided has already been attached to a customer.', {
          code: 'payment_method_unexpected_state',
        });
      const attached = { ...pm, customer };
      await store.put(attached);
      return attached;
    });
  }

  /** One payment attempt on a confirmable intent; stores the outcome before answering (402 for card errors). */
  async function attempt(
    intent: PaymentIntentObject,
    pm: PaymentMethodObject,
    offSession: boolean,
    request: RequestInfo,
  ): Promise<PaymentIntentObject> {
    const behaviour = behaviourOfLast4(pm.card.last4);
    // NOTE: a sandbox stand-in for 3-D Secure: confirming again an intent that is waiting for the
    // customer's authentication with the same card counts as the customer having authenticated.
    const authenticated =
      intent.status === 'requires_action' && intent.payment_method === pm.id && !offSession;
    const created = now();
    const charge = (
      status: 'succeeded' | 'failed',
      failure?: { code: string; message: string },
    ): ChargeObject => ({
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
    });

    if (behaviour.kind === 'succeed' || (behaviour.kind === 'authenticate' && authenticated)) {
      const paid = charge('succeeded');
      await store.put(paid);
      const succeeded: PaymentIntentObject = {
        ...intent,
        status: 'succeeded',
        amount_received: intent.amount,
        latest_charge: paid.id,
        payment_method: pm.id,
        last_payment_error: null,
        next_action: null,
      };
      await store.put(succeeded);
      await emit('payment_intent.succeeded', succeeded, request);
      return succeeded;
    }

    if (behaviour.kind === 'authenticate' && !offSession) {
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
      await store.put(waiting);
      return waiting;
    }

    const failure =
      behaviour.kind === 'decline'
        ? behaviour
        : {
            code: 'authentication_required',
            declineCode: 'authentication_required',
            message: 'Your card was declined. This transaction requires authentication.',
          };
    const failedCharge = behaviour.kind === 'decline' ? charge('failed', failure) : undefined;
    if (failedCharge !== undefined) await store.put(failedCharge);
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
    await store.put(failed);
    await emit('payment_intent.payment_failed', failed, request);
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
  ];

  function setupFutureUsage(
    value: string | undefined,
    param = 'setup_future_usage',
  ): 'off_session' | 'on_session' | undefined {
    if (value === undefined || value === 'off_session' || value === 'on_session') return value;
    throw invalidRequest(`Invalid setup_future_usage: must be one of off_session, on_session`, { param });
  }

  async function createPaymentIntent(params: FormObject, request: RequestInfo): Promise<PaymentIntentObject> {
    const p = readParams(params, INTENT_PARAMS);
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
    for (const name of ['allowed_payment_method_types', 'payment_method_types']) {
      const types = p.stringArray(name);
      if (types !== undefined && (types.length === 0 || types.some((t) => t !== 'card'))) {
        throw invalidRequest(
          `The sandbox supports only the payment method type card (got ${types.join(', ')}).`,
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
    const confirm = p.boolean('confirm') ?? false;
    const offSession = p.boolean('off_session') ?? false;
    if (offSession && !confirm)
      throw invalidRequest('off_session can only be used with confirm=true.', { param: 'off_session' });
    const customer = p.string('customer');
    if (customer !== undefined) await loadCustomer(customer, 'customer');
    const paymentMethod = p.string('payment_method');
    const pm =
      paymentMethod === undefined
        ? undefined
        : await resolvePaymentMethod(paymentMethod, customer ?? null, 'payment_method');
    if (confirm && pm === undefined) {
      throw invalidRequest("You cannot confirm this PaymentIntent because it's missing a payment method.", {
        param: 'payment_method',
        code: 'payment_intent_unexpected_state',
      });
    }
    const id = newId('pi');
    const intent: PaymentIntentObject = {
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
      created: now(),
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
      payment_method_options: {
        card: {
          installments: null,
          mandate_options: null,
          network: null,
          request_three_d_secure: 'automatic',
        },
      },
      payment_method_types: ['card'],
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
    await store.put(intent);
    if (!confirm || pm === undefined) return intent;
    return withLock(id, () => attempt(intent, pm, offSession, request));
  }

  /** Retrieval by a secret key, or by a browser presenting the intent's client secret. */
  async function retrievePaymentIntent(
    id: string,
    params: FormObject,
    caller: Caller,
  ): Promise<PaymentIntentObject> {
    const p = readParams(params, ['client_secret', 'expand', 'key']);
    const intent = await loadIntent(id);
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

  async function confirmPaymentIntent(
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
    return withLock(id, async () => {
      const intent = await loadIntent(id);
      const clientSecret = p.string('client_secret');
      if (caller.kind === 'publishable' || clientSecret !== undefined)
        checkClientSecret(intent, clientSecret);
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
            : await load<PaymentMethodObject>(
                intent.payment_method,
                'payment_method',
                'PaymentMethod',
                'payment_method',
              )
          : await resolvePaymentMethod(requested, intent.customer, 'payment_method');
      if (pm === undefined) {
        throw invalidRequest(
          "You cannot confirm this PaymentIntent because it's missing a payment method. Provide a payment_method.",
          {
            param: 'payment_method',
            code: 'payment_intent_unexpected_state',
          },
        );
      }
      const usage = setupFutureUsage(p.string('setup_future_usage'));
      const receiptEmail = p.string('receipt_email');
      const updated: PaymentIntentObject = {
        ...intent,
        ...(usage === undefined ? {} : { setup_future_usage: usage }),
        ...(receiptEmail === undefined ? {} : { receipt_email: receiptEmail }),
      };
      return attempt(updated, pm, offSession, request);
    });
  }

  async function searchPaymentIntents(params: FormObject) {
    const p = readParams(params, ['query', 'limit', 'page', 'expand']);
    const match = parseSearchQuery(p.requiredString('query'));
    const limit = p.integer('limit') ?? 10;
    if (limit < 1 || limit > 100)
      throw invalidRequest('Invalid limit: must be between 1 and 100', { param: 'limit' });
    const page = p.string('page');
    const offset =
      page === undefined ? 0 : Number.parseInt(Buffer.from(page, 'base64url').toString('utf8'), 10);
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw invalidRequest('Invalid page cursor.', { param: 'page' });
    const found = await store.find('payment_intent', match, offset + limit + 1);
    const data = found.slice(offset, offset + limit);
    const hasMore = found.length > offset + limit;
    return {
      object: 'search_result',
      data,
      has_more: hasMore,
      next_page: hasMore ? Buffer.from(String(offset + limit)).toString('base64url') : null,
      url: '/v1/payment_intents/search',
    };
  }

  async function createRefund(params: FormObject, request: RequestInfo): Promise<RefundObject> {
    const p = readParams(params, ['payment_intent', 'charge', 'amount', 'metadata', 'reason']);
    const intentId = p.string('payment_intent');
    const chargeId = p.string('charge');
    if (intentId === undefined && chargeId === undefined) {
      throw invalidRequest(
        'One of the following params should be provided for this request: payment_intent or charge.',
        { code: 'parameter_missing' },
      );
    }
    const reason = p.string('reason');
    if (reason !== undefined && !['duplicate', 'fraudulent', 'requested_by_customer'].includes(reason)) {
      throw invalidRequest('Invalid reason: must be one of duplicate, fraudulent, or requested_by_customer', {
        param: 'reason',
      });
    }
    const requestedAmount = p.integer('amount');
    if (requestedAmount !== undefined && requestedAmount <= 0) {
      throw invalidRequest('Invalid positive integer', {
        param: 'amount',
        code: 'parameter_invalid_integer',
      });
    }
    const metadata = mergeMetadata({}, p.metadata());

    let target = chargeId;
    if (intentId !== undefined) {
      const intent = await loadIntent(intentId, 'payment_intent');
      if (intent.status !== 'succeeded' || intent.latest_charge === null) {
        throw invalidRequest(
          `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
          {
            param: 'payment_intent',
            code: 'charge_not_refundable',
          },
        );
      }
      if (chargeId !== undefined && chargeId !== intent.latest_charge) {
        throw invalidRequest(`Charge ${chargeId} does not belong to PaymentIntent ${intent.id}.`, {
          param: 'charge',
        });
      }
      target = intent.latest_charge;
    }
    const chargeToRefund = target ?? '';
    return withLock(chargeToRefund, async () => {
      const charge = await loadCharge(chargeToRefund);
      if (charge.status !== 'succeeded')
        throw invalidRequest(`Charge ${charge.id} did not succeed and cannot be refunded.`, {
          code: 'charge_not_refundable',
        });
      const remaining = charge.amount - charge.amount_refunded;
      if (remaining <= 0)
        throw invalidRequest(`Charge ${charge.id} has already been refunded.`, {
          code: 'charge_already_refunded',
        });
      const amount = requestedAmount ?? remaining;
      if (amount > remaining) {
        throw invalidRequest(
          `Refund amount (${money(amount, charge.currency)}) is greater than unrefunded amount on charge (${money(remaining, charge.currency)})`,
          { param: 'amount', code: 'amount_too_large' },
        );
      }
      const refund: RefundObject = {
        id: newId('re'),
        object: 'refund',
        amount,
        balance_transaction: newId('txn'),
        charge: charge.id,
        created: now(),
        currency: charge.currency,
        destination_details: {
          card: { reference_status: 'pending', reference_type: 'acquirer_reference_number', type: 'refund' },
          type: 'card',
        },
        metadata,
        payment_intent: charge.payment_intent,
        reason: reason ?? null,
        receipt_number: null,
        source_transfer_reversal: null,
        status: 'succeeded',
        transfer_reversal: null,
      };
      await store.put(refund);
      const refunded: ChargeObject = {
        ...charge,
        amount_refunded: charge.amount_refunded + amount,
        refunded: charge.amount_refunded + amount === charge.amount,
      };
      await store.put(refunded);
      await emit('charge.refunded', refunded, request);
      return refund;
    });
  }

  return {
    createCustomer,
    retrieveCustomer: (id: string) => loadCustomer(id),
    updateCustomer,
    createPaymentMethod,
    retrievePaymentMethod,
    attachPaymentMethod,
    createPaymentIntent,
    retrievePaymentIntent,
    confirmPaymentIntent,
    searchPaymentIntents,
    createRefund,
  };
}

export type SandboxEngine = ReturnType<typeof createSandboxEngine>;

const CLAUSE = /^(?:metadata\[(['"])(.+?)\1\]|([a-z_]+))\s*:\s*(['"])(.*)\4$/;
const SEARCHABLE = new Set(['customer', 'status', 'currency']);

/**
 * The part of Stripe's search query language the sandbox understands: exact-match clauses on
 * `metadata['key']`, `customer`, `status` and `currency`, joined by AND.
 */
export function parseSearchQuery(query: string): Record<string, unknown> {
  const match: Record<string, unknown> = {};
  const metadata: Record<string, string> = {};
  for (const clause of query.trim().split(/\s+AND\s+/)) {
    const m = CLAUSE.exec(clause.trim());
    const field = m?.[3];
    const key = m?.[2];
    const value = m?.[5];
    if (m === null || value === undefined)
      throw invalidRequest(`The sandbox cannot parse the search query clause: ${clause}`, { param: 'query' });
    if (key !== undefined) metadata[key] = value;
    else if (field !== undefined && SEARCHABLE.has(field)) match[field] = value;
    else
      throw invalidRequest(
        `The sandbox cannot search on the field ${field ?? '?'}; use metadata['key'], customer, status or currency.`,
        { param: 'query' },
      );
  }
  if (Object.keys(metadata).length > 0) match['metadata'] = metadata;
  return match;
}
