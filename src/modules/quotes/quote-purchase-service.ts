import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { poundsText } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { addressThrottleOf, createThrottles } from '../auth/index.ts';
import type { Tenant } from '../companies/index.ts';
import type { QuotePayments } from '../payments/index.ts';
import type { PolicyInput, PolicyResponse } from '../policies/index.ts';
import { firstPaymentPence } from '../policies/rules/index.ts';
import { findQuotePurchase, insertQuotePurchase } from './quote-purchase-repository.ts';
import {
  bindPaid,
  QUOTE_PURCHASE_SETTLE_QUEUE,
  settleLeftPurchases,
  settlePaid,
  type SettlementDeps,
} from './quote-purchase-settlement.ts';
import { findQuote, type QuoteRecord } from './quote-repository.ts';
import { secretMatches } from './quote-secrets.ts';
import { bindability, isPseudonymised, notBindableMessage } from './rules/index.ts';

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
  /** For the job that settles purchases whose buyer did not come back (`settleLeftPurchases`). */
  readonly jobs: Jobs;
  readonly logger?: Pick<Logger, 'error'>;
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
 * Takes the payment: confirms the intent with the card unless it is paid already, or is waiting for
 * the customer's 3-D Secure (confirming it again from here would not be the customer authenticating:
 * the customer completes it, or the issuer fails it and the intent takes a card again).
 */
async function pay(
  payments: QuotePayments,
  tenant: Tenant,
  quoteId: string,
  intentId: string,
  paymentMethodId: string,
) {
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

/** Buying a quote in the web app: the first payment, then the policy bound exactly as POST /policys binds. */
export function createPurchaseService(deps: PurchaseServiceDeps) {
  const { db, clock } = deps;
  const payments = deps.payments.quotePayments;
  const throttles = createThrottles(db, clock);
  const settlement: SettlementDeps = { db, clock, payments, policies: deps.policies };
  deps.jobs.define({
    name: QUOTE_PURCHASE_SETTLE_QUEUE,
    options: { retryLimit: 1, expireInSeconds: 900 },
  });

  const settleLeft = (limit = 100) =>
    settleLeftPurchases(settlement, {
      limit,
      onError: (error, quoteId) =>
        deps.logger?.error({ err: error, quoteId }, 'a quote purchase was not settled'),
    });

  /** Settles the purchase of a quote refused as not bindable, if it was paid (see `settlePaid`). */
  async function settleRefused(tenant: Tenant, reference: string): Promise<void> {
    const quote = await findQuote(db, tenant, reference);
    const purchase = quote === undefined ? undefined : await findQuotePurchase(db, quote.id);
    if (quote === undefined || purchase === undefined) return;
    // NOTE: the refusal is the answer; a processor that cannot be reached now leaves the purchase for
    // the settling job, which looks at it again within PURCHASE_LEFT_AFTER_MS.
    await settlePaid(settlement, tenant, quote, purchase).catch(() => undefined);
  }

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
      const { quote, amountPence } = await purchasable(
        db,
        tenant,
        reference,
        request,
        clock.now(),
        payments,
      ).catch(async (error: unknown) => {
        // A paid quote that no longer binds (its buyer back after it expired) is refunded now.
        if (error instanceof AppError && error.code === 'QUOTE_NOT_BINDABLE')
          await settleRefused(tenant, reference);
        throw error;
      });
      const purchase = await intentOf(tenant, quote, amountPence);
      if (purchase.status === 'refunded')
        throw new AppError(
          'QUOTE_NOT_BINDABLE',
          'The quote could not be bound after it was paid, and the payment was refunded',
        );
      const paid = await pay(payments, tenant, quote.id, purchase.intentId, request.paymentMethodId);
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
      const policy = await bindPaid(settlement, tenant, quote, purchase, paid.paymentMethodId);
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

    /** The settling job's pass (see `settleLeftPurchases`); also for tests and operators. */
    settleLeft,

    async registerWorkers(): Promise<void> {
      await deps.jobs.work(QUOTE_PURCHASE_SETTLE_QUEUE, async () => {
        await settleLeft();
      });
      await deps.jobs.schedule(QUOTE_PURCHASE_SETTLE_QUEUE, '*/10 * * * *', {}, 'Europe/London');
    },
  };
}

export type PurchaseService = ReturnType<typeof createPurchaseService>;
