import type { PaymentIntent } from '../../integrations/payments/index.ts';
import type { Tenant } from '../companies/index.ts';
import { CURRENCY, type PaymentContext } from './payment-context.ts';
import { minimumChargeMinorUnits } from './rules/index.ts';

/** The first payment of a quote bought in the web app: its customer and intent at the processor. */
export interface QuotePaymentOpening {
  readonly quoteId: string;
  readonly amountPence: number;
  readonly productReference: string;
  readonly email: string;
  readonly name: string;
}

/**
 * The processor's side of buying a quote (`POST /quotes/:quote_reference/purchase`). Every write's
 * idempotency key derives from the quote's id, so one quote makes one customer and one intent however
 * often (or concurrently) it is bought, and is refunded at most once. No policy exists yet: the payment
 * row is written when the policy binds the intent (`recordBinding`), in the policy's transaction.
 */
export function createQuotePayments(ctx: PaymentContext) {
  return {
    /** The smallest first payment the processor takes by card, in pence (30p). */
    minimumPence: minimumChargeMinorUnits(CURRENCY),

    /** Makes (or, with the same keys, finds again) the quote's customer and its on-session intent. */
    async open(
      tenant: Tenant,
      input: QuotePaymentOpening,
    ): Promise<{ intentId: string; customerId: string }> {
      const gateway = await ctx.gateway(tenant);
      const customer = await gateway.createCustomer({
        email: input.email,
        name: input.name,
        metadata: { milepost_quote: input.quoteId },
        idempotencyKey: `quote:${input.quoteId}:customer`,
      });
      const intent = await gateway.createPaymentIntent({
        amountPence: input.amountPence,
        currency: CURRENCY,
        customerId: customer.id,
        metadata: {
          milepost_quote: input.quoteId,
          product_reference: input.productReference,
          company: tenant.companyId,
          environment: tenant.environment,
        },
        idempotencyKey: `quote:${input.quoteId}:intent`,
      });
      return { intentId: intent.id, customerId: customer.id };
    },

    /** The intent as the processor has it now. */
    intent: async (tenant: Tenant, intentId: string): Promise<PaymentIntent> =>
      (await ctx.gateway(tenant)).retrievePaymentIntent(intentId),

    /**
     * Confirms the intent with the customer's card on session: `succeeded`, or `requires_action` for
     * 3-D Secure; a declined card throws `PAYMENT_DECLINED` (402). One key per quote and card: the same
     * card sent again is answered as it was, another card is a new attempt.
     */
    confirm: async (tenant: Tenant, quoteId: string, intentId: string, paymentMethodId: string) =>
      (await ctx.gateway(tenant)).confirmPaymentIntent({
        paymentIntentId: intentId,
        paymentMethodId,
        idempotencyKey: `quote:${quoteId}:confirm:${paymentMethodId}`,
      }),

    /** Whether a policy's binding recorded the intent as its payment (`POST /policys` with it). */
    async boundWith(tenant: Tenant, intentId: string): Promise<boolean> {
      const row = await ctx.db
        .selectFrom('payments')
        .select('id')
        .where('company_id', '=', tenant.companyId)
        .where('environment', '=', tenant.environment)
        .where('provider_payment_id', '=', intentId)
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Cancels the quote's intent, never paid, once its quote no longer binds: its client secret pays
     * no more. `VALIDATION_FAILED` when it was paid meanwhile (then it is refunded instead).
     */
    cancel: async (tenant: Tenant, quoteId: string, intentId: string): Promise<PaymentIntent> =>
      (await ctx.gateway(tenant)).cancelPaymentIntent({
        paymentIntentId: intentId,
        idempotencyKey: `quote:${quoteId}:cancel`,
      }),

    /** Gives back the whole payment of a quote that could not be bound after it was paid; once per quote. */
    async refund(tenant: Tenant, quoteId: string, intentId: string): Promise<void> {
      await (
        await ctx.gateway(tenant)
      ).refund({
        paymentIntentId: intentId,
        metadata: { milepost_quote: quoteId, reason: 'quote_not_bound' },
        idempotencyKey: `quote:${quoteId}:refund`,
      });
    },
  };
}

export type QuotePayments = ReturnType<typeof createQuotePayments>;
