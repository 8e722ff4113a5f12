import type Stripe from 'stripe';
import { AppError } from '../../platform/errors.ts';
import {
  IDEMPOTENCY_METADATA_KEY,
  type CollectDirectDebitInput,
  type CollectionResult,
  type PaymentGateway,
  type SetupIntentStatus,
} from './gateway.ts';
import { toMandate, toSetupIntent } from './stripe-objects.ts';
import { call, idOf, isAmbiguous, loadStripe, toAppError, type Client } from './stripe-sdk.ts';

/** 400 codes that refuse a collection for the state of its mandate or payment method: nothing was submitted. */
const REFUSALS = new Set([
  'payment_intent_mandate_invalid',
  'payment_method_unexpected_state',
  'payment_intent_unexpected_state',
]);

/** Bacs Direct Debit is in pounds sterling only. */
const BACS_CURRENCY = 'gbp';

/** The port's Bacs Direct Debit calls over the Stripe SDK: mandates through SetupIntents, collections as PaymentIntents. */
export function directDebitCalls(
  sdk: Client,
): Pick<
  PaymentGateway,
  'createBacsSetupIntent' | 'retrieveSetupIntent' | 'retrieveMandate' | 'collectDirectDebit'
> {
  return {
    createBacsSetupIntent: (input) =>
      call('create setup intent', async () => {
        const si = await sdk().setupIntents.create(
          {
            customer: input.customerId,
            allowed_payment_method_types: ['bacs_debit'],
            // NOTE: the mandate is for later collections with the payer absent.
            usage: 'off_session',
            metadata: { ...input.metadata },
          },
          { idempotencyKey: input.idempotencyKey },
        );
        if (si.client_secret === null)
          throw new AppError(
            'UPSTREAM_UNAVAILABLE',
            `setup intent ${si.id} came back without a client secret`,
          );
        return {
          id: si.id,
          clientSecret: si.client_secret,
          status: si.status as SetupIntentStatus,
          customerId: input.customerId,
        };
      }),

    retrieveSetupIntent: (setupIntentId) =>
      call('retrieve setup intent', async () =>
        toSetupIntent(await sdk().setupIntents.retrieve(setupIntentId)),
      ),

    retrieveMandate: (mandateId) =>
      call('retrieve mandate', async () => toMandate(await sdk().mandates.retrieve(mandateId))),

    collectDirectDebit: (input) => collectDirectDebit(sdk, input),
  };
}

/** See `PaymentGateway.collectDirectDebit`: Bacs outcomes and ambiguous failures are values. */
async function collectDirectDebit(sdk: Client, input: CollectDirectDebitInput): Promise<CollectionResult> {
  let pi: Stripe.PaymentIntent;
  try {
    pi = await sdk().paymentIntents.create(
      {
        amount: input.amountPence,
        currency: BACS_CURRENCY,
        customer: input.customerId,
        payment_method: input.paymentMethodId,
        mandate: input.mandateId,
        allowed_payment_method_types: ['bacs_debit'],
        confirm: true,
        off_session: true,
        // NOTE: the key in metadata lets `findPaymentIntentByKey` find this intent after an ambiguous failure.
        metadata: { ...input.metadata, [IDEMPOTENCY_METADATA_KEY]: input.idempotencyKey },
      },
      { idempotencyKey: input.idempotencyKey },
    );
  } catch (error) {
    const errors = loadStripe().errors;
    if (error instanceof errors.StripeError && isAmbiguous(error)) {
      return {
        outcome: 'unknown',
        message: `payment processor: collection outcome unknown: ${error.message}`,
      };
    }
    // NOTE: a mandate that is no longer active, or a payment method that cannot be debited, is refused
    // as a 402 (like a card decline) or a 400 naming the state; either way nothing was submitted.
    if (
      error instanceof errors.StripeCardError ||
      (error instanceof errors.StripeInvalidRequestError && REFUSALS.has(error.code ?? ''))
    ) {
      const intent = error.payment_intent;
      return {
        outcome: 'failed',
        ...(intent === undefined ? {} : { intentId: intent.id }),
        code: error.code ?? 'payment_method_unexpected_state',
        message: error.message,
      };
    }
    throw toAppError(error, 'collect direct debit');
  }
  return collectionResultOf(pi);
}

function collectionResultOf(pi: Stripe.PaymentIntent): CollectionResult {
  switch (pi.status) {
    case 'processing':
      return { outcome: 'processing', intentId: pi.id };
    case 'succeeded':
      return { outcome: 'succeeded', intentId: pi.id, chargeId: idOf(pi.latest_charge) };
    case 'requires_payment_method':
      return {
        outcome: 'failed',
        intentId: pi.id,
        code: pi.last_payment_error?.code ?? 'generic_could_not_process',
        message: pi.last_payment_error?.message ?? 'The Direct Debit could not be submitted.',
      };
    default:
      return { outcome: 'unknown', intentId: pi.id, message: `payment intent ${pi.id} is ${pi.status}` };
  }
}
