import { createMilepostClient, unwrap, type components, type operations } from '../../../sdk/src/index.ts';
import type { AppConfig } from './config.ts';

export type Quote = components['schemas']['Quote'];
type QuoteInput = operations['quotes.create']['requestBody']['content']['application/json'];
type PurchaseAnswers = operations['quotes.purchase']['responses'];

/** What the visitor typed, step by step, by field name. */
export type Answers = Readonly<Record<string, string>>;

/** The client with the company's client id alone (or none, where DEFAULT_CLIENT_ID names it). */
export const publicClient = (config: AppConfig) =>
  createMilepostClient({
    baseUrl: window.location.origin,
    clientId: config.client_id ?? undefined,
    environment: config.environment === 'mock' ? 'sandbox' : config.environment,
  });

/** London midnight of a `YYYY-MM-DD` day, in Unix seconds (cover starts at the day's first second). */
function londonMidnight(day: string): number {
  const utc = Date.parse(`${day}T00:00:00Z`);
  const inLondon = new Date(utc).toLocaleString('en-GB', {
    timeZone: 'Europe/London',
    hour: '2-digit',
    hour12: false,
  });
  // NOTE: in British Summer Time London midnight is 23:00 UTC the day before.
  return utc / 1000 - (Number(inLondon) % 24) * 3600;
}

/** A year's cover from `startOn`: its last second is the second before the anniversary. */
function termOf(startOn: string): { start_date: number; end_date: number } {
  const anniversary = `${Number(startOn.slice(0, 4)) + 1}${startOn.slice(4)}`;
  return { start_date: londonMidnight(startOn), end_date: londonMidnight(anniversary) - 1 };
}

/** `14/03/1988` → `1988-03-14`; anything else is sent as typed, for the service to name. */
function isoDay(typed: string): string {
  const match = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(typed.trim());
  if (match === null) return typed.trim();
  const [, day = '', month = '', year = ''] = match;
  return `${year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
}

/** The quote request the interface asks for, from the visitor's answers (the plan they chose, else single). */
export function quoteRequest(answers: Answers, productReference: string | null): QuoteInput {
  const a = (name: string): string => answers[name]?.trim() ?? '';
  const day = (name: string): string => isoDay(a(name));
  const driver =
    a('driver_first_names') === ''
      ? []
      : [
          {
            first_names: a('driver_first_names'),
            last_names: a('driver_last_names'),
            dob: day('driver_dob'),
            licence_issued_date: day('driver_licence_issued_date'),
            relationship: a('driver_relationship') || 'other',
            convictions: [],
            claims: [],
          },
        ];
  return {
    policy: {
      ...termOf(day('start_on')),
      // None named: the service quotes the company's quote page product.
      ...(productReference === null ? {} : { product_reference: productReference }),
      policy_year: 1,
      cover: a('cover'),
      usage: a('usage'),
      compulsory_excess: 250,
      voluntary_excess: Number(a('voluntary_excess')),
      address: { line_1: a('line_1'), city: a('city'), postcode: a('postcode').toUpperCase(), country: 'GB' },
    },
    proposer: {
      first_names: a('first_names'),
      last_names: a('last_names'),
      email: a('email'),
      dob: day('dob'),
      licence_issued_date: day('licence_issued_date'),
      ncd: Number(a('ncd')),
      convictions: [],
      claims: [],
    },
    vehicle: {
      reg: a('reg').toUpperCase(),
      make: a('make'),
      model: a('model'),
      current_value: Number(a('current_value')),
      group_rating_50: Number(a('group_rating_50')),
      manufacture_date: `${a('year')}-01-01`,
      estimated_yearly_mileage: Number(a('estimated_yearly_mileage')),
      overnight_postcode: a('postcode').toUpperCase(),
      is_import: a('is_import') === 'yes',
      modifications: [],
    },
    additional_drivers: driver,
    installment_plan: a('installment_plan') === 'monthly' ? 'monthly' : 'single',
  };
}

// NOTE: the purchase secret is the buyer's capability to buy the quote: it is kept in this tab's
// session storage (so the buying link of a referred quote works in the tab that asked for it) and
// never put in a URL, where history, logs and referrers would keep it.
const SECRET_KEY = 'milepost.quote-secret.';

/** The purchase secret `POST /quotes` answered this tab with for `quoteReference`, if any. */
export function secretOf(quoteReference: string): string | undefined {
  try {
    return window.sessionStorage.getItem(SECRET_KEY + quoteReference) ?? undefined;
  } catch {
    return undefined;
  }
}

function rememberSecret(quoteReference: string, secret: string): void {
  try {
    window.sessionStorage.setItem(SECRET_KEY + quoteReference, secret);
  } catch {
    // Storage refused (a private window's quota): the quote in memory still carries its secret.
  }
}

/** POST /quotes with the client id alone: the quote as the insurer shows it to customers, with its secret. */
export async function askForQuote(config: AppConfig, input: QuoteInput): Promise<Quote> {
  const quote = await unwrap(publicClient(config).POST('/quotes', { body: input }));
  if (quote.purchase_secret !== undefined) rememberSecret(quote.quote_reference, quote.purchase_secret);
  return quote;
}

export type Purchase =
  PurchaseAnswers[201]['content']['application/json'] | PurchaseAnswers[202]['content']['application/json'];

/** POST /quotes/:ref/purchase with the quote's secret: bound, or waiting for the card's 3-D Secure. */
export const purchase = (
  config: AppConfig,
  quoteReference: string,
  secret: string | undefined,
  paymentMethodId: string,
): Promise<Purchase> =>
  unwrap(
    publicClient(config).POST('/quotes/{quote_reference}/purchase', {
      params: {
        path: { quote_reference: quoteReference },
        header: secret === undefined ? {} : { purchase_secret: secret },
      },
      body: { payment_method_id: paymentMethodId },
    }),
  );

/**
 * The customer's 3-D Secure: Stripe.js in production; in the built-in sandbox, confirming the intent
 * again with its client secret and the same card, which the sandbox counts as the customer authenticating.
 */
export async function authenticate(
  config: AppConfig,
  action: Extract<Purchase, { status: 'requires_action' }>,
) {
  const key = config.stripe_publishable_key;
  if (config.environment === 'production' && key !== null) {
    const { loadStripe } = await import('@stripe/stripe-js/pure');
    const stripe = await loadStripe(key);
    const result = await stripe?.handleNextAction({ clientSecret: action.client_secret });
    if (result?.error !== undefined)
      throw new Error(result.error.message ?? 'Your bank did not confirm the payment.');
    return;
  }
  const form = new URLSearchParams({ client_secret: action.client_secret });
  if (action.payment_method !== null) form.set('payment_method', action.payment_method);
  const response = await fetch(
    `/sandbox/stripe/v1/payment_intents/${encodeURIComponent(action.payment_intent)}/confirm`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    },
  );
  if (!response.ok) throw new Error('Your bank did not confirm the payment. Please try again.');
}
