import { TEST_CARDS, type TestCard } from './objects.ts';

/** Card details as a browser sends them to `POST /v1/payment_methods` (`card[number]`, …), still text. */
export interface CardDetailsInput {
  readonly number: string;
  readonly expMonth: string;
  readonly expYear: string;
  readonly cvc: string | undefined;
}

/** What the sandbox keeps of a card: never the number or the CVC. */
export interface CheckedCard {
  readonly testCard: TestCard;
  readonly expMonth: number;
  readonly expYear: number;
  readonly cvcGiven: boolean;
}

/** A refusal in Stripe's words: a 402 `card_error` with `code` and the parameter at fault. */
export interface CardRefusal {
  readonly code: string;
  readonly declineCode?: string;
  readonly message: string;
  readonly param: string;
}

export type CardCheck =
  { readonly ok: true; readonly card: CheckedCard } | ({ readonly ok: false } & CardRefusal);

/** The Luhn (mod 10) checksum every card number carries in its last digit. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

const refuse = (code: string, message: string, param: string, declineCode?: string): CardCheck => ({
  ok: false,
  code,
  message,
  param,
  ...(declineCode === undefined ? {} : { declineCode }),
});

/**
 * Validates card details as Stripe does when a payment method is created (number length and Luhn
 * checksum, an expiry month 1–12 not in the past in UTC, a CVC of 3–4 digits), and finds the test
 * card the number names: in test mode Stripe accepts only its documented test numbers.
 */
export function checkCardDetails(input: CardDetailsInput, now: Date): CardCheck {
  // Spaces and dashes as people type them; anything else makes the number invalid.
  const digits = input.number.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits))
    return refuse('invalid_number', 'Your card number is invalid.', 'card[number]');
  if (!passesLuhn(digits))
    return refuse('incorrect_number', 'Your card number is incorrect.', 'card[number]');

  if (!/^\d{1,2}$/.test(input.expMonth) || Number(input.expMonth) < 1 || Number(input.expMonth) > 12)
    return refuse('invalid_expiry_month', "Your card's expiration month is invalid.", 'card[exp_month]');
  if (!/^(\d{2}|\d{4})$/.test(input.expYear))
    return refuse('invalid_expiry_year', "Your card's expiration year is invalid.", 'card[exp_year]');
  const expMonth = Number(input.expMonth);
  // NOTE: Stripe takes two-digit years as this century's.
  const expYear = input.expYear.length === 2 ? 2000 + Number(input.expYear) : Number(input.expYear);
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth() + 1;
  // A card is good until the end of its expiry month.
  if (expYear < year || expYear > year + 50)
    return refuse('invalid_expiry_year', "Your card's expiration year is invalid.", 'card[exp_year]');
  if (expYear === year && expMonth < month)
    return refuse('invalid_expiry_month', "Your card's expiration month is invalid.", 'card[exp_month]');

  if (input.cvc !== undefined && !/^\d{3,4}$/.test(input.cvc))
    return refuse('invalid_cvc', "Your card's security code is invalid.", 'card[cvc]');

  const testCard = Object.values(TEST_CARDS).find((card) => card.number === digits);
  if (testCard === undefined) {
    return refuse(
      'card_declined',
      'Your card was declined. Your request was in test mode, but used a non test (live) card. For a list of valid test cards, visit: https://stripe.com/docs/testing.',
      'card[number]',
      'test_mode_live_card',
    );
  }
  return { ok: true, card: { testCard, expMonth, expYear, cvcGiven: input.cvc !== undefined } };
}
