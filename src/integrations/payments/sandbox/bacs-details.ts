import {
  bacsBehaviourOfLast4,
  bacsPaymentMethod,
  BACS_TEST_ACCOUNTS,
  BACS_TEST_SORT_CODE,
  type BacsPaymentMethodObject,
  type BillingDetails,
  type MandateObject,
} from './bacs-objects.ts';
import { invalidRequest } from './errors.ts';
import { mergeMetadata, readParams, type FormObject } from './form.ts';

/**
 * A bank account as Stripe reads `bacs_debit[sort_code]` and `bacs_debit[account_number]`, with the
 * billing details the Bacs scheme's mandate needs (name, email, address). `prefix` is where the fields
 * were (`payment_method_data` when a SetupIntent is confirmed with them), for the error's `param`.
 */
export function readBacsPaymentMethod(
  params: FormObject,
  prefix: string,
  customer: string | null,
  created: number,
): BacsPaymentMethodObject {
  // `bacs_debit[sort_code]` under `payment_method_data` is `payment_method_data[bacs_debit][sort_code]`.
  const name = (field: string): string => {
    if (prefix === '') return field;
    const [head = '', ...rest] = field.split('[');
    return `${prefix}[${head}]${rest.map((r) => `[${r}`).join('')}`;
  };
  const p = readParams(params, [
    'type',
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
  const details = readParams(p.object('bacs_debit') ?? {}, ['sort_code', 'account_number']);
  const sortCode = (details.string('sort_code') ?? '').replace(/[\s-]/g, '');
  const accountNumber = (details.string('account_number') ?? '').replace(/[\s-]/g, '');
  if (!/^\d{6}$/.test(sortCode))
    throw invalidRequest('The sort code must be 6 digits.', {
      param: name('bacs_debit[sort_code]'),
      code: sortCode === '' ? 'parameter_missing' : 'invalid_sort_code',
    });
  if (!/^\d{8}$/.test(accountNumber))
    throw invalidRequest('The account number must be 8 digits.', {
      param: name('bacs_debit[account_number]'),
      code: accountNumber === '' ? 'parameter_missing' : 'account_number_invalid',
    });
  if (sortCode !== BACS_TEST_SORT_CODE || BACS_TEST_ACCOUNTS[accountNumber] === undefined) {
    throw invalidRequest(
      `This is a test environment: use sort code ${BACS_TEST_SORT_CODE} with one of Stripe's Bacs test account numbers.`,
      { param: name('bacs_debit[account_number]'), code: 'payment_method_invalid_parameter_testmode' },
    );
  }
  if (bacsBehaviourOfLast4(accountNumber.slice(-4)).kind === 'invalid_account')
    throw invalidRequest('The bank account number is invalid.', {
      param: name('bacs_debit[account_number]'),
      code: 'account_number_invalid',
    });
  return bacsPaymentMethod(
    {
      sortCode,
      accountNumber,
      billing: readBilling(p.object('billing_details'), name),
      customer,
      metadata: mergeMetadata({}, p.metadata()),
    },
    created,
  );
}

/** Bacs mandates need the payer's name, email and address (line 1 and postcode at least). */
function readBilling(params: FormObject | undefined, name: (field: string) => string): BillingDetails {
  const p = readParams(params ?? {}, ['name', 'email', 'phone', 'address']);
  const a = readParams(p.object('address') ?? {}, [
    'line1',
    'line2',
    'city',
    'postal_code',
    'country',
    'state',
  ]);
  const required = (value: string | undefined, field: string): string => {
    if (value === undefined || value.trim() === '')
      throw invalidRequest(
        `Missing required param: ${name(`billing_details[${field}]`)}. Bacs Direct Debit needs it.`,
        {
          param: name(`billing_details[${field}]`),
          code: 'parameter_missing',
        },
      );
    return value.trim();
  };
  const email = required(p.string('email'), 'email');
  if (!/^[^\s@]+@[^\s@]+$/.test(email))
    throw invalidRequest('Invalid email address.', {
      param: name('billing_details[email]'),
      code: 'email_invalid',
    });
  return {
    address: {
      city: a.string('city') ?? null,
      country: a.string('country') ?? null,
      line1: required(a.string('line1'), 'address][line1'),
      line2: a.string('line2') ?? null,
      postal_code: required(a.string('postal_code'), 'address][postal_code'),
      state: a.string('state') ?? null,
    },
    email,
    name: required(p.string('name'), 'name'),
    phone: p.string('phone') ?? null,
    tax_id: null,
  };
}

/**
 * `mandate_data[customer_acceptance]`: `type=online` with `online[ip_address]` and
 * `online[user_agent]`, or `online[infer_from_client]=true` as Stripe.js sends from a browser.
 */
export function readCustomerAcceptance(
  params: FormObject | undefined,
  acceptedAt: number,
): MandateObject['customer_acceptance'] {
  const mandate = readParams(params ?? {}, ['customer_acceptance']);
  const acceptance = mandate.object('customer_acceptance');
  if (acceptance === undefined)
    throw invalidRequest(
      'Bacs Direct Debit needs the payer to accept the mandate: send mandate_data[customer_acceptance].',
      { param: 'mandate_data[customer_acceptance]', code: 'parameter_missing' },
    );
  const a = readParams(acceptance, ['type', 'online', 'offline', 'accepted_at']);
  const type = a.requiredString('type');
  if (type === 'offline') return { accepted_at: acceptedAt, offline: {}, type: 'offline' };
  if (type !== 'online')
    throw invalidRequest('Invalid mandate_data[customer_acceptance][type]: must be one of online, offline', {
      param: 'mandate_data[customer_acceptance][type]',
    });
  const online = readParams(a.object('online') ?? {}, ['ip_address', 'user_agent', 'infer_from_client']);
  const inferred = online.boolean('infer_from_client') === true;
  const ip = online.string('ip_address');
  const agent = online.string('user_agent');
  if (!inferred && (ip === undefined || agent === undefined))
    throw invalidRequest(
      'mandate_data[customer_acceptance][online] needs ip_address and user_agent, or infer_from_client=true.',
      { param: 'mandate_data[customer_acceptance][online]', code: 'parameter_missing' },
    );
  return {
    accepted_at: acceptedAt,
    online: { ip_address: ip ?? null, user_agent: agent ?? null },
    type: 'online',
  };
}
