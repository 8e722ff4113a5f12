import { readBacsPaymentMethod, readCustomerAcceptance } from './bacs-details.ts';
import { isBacs } from './bacs-payments.ts';
import {
  bacsBehaviourOfLast4,
  bacsMandate,
  type BacsPaymentMethodObject,
  type MandateObject,
  type SetupIntentObject,
} from './bacs-objects.ts';
import type { Caller, EngineContext, RequestInfo } from './engine-context.ts';
import { invalidRequest, StripeApiError } from './errors.ts';
import { mergeMetadata, readParams, type FormObject } from './form.ts';
import { newId, randomId } from './objects.ts';

const CONFIRMABLE = new Set(['requires_payment_method', 'requires_confirmation', 'requires_action']);

/** `POST /v1/setup_intents`: the sandbox sets up Bacs Direct Debit mandates only. */
export async function createSetupIntent(ctx: EngineContext, params: FormObject): Promise<SetupIntentObject> {
  const p = readParams(params, [
    'customer',
    'payment_method_types',
    'allowed_payment_method_types',
    'usage',
    'metadata',
    'description',
  ]);
  const types = p.stringArray('allowed_payment_method_types') ?? p.stringArray('payment_method_types');
  if (types === undefined || types.length !== 1 || types[0] !== 'bacs_debit') {
    throw invalidRequest(
      'The sandbox sets up only Bacs Direct Debit: send allowed_payment_method_types[]=bacs_debit.',
      { param: 'allowed_payment_method_types', code: 'payment_method_unactivated' },
    );
  }
  const usage = p.string('usage') ?? 'off_session';
  if (usage !== 'off_session' && usage !== 'on_session')
    throw invalidRequest('Invalid usage: must be one of off_session, on_session', { param: 'usage' });
  const customer = p.string('customer');
  if (customer !== undefined) await ctx.loadCustomer(customer, 'customer');
  const id = newId('seti');
  const intent: SetupIntentObject = {
    id,
    object: 'setup_intent',
    application: null,
    automatic_payment_methods: null,
    cancellation_reason: null,
    client_secret: `${id}_secret_${randomId(25)}`,
    created: ctx.now(),
    customer: customer ?? null,
    description: p.string('description') ?? null,
    flow_directions: null,
    last_setup_error: null,
    latest_attempt: null,
    livemode: false,
    mandate: null,
    metadata: mergeMetadata({}, p.metadata()),
    next_action: null,
    on_behalf_of: null,
    payment_method: null,
    payment_method_options: { bacs_debit: { mandate_options: {} } },
    payment_method_types: ['bacs_debit'],
    single_use_mandate: null,
    status: 'requires_payment_method',
    usage,
  };
  await ctx.store.put(intent);
  return intent;
}

const loadSetupIntent = (ctx: EngineContext, id: string) =>
  ctx.load<SetupIntentObject>(id, 'setup_intent', 'setup_intent');

function checkClientSecret(intent: SetupIntentObject, clientSecret: string | undefined): void {
  if (clientSecret === undefined) {
    throw new StripeApiError(401, {
      type: 'invalid_request_error',
      message:
        'You did not provide an API key. A publishable key may only be used with the SetupIntent client_secret.',
    });
  }
  if (clientSecret !== intent.client_secret) {
    throw invalidRequest(
      'The client_secret provided does not match the client_secret associated with the SetupIntent.',
      { param: 'client_secret' },
    );
  }
}

/** By a secret key, or by a browser presenting the intent's client secret. */
export async function retrieveSetupIntent(
  ctx: EngineContext,
  id: string,
  params: FormObject,
  caller: Caller,
): Promise<SetupIntentObject> {
  const p = readParams(params, ['client_secret', 'expand', 'key']);
  const intent = await loadSetupIntent(ctx, id);
  if (caller.kind === 'publishable') checkClientSecret(intent, p.string('client_secret'));
  return intent;
}

/**
 * `POST /v1/setup_intents/:id/confirm` with the bank details (`payment_method_data`, or a
 * `payment_method` made earlier) and the payer's acceptance (`mandate_data`): saves the payment method
 * to the intent's customer and makes the mandate, `setup_intent.succeeded`. A refused mandate (test
 * account 00033333) is made inactive at once and announced by `mandate.updated`.
 */
