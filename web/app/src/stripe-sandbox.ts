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

/** A UK bank account and its holder, as typed into the Direct Debit form (already checked and normalised). */
export interface BankDetails {
  /** Six digits, no dashes. */
  readonly sortCode: string;
  /** Eight digits. */
  readonly accountNumber: string;
  readonly holderName: string;
  readonly email: string;
  readonly address: {
    readonly line1: string;
    readonly line2: string;
    readonly city: string;
    readonly postcode: string;
  };
}

/** Which field of the Direct Debit form a bank problem is about. */
export type BankField = 'sortCode' | 'accountNumber';

/** A bank account the processor refused, told as a sentence for the person typing it. */
export class BankProblem extends Error {
  readonly field: BankField | undefined;
  constructor(message: string, field?: BankField) {
    super(message);
    this.name = 'BankProblem';
    this.field = field;
  }
}

/**
 * Stripe's published Bacs Direct Debit test accounts (docs.stripe.com/payments/bacs-debit, "Test your
 * integration"), all with the sort code 10-88-00, as the form's hint lists them.
 */
export const SANDBOX_TEST_BANK_ACCOUNTS: ReadonlyArray<{
  readonly accountNumber: string;
  readonly outcome: string;
}> = [
  { accountNumber: '00012345', outcome: 'sets up a Direct Debit whose payments succeed' },
  { accountNumber: '22222227', outcome: 'sets one up whose payments fail for insufficient funds' },
  { accountNumber: '00044444', outcome: 'is refused as an invalid account' },
];
export const SANDBOX_TEST_SORT_CODE = '10-88-00';

const BANK_FIELD_OF_PARAM: Readonly<Record<string, BankField>> = {
  'payment_method_data[bacs_debit][sort_code]': 'sortCode',
  'payment_method_data[bacs_debit][account_number]': 'accountNumber',
};

/** Stripe's codes for a refused bank account in this app's words. */
const BANK_SENTENCES: Readonly<Record<string, string>> = {
  invalid_bank_account:
    'That account could not be found with this sort code and account number. Please check them.',
  bank_account_declined: 'Your bank refused this Direct Debit. Please use another account, or pay by card.',
  bank_account_unusable:
    'This account cannot pay by Direct Debit. Please use another account, or pay by card.',
  account_number_invalid: 'That account number is not valid. Please check it.',
  routing_number_invalid: 'That sort code is not valid. Please check it.',
  test_mode_live_account:
    'This is a test environment: a real account cannot be used. Please use one of the test accounts.',
};

/** The form Stripe.js sends to confirm a Bacs SetupIntent: the bank details, holder and mandate acceptance. */
function bacsConfirmForm(clientSecret: string, details: BankDetails, publishableKey: string | null) {
  const form = new URLSearchParams({ client_secret: clientSecret });
  form.set('payment_method_data[type]', 'bacs_debit');
  form.set('payment_method_data[bacs_debit][sort_code]', details.sortCode);
  form.set('payment_method_data[bacs_debit][account_number]', details.accountNumber);
  form.set('payment_method_data[billing_details][name]', details.holderName);
  form.set('payment_method_data[billing_details][email]', details.email);
  form.set('payment_method_data[billing_details][address][line1]', details.address.line1);
  if (details.address.line2 !== '')
    form.set('payment_method_data[billing_details][address][line2]', details.address.line2);
  form.set('payment_method_data[billing_details][address][city]', details.address.city);
  form.set('payment_method_data[billing_details][address][postal_code]', details.address.postcode);
  form.set('payment_method_data[billing_details][address][country]', 'GB');
  // NOTE: the payer accepted the mandate in this page just now; Stripe.js says so the same way.
  form.set('mandate_data[customer_acceptance][type]', 'online');
  form.set('mandate_data[customer_acceptance][online][infer_from_client]', 'true');
  if (publishableKey?.startsWith('pk_test_') === true) form.set('key', publishableKey);
  return form;
}

/**
 * Confirms a Bacs Direct Debit SetupIntent in the built-in sandbox as Stripe.js would
 * (`POST /v1/setup_intents/:id/confirm` with the publishable key and the client secret): the bank
 * details go only to the sandbox, never to the service's API. Answers the new payment method's id.
 */
export async function confirmSandboxBacsSetup(
  setupIntentId: string,
  clientSecret: string,
  details: BankDetails,
  publishableKey: string | null,
): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`/sandbox/stripe/v1/setup_intents/${encodeURIComponent(setupIntentId)}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: bacsConfirmForm(clientSecret, details, publishableKey),
    });
  } catch {
    throw new BankProblem('The account could not be checked: there is no connection. Please try again.');
  }
  const body = (await response.json().catch(() => ({}))) as {
    readonly error?: { readonly code?: string; readonly param?: string; readonly message?: string };
    readonly status?: string;
    readonly payment_method?: string | { readonly id?: string } | null;
  };
  const method = typeof body.payment_method === 'string' ? body.payment_method : body.payment_method?.id;
  if (response.ok && body.status === 'succeeded' && typeof method === 'string') return method;
  const field = BANK_FIELD_OF_PARAM[body.error?.param ?? ''];
  const known = BANK_SENTENCES[body.error?.code ?? ''];
  // Stripe writes its bank errors for the payer (as Stripe.js shows them); a server failure is ours to word.
  const told = response.status < 500 ? body.error?.message : undefined;
  throw new BankProblem(
    known ?? told ?? 'The Direct Debit could not be set up. Please try again later.',
    field,
  );
}
