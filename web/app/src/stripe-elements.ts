import type { StripeCardElement } from '@stripe/stripe-js';
import { BankProblem, CardProblem, type BankDetails } from './stripe-sandbox.ts';

/** Stripe's card field, mounted in the page; `create` turns what was typed into a payment method. */
export interface MountedStripeCard {
  create(): Promise<string>;
  destroy(): void;
}

/**
 * Stripe Elements for production: Stripe.js is loaded from js.stripe.com only here (a separate chunk,
 * so the sandbox's bundle does not carry it), and card details go from Stripe's frame to Stripe.
 */
export async function mountStripeCard(
  publishableKey: string,
  into: HTMLElement,
  onProblem: (sentence: string | undefined) => void,
): Promise<MountedStripeCard> {
  const { loadStripe } = await import('@stripe/stripe-js/pure');
  const stripe = await loadStripe(publishableKey);
  if (stripe === null) throw new CardProblem('The card form could not be loaded. Please reload the page.');
  const card: StripeCardElement = stripe.elements({ locale: 'en-GB' }).create('card', {
    style: { base: { fontSize: '16px' } },
  });
  card.on('change', (event) => {
    onProblem(event.error?.message);
  });
  card.mount(into);
  return {
    async create() {
      const result = await stripe.createPaymentMethod({ type: 'card', card });
      if (result.error !== undefined)
        throw new CardProblem(result.error.message ?? 'The card was declined. Please try another card.');
      return result.paymentMethod.id;
    },
    destroy() {
      card.destroy();
    },
  };
}

/**
 * Confirms a Bacs Direct Debit SetupIntent with Stripe.js in production (`confirmBacsDebitSetup`): the
 * bank details go from this page to Stripe only. The form, the Guarantee and the confirmation step are
 * this app's own (Stripe's requirements for a self-hosted Bacs mandate form). Answers the payment method's id.
 */
export async function confirmStripeBacsSetup(
  publishableKey: string,
  clientSecret: string,
  details: BankDetails,
): Promise<string> {
  const { loadStripe } = await import('@stripe/stripe-js/pure');
  const stripe = await loadStripe(publishableKey);
  if (stripe === null) throw new BankProblem('The Direct Debit could not be set up. Please reload the page.');
  const result = await stripe.confirmBacsDebitSetup(clientSecret, {
    payment_method: {
      bacs_debit: { sort_code: details.sortCode, account_number: details.accountNumber },
      billing_details: {
        name: details.holderName,
        email: details.email,
        address: {
          line1: details.address.line1,
          ...(details.address.line2 === '' ? {} : { line2: details.address.line2 }),
          city: details.address.city,
          postal_code: details.address.postcode,
          country: 'GB',
        },
      },
    },
  });
  if (result.error !== undefined)
    throw new BankProblem(result.error.message ?? 'Your bank details could not be used. Please check them.');
  const method = result.setupIntent.payment_method;
  const id = typeof method === 'string' ? method : method?.id;
  if (id === undefined) throw new BankProblem('The Direct Debit could not be set up. Please try again.');
  return id;
}
