import type { EngineContext } from './engine-context.ts';
import { invalidRequest } from './errors.ts';
import { mergeMetadata, readParams, type FormObject } from './form.ts';
import { newId, randomId, type CustomerObject } from './objects.ts';
import { resolvePaymentMethod } from './payment-methods.ts';
import { loadTestClock } from './test-helpers.ts';

export async function createCustomer(ctx: EngineContext, params: FormObject): Promise<CustomerObject> {
  const p = readParams(params, [
    'email',
    'name',
    'description',
    'phone',
    'metadata',
    'payment_method',
    'invoice_settings',
    'test_clock',
  ]);
  const testClock = p.string('test_clock');
  if (testClock !== undefined) await loadTestClock(ctx, testClock, 'test_clock');
  const id = newId('cus');
  const paymentMethod = p.string('payment_method');
  const pm =
    paymentMethod === undefined
      ? undefined
      : await resolvePaymentMethod(ctx, paymentMethod, id, 'payment_method');
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
    created: ctx.now(),
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
    test_clock: testClock ?? null,
  };
  await ctx.store.put(customer);
  return customer;
}

export async function updateCustomer(
  ctx: EngineContext,
  id: string,
  params: FormObject,
): Promise<CustomerObject> {
  const p = readParams(params, ['email', 'name', 'description', 'phone', 'metadata', 'invoice_settings']);
  return ctx.withLock(id, async () => {
    const customer = await ctx.loadCustomer(id);
    const settings = p.object('invoice_settings');
    let defaultPaymentMethod = customer.invoice_settings.default_payment_method;
    if (settings !== undefined) {
      const requested = readParams(settings, ['default_payment_method']).string('default_payment_method');
      if (requested === '') defaultPaymentMethod = null;
      else if (requested !== undefined) {
        const pm = await ctx.store.get(requested);
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
    await ctx.store.put(updated);
    return updated;
  });
}