export async function confirmSetupIntent(
  ctx: EngineContext,
  id: string,
  params: FormObject,
  caller: Caller,
  request: RequestInfo,
): Promise<SetupIntentObject> {
  const p = readParams(params, [
    'payment_method',
    'payment_method_data',
    'mandate_data',
    'client_secret',
    'key',
    'return_url',
    'use_stripe_sdk',
    'expand',
  ]);
  return ctx.withLock(id, async () => {
    const intent = await loadSetupIntent(ctx, id);
    const clientSecret = p.string('client_secret');
    if (caller.kind === 'publishable' || clientSecret !== undefined) checkClientSecret(intent, clientSecret);
    if (!CONFIRMABLE.has(intent.status)) {
      throw invalidRequest(
        `You cannot confirm this SetupIntent because it has a status of ${intent.status}.`,
        { code: 'setup_intent_unexpected_state' },
      );
    }
    let pm: BacsPaymentMethodObject;
    try {
      pm = await paymentMethodFor(ctx, intent, p.string('payment_method'), p.object('payment_method_data'));
    } catch (error) {
      if (error instanceof StripeApiError) await recordSetupFailure(ctx, intent, error, request);
      throw error;
    }
    const acceptance = readCustomerAcceptance(p.object('mandate_data'), ctx.now());
    const refused = bacsBehaviourOfLast4(pm.bacs_debit.last4).kind === 'mandate_refused';
    const mandate = bacsMandate(pm, acceptance);
    await ctx.store.put(pm);
    await ctx.store.put(mandate);
    const succeeded: SetupIntentObject = {
      ...intent,
      status: 'succeeded',
      payment_method: pm.id,
      mandate: mandate.id,
      last_setup_error: null,
    };
    await ctx.store.put(succeeded);
    await ctx.emit('setup_intent.succeeded', succeeded, request);
    if (refused) {
      // NOTE: the payer's bank refused the instruction (Bacs AUDDIS): the mandate never becomes usable.
      const details = mandate.payment_method_details;
      const refusedMandate: MandateObject = {
        ...mandate,
        status: 'inactive',
        payment_method_details: {
          ...details,
          bacs_debit: { ...details.bacs_debit, network_status: 'refused' },
        },
      };
      await ctx.store.put(refusedMandate);
      await ctx.emit('mandate.updated', refusedMandate, request);
    }
    return succeeded;
  });
}

async function paymentMethodFor(
  ctx: EngineContext,
  intent: SetupIntentObject,
  paymentMethod: string | undefined,
  data: FormObject | undefined,
): Promise<BacsPaymentMethodObject> {
  if (data !== undefined) {
    if (paymentMethod !== undefined)
      throw invalidRequest('Send payment_method or payment_method_data, not both.', {
        param: 'payment_method_data',
        code: 'parameters_exclusive',
      });
    if (data['type'] !== 'bacs_debit')
      throw invalidRequest('payment_method_data[type] must be bacs_debit.', {
        param: 'payment_method_data[type]',
      });
    return readBacsPaymentMethod(data, 'payment_method_data', intent.customer, ctx.now());
  }
  if (paymentMethod === undefined)
    throw invalidRequest(
      "You cannot confirm this SetupIntent because it's missing a payment method: send payment_method_data.",
      { param: 'payment_method_data', code: 'parameter_missing' },
    );
  const pm = await ctx.load(paymentMethod, 'payment_method', 'PaymentMethod', 'payment_method');
  if (!isBacs(pm))
    throw invalidRequest(`The PaymentMethod ${pm.id} is not a bacs_debit payment method.`, {
      param: 'payment_method',
      code: 'payment_intent_incompatible_payment_method',
    });
  if (pm.customer !== null && pm.customer !== intent.customer)
    throw invalidRequest(`The payment method ${pm.id} belongs to another customer.`, {
      param: 'payment_method',
    });
  return { ...pm, customer: intent.customer };
}

async function recordSetupFailure(
  ctx: EngineContext,
  intent: SetupIntentObject,
  error: StripeApiError,
  request: RequestInfo,
): Promise<void> {
  const { code, message, param } = error.body.error;
  const failed: SetupIntentObject = {
    ...intent,
    status: 'requires_payment_method',
    last_setup_error: {
      type: 'invalid_request_error',
      code: code ?? 'setup_attempt_failed',
      message,
      ...(param === undefined ? {} : { param }),
    },
  };
  await ctx.store.put(failed);
  await ctx.emit('setup_intent.setup_failed', failed, request);
}
