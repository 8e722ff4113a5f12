import type { Clock } from '../../platform/clock.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { fromPence, poundsText } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { addressThrottleOf, createThrottles } from '../auth/index.ts';
import type { Tenant } from '../companies/index.ts';
import type { QuotePayments } from '../payments/index.ts';
import type { PolicyInput, PolicyResponse } from '../policies/index.ts';
import { firstPaymentPence } from '../policies/rules/index.ts';
import {
  findQuotePurchase,
  insertQuotePurchase,
  setQuotePurchaseStatus,
} from './quote-purchase-repository.ts';
import { findQuote, type QuoteRecord } from './quote-repository.ts';
import { secretMatches } from './quote-secrets.ts';
import {
  bindability,
  boundStartSeconds,
  isPseudonymised,
  notBindableMessage,
  quotePricing,
} from './rules/index.ts';

/**
 * How the buyer signs in after the purchase: a new account with the temporary password its welcome
 * email carries, or an existing one with its own password.
 * NOTE: never a session that sets the password: anyone may buy with another's email, and an account
 * whose password the buyer chose without reading the mailbox would be joined by that person's later
 * policies (one account per email), handing them to the buyer.
 */
export type PurchaseSignIn =
  | { readonly type: 'TEMPORARY_PASSWORD_SENT'; readonly username: string }
  | { readonly type: 'SIGN_IN'; readonly username: string };

export type PurchaseOutcome =
  | {
      readonly status: 'bound';
      readonly policyReference: string;
      readonly userReference: string;
      readonly amountPence: number;
      readonly signIn: PurchaseSignIn;
    }
  | {
      readonly status: 'requires_action';
      readonly paymentIntentId: string;
      readonly clientSecret: string;
      readonly paymentMethodId: string | null;
      readonly amountPence: number;
    };

/** What buying a quote uses of other modules' services (the container passes them whole). */
export interface PurchaseServiceDeps {
  readonly db: Executor;
  readonly clock: Clock;
  readonly payments: { readonly quotePayments: QuotePayments };
  /** POST /policys: the binding service, with every rule of binding a quote and checking a payment. */
  readonly policies: {
    submit(tenant: Tenant, input: PolicyInput): Promise<{ policy: PolicyResponse }>;
  };
  readonly accounts: { findCredentials(db: Executor, tenant: Tenant, login: string): Promise<unknown> };
}

export interface PurchaseRequest {
  readonly paymentMethodId: string;
  readonly installmentPlan?: 'single' | 'monthly' | undefined;
  /**
   * The quote's purchase secret, which a buyer with the client id alone must present (`public`); the
   * company's integration, with its client secret, buys without it.
   */
  readonly caller:
    { readonly kind: 'client' } | { readonly kind: 'public'; readonly secret?: string | undefined };
}

// Only these refusals of the binding service are final for this quote: the money then goes back.
// Anything else (the database or the processor unavailable) leaves the paid intent for a retry.
const FINAL_REFUSALS = new Set([
  'QUOTE_NOT_BINDABLE',
  'QUOTE_PRICING_MISMATCH',
  'QUOTE_RISK_MISMATCH',
  'VALIDATION_FAILED',
  'POLICY_TERM_ENDED',
]);

const field = (path: string, message: string) => ({ errors: [{ path, message }] });

