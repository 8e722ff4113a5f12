import type { StripeCardElement } from '@stripe/stripe-js';
import { CardProblem } from './stripe-sandbox.ts';

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
