/** A card as typed into the sandbox's test-card form, already read into numbers. */
export interface TypedCard {
  readonly number: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly cvc: string;
}

/** Which field of the form a card problem is about, as Stripe's `param` names it. */
export type CardField = 'number' | 'expiry' | 'cvc';

/** A card the processor refused, told as a sentence for the person typing it. */
export class CardProblem extends Error {
  readonly field: CardField | undefined;
  constructor(message: string, field?: CardField) {
    super(message);
    this.name = 'CardProblem';
    this.field = field;
  }
}

/** The built-in sandbox's test cards (docs.stripe.com/testing), as the form's hint lists them. */
export const SANDBOX_TEST_CARDS: ReadonlyArray<{ readonly number: string; readonly outcome: string }> = [
  { number: '4242 4242 4242 4242', outcome: 'pays' },
  { number: '5555 5555 5555 4444', outcome: 'pays (Mastercard)' },
  { number: '4000 0000 0000 0002', outcome: 'is declined' },
  { number: '4000 0000 0000 9995', outcome: 'is declined for insufficient funds' },
];

const FIELD_OF_PARAM: Readonly<Record<string, CardField>> = {
  'card[number]': 'number',
  'card[exp_month]': 'expiry',
  'card[exp_year]': 'expiry',
  'card[cvc]': 'cvc',
};

/** Stripe's card error codes in this app's words. */
const SENTENCES: Readonly<Record<string, string>> = {
  invalid_number: 'That card number is not valid. Please check it.',
  incorrect_number: 'That card number is not right. Please check it.',
  invalid_expiry_month: 'The expiry date is not valid, or the card has expired.',
  invalid_expiry_year: 'The expiry date is not valid, or the card has expired.',
  invalid_cvc: 'The security code is not valid. It is the 3 or 4 digits on the card.',
  test_mode_live_card:
    'This is a test environment: a real card cannot be used. Please use one of the test cards.',
};

interface StripeErrorBody {
  readonly error?: { readonly code?: string; readonly decline_code?: string; readonly param?: string };
}

/**
 * Creates the card's payment method in the built-in Stripe sandbox as Stripe.js would: a form-encoded
 * `POST /v1/payment_methods` carrying the publishable key as `key`. The number goes only to the
 * sandbox, never to the service's API. Answers the payment method's id.
 */
export async function createSandboxPaymentMethod(
  card: TypedCard,
  publishableKey: string | null,
): Promise<string> {
  const form = new URLSearchParams({ type: 'card' });
  form.set('card[number]', card.number);
  form.set('card[exp_month]', String(card.expMonth));
  form.set('card[exp_year]', String(card.expYear));
  form.set('card[cvc]', card.cvc);
  // The sandbox takes any test publishable key, or none (a deployment's live key is not for it).
  if (publishableKey?.startsWith('pk_test_') === true) form.set('key', publishableKey);
  let response: Response;
  try {
    response = await fetch('/sandbox/stripe/v1/payment_methods', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
  } catch {
    throw new CardProblem('The card could not be checked: there is no connection. Please try again.');
  }
  const body = (await response.json().catch(() => ({}))) as StripeErrorBody & { readonly id?: string };
  if (response.ok && typeof body.id === 'string') return body.id;
  const code = body.error?.decline_code ?? body.error?.code ?? '';
  const field = FIELD_OF_PARAM[body.error?.param ?? ''];
  throw new CardProblem(
    SENTENCES[code] ??
      (response.status === 402
        ? 'The card was declined. Please try another card.'
        : 'The card could not be saved. Please try again later.'),
    field,
  );
}