/** The quote, bindable now for new business, with the amount due at binding; 404, 409 or 422 otherwise. */
async function purchasable(
  db: Executor,
  tenant: Tenant,
  reference: string,
  request: PurchaseRequest,
  now: Date,
  payments: Pick<QuotePayments, 'minimumPence'>,
) {
  const quote = await findQuote(db, tenant, reference);
  // NOTE: without its secret a quote is answered as one that does not exist: the reference alone
  // (seen over a shoulder, or guessed) buys nothing and says nothing.
  const { caller } = request;
  if (caller.kind === 'public' && !secretMatches(quote?.purchaseSecretHash ?? null, caller.secret))
    throw notFound('quote');
  if (quote === undefined || isPseudonymised(quote.input)) throw notFound('quote');
  const bindable = bindability(quote, now, undefined);
  if (!bindable.ok) throw new AppError('QUOTE_NOT_BINDABLE', notBindableMessage(bindable.reason));
  const plan = quote.pricing.subscription_installments > 0 ? 'monthly' : 'single';
  if (request.installmentPlan !== undefined && request.installmentPlan !== plan)
    throw new AppError(
      'VALIDATION_FAILED',
      `The quote is priced for the ${plan} plan: ask for a new quote to pay another way`,
      field('/body/installment_plan', `must be the quote's plan, ${plan}`),
    );
  // NOTE: a monthly plan's first installment is paid here, with any upfront premium and deposit fee;
  // the policy records it as paid at binding and the statement run bills the installments after it.
  const amountPence = firstPaymentPence(quote.pricing, plan === 'monthly' ? 1 : 0);
  if (amountPence <= 0)
    throw new AppError(
      'VALIDATION_FAILED',
      'Nothing is due at binding on this quote: it cannot be bought with a card here',
      field('/body/payment_method_id', 'the quote asks for no first payment'),
    );
  // The processor takes no card payment below its minimum: refused here, before any customer or
  // intent is made at the processor.
  const { minimumPence } = payments;
  if (amountPence < minimumPence)
    throw new AppError(
      'VALIDATION_FAILED',
      `The first payment, £${poundsText(amountPence)}, is below the smallest card payment, £${poundsText(minimumPence)}: this quote cannot be bought with a card here`,
      field('/body/payment_method_id', 'the first payment is below the smallest card payment'),
    );
  return { quote: quote as QuoteRecord & { input: PolicyInput }, amountPence };
}

/**
 * The policy that binds the paid `quote` at `now`, as POST /policys takes it: the quote's input and
 * pricing, the intent as its payment block.
 */
function bindingInput(
  quote: QuoteRecord & { input: PolicyInput },
  purchase: { intentId: string; customerId: string; amountPence: number },
  paymentMethodId: string | null,
  now: Date,
): PolicyInput {
  const { installment_plan: _plan, ...policy } = quote.input as PolicyInput & {
    installment_plan?: unknown;
  };
  return {
    ...policy,
    // Cover bought on its start day starts when it is bought, never before (`startHasPassed`).
    policy: { ...policy.policy, start_date: boundStartSeconds(policy.policy.start_date, now) },
    pricing: quotePricing(quote.pricing, {
      quote: quote.reference,
      version: quote.versionReference,
      model: quote.rateBookVersionId,
    }),
    payment: {
      payment_provider: 'stripe',
      provider_payment_reference: purchase.intentId,
      provider_customer_reference: purchase.customerId,
      // What was paid: beyond the upfront premium and deposit, the monthly plan's first installment.
      payment_amount: fromPence(purchase.amountPence),
      // The card the intent was paid with, as the processor names it once attached.
      ...(paymentMethodId === null ? {} : { payment_method_id: paymentMethodId }),
    },
  };
}

