import { readBacsPaymentMethod } from './bacs-details.ts';
import { checkCardDetails } from './card-details.ts';
import type { EngineContext } from './engine-context.ts';
import { invalidRequest, StripeApiError } from './errors.ts';
import { mergeMetadata, readParams, type FormObject } from './form.ts';
import { docUrl, paymentMethodFromTestCard, TEST_CARDS, type PaymentMethodObject } from './objects.ts';

/**
 * A `pm_card_*` test token becomes a new card (attached to `customer` when there is one);
 * a real id is loaded and, if unattached, attached to `customer`.
 */
export async function resolvePaymentMethod(
  ctx: EngineContext,
  idOrToken: string,
  customer: string | null,
  param: string,
): Promise<PaymentMethodObject> {
  const card = TEST_CARDS[idOrToken];
  if (card !== undefined) {
    const created = paymentMethodFromTestCard(card, ctx.now(), customer);
    await ctx.store.put(created);
    return created;
  }
  return ctx.withLock(idOrToken, async () => {
    const pm = await ctx.load<PaymentMethodObject>(idOrToken, 'payment_method', 'PaymentMethod', param);
    if (customer === null || pm.customer === customer) return pm;
    if (pm.customer !== null) {
      throw invalidRequest(
        `The payment method ${pm.id} belongs to another customer and cannot be used with ${customer}.`,
        { param },
      );
    }
    const attached = { ...pm, customer };
    await ctx.store.put(attached);
    return attached;
  });
}

export async function retrievePaymentMethod(ctx: EngineContext, id: string): Promise<PaymentMethodObject> {
  const card = TEST_CARDS[id];
  if (card !== undefined) {
    const created = paymentMethodFromTestCard(card, ctx.now(), null);
    await ctx.store.put(created);
    return created;
  }
  return ctx.load<PaymentMethodObject>(id, 'payment_method', 'PaymentMethod');
}

/**
 * A card from its details, as Stripe.js creates one in the browser. The number decides the card's
 * behaviour when charged (as the `pm_card_*` tokens do); only brand, last 4, expiry and fingerprint
 * are kept, never the number or the CVC.
 */
export async function createPaymentMethod(
  ctx: EngineContext,
  params: FormObject,
): Promise<PaymentMethodObject> {
  // Stripe.js sends its key and its telemetry along with the card.
  const p = readParams(params, [
    'type',
    'card',
    'bacs_debit',
    'billing_details',
    'metadata',
    'key',
    'payment_user_agent',
    'time_on_page',
    'guid',
    'muid',
    'sid',
  ]);
  const type = p.requiredString('type');
  if (type === 'bacs_debit') {
    // NOTE: a bank account made this way still needs a mandate: confirm a SetupIntent with it.
    const bacs = readBacsPaymentMethod(params, '', null, ctx.now());
    await ctx.store.put(bacs);
    return bacs as unknown as PaymentMethodObject;
  }
  if (type !== 'card') {
    throw invalidRequest('The sandbox supports the payment method types card and bacs_debit.', {
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
    ctx.clock.now(),
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
  const created = paymentMethodFromTestCard(checked.card.testCard, ctx.now(), null, checked.card);
  const withMetadata = { ...created, metadata: mergeMetadata({}, p.metadata()) };
  await ctx.store.put(withMetadata);
  return withMetadata;
}

export async function attachPaymentMethod(
  ctx: EngineContext,
  id: string,
  params: FormObject,
): Promise<PaymentMethodObject> {
  const p = readParams(params, ['customer']);
  const customer = p.requiredString('customer');
  await ctx.loadCustomer(customer, 'customer');
  if (TEST_CARDS[id] !== undefined) return resolvePaymentMethod(ctx, id, customer, 'payment_method');
  return ctx.withLock(id, async () => {
    const pm = await ctx.load<PaymentMethodObject>(id, 'payment_method', 'PaymentMethod');
    if (pm.customer === customer) return pm;
    if (pm.customer !== null)
      throw invalidRequest('The payment method you provided has already been attached to a customer.', {
        code: 'payment_method_unexpected_state',
      });
    const attached = { ...pm, customer };
    await ctx.store.put(attached);
    return attached;
  });
}