/** Buying a quote in the web app: the first payment, then the policy bound exactly as POST /policys binds. */
export function createPurchaseService(deps: PurchaseServiceDeps) {
  const { db, clock } = deps;
  const payments = deps.payments.quotePayments;
  const throttles = createThrottles(db, clock);

  /** The quote's intent: made once per quote (its keys are the quote's), recorded, then read back. */
  async function intentOf(tenant: Tenant, quote: QuoteRecord & { input: PolicyInput }, amountPence: number) {
    const existing = await findQuotePurchase(db, quote.id);
    if (existing !== undefined) return existing;
    const { proposer } = quote.input;
    const opened = await payments.open(tenant, {
      quoteId: quote.id,
      amountPence,
      productReference: quote.input.policy.product_reference ?? '',
      email: proposer.email,
      name: `${proposer.first_names} ${proposer.last_names}`,
    });
    await insertQuotePurchase(db, { quoteId: quote.id, amountPence, ...opened }, clock.now());
    const stored = await findQuotePurchase(db, quote.id);
    if (stored === undefined) throw new AppError('INTERNAL', 'the quote’s purchase was not recorded');
    return stored;
  }

  /**
   * Takes the payment: confirms the intent with the card unless it is paid already, or is waiting for
   * the customer's 3-D Secure (confirming it again from here would not be the customer authenticating:
   * the customer completes it, or the issuer fails it and the intent takes a card again).
   */
  async function pay(tenant: Tenant, quoteId: string, intentId: string, paymentMethodId: string) {
    const intent = await payments.intent(tenant, intentId);
    if (intent.status === 'succeeded' || intent.status === 'requires_action') return intent;
    const confirmed = await payments
      .confirm(tenant, quoteId, intentId, paymentMethodId)
      .catch(async (error: unknown) => {
        // Refused because another purchase of this quote confirmed the intent first, with its own card:
        // the intent is paid (or waits for that card's 3-D Secure) and is not charged again.
        const now = await payments.intent(tenant, intentId);
        if (now.status === 'succeeded' || now.status === 'requires_action') return now;
        throw error;
      });
    if (confirmed.status === 'succeeded' || confirmed.status === 'requires_action') return confirmed;
    throw new AppError(
      'PAYMENT_DECLINED',
      confirmed.lastPaymentError?.message ?? `The payment did not go through (${confirmed.status})`,
    );
  }

  /** Binds the paid quote through POST /policys; a final refusal refunds the payment and is rethrown. */
  async function bind(
    tenant: Tenant,
    quote: QuoteRecord & { input: PolicyInput },
    purchase: { intentId: string; customerId: string; amountPence: number },
    paymentMethodId: string | null,
  ) {
    const input = bindingInput(quote, purchase, paymentMethodId, clock.now());
    try {
      return (await deps.policies.submit(tenant, input)).policy;
    } catch (error) {
      if (!(error instanceof AppError) || !FINAL_REFUSALS.has(error.code)) throw error;
      const now = clock.now();
      const after = await findQuote(db, tenant, quote.reference);
      // Another request for the same quote bound it with this very payment: nothing to give back.
      if (after?.boundAt == null) {
        await payments.refund(tenant, quote.id, purchase.intentId);
        await setQuotePurchaseStatus(db, quote.id, 'refunded', now);
      }
      throw error;
    }
  }

  return {
    /**
     * POST /quotes/:quote_reference/purchase. Pays first, binds after: the policy is created only once
     * the processor says the payment succeeded, and a paid quote that cannot then be bound is refunded.
     */
    async purchase(
      tenant: Tenant,
      reference: string,
      request: PurchaseRequest,
      address: string,
    ): Promise<PurchaseOutcome> {
      const perAddress = addressThrottleOf(['quote-purchase', tenant.companyId], address);
      await throttles.ensureNotThrottled(perAddress);
      await throttles.countAgainst(perAddress);
      const { quote, amountPence } = await purchasable(db, tenant, reference, request, clock.now(), payments);
      const purchase = await intentOf(tenant, quote, amountPence);
      if (purchase.status === 'refunded')
        throw new AppError(
          'QUOTE_NOT_BINDABLE',
          'The quote could not be bound after it was paid, and the payment was refunded',
        );
      const paid = await pay(tenant, quote.id, purchase.intentId, request.paymentMethodId);
      if (paid.status === 'requires_action') {
        if (paid.clientSecret === null)
          throw new AppError('UPSTREAM_UNAVAILABLE', 'The processor gave no client secret for 3-D Secure');
        return {
          status: 'requires_action',
          paymentIntentId: purchase.intentId,
          clientSecret: paid.clientSecret,
          paymentMethodId: paid.paymentMethodId,
          amountPence,
        };
      }
      const isNewAccount =
        (await deps.accounts.findCredentials(db, tenant, quote.input.proposer.email)) === undefined;
      const policy = await bind(tenant, quote, purchase, paid.paymentMethodId);
      await setQuotePurchaseStatus(db, quote.id, 'bound', clock.now());
      const userReference = policy.user_reference;
      return {
        status: 'bound',
        policyReference: policy.policy_reference,
        userReference,
        amountPence,
        signIn: {
          type: isNewAccount ? 'TEMPORARY_PASSWORD_SENT' : 'SIGN_IN',
          username: quote.input.proposer.email,
        },
      };
    },
  };
}

export type PurchaseService = ReturnType<typeof createPurchaseService>;
