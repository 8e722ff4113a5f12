import type { Clock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import { fromPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import type { QuotePayments } from '../payments/index.ts';
import type { PolicyInput, PolicyResponse } from '../policies/index.ts';
import {
  findQuotePurchase,
  openPurchasesLeftSince,
  setQuotePurchaseStatus,
  touchQuotePurchase,
  type QuotePurchase,
} from './quote-purchase-repository.ts';
import { findQuote, type QuoteRecord } from './quote-repository.ts';
import { bindability, boundStartSeconds, isPseudonymised, quotePricing } from './rules/index.ts';

/*
 * A quote's payment once taken: the policy bound with it, or the money given back. The buyer's own
 * request does this as soon as the processor says the payment succeeded; the settling job does it for
 * a buyer who never came back for it (a tab closed after 3-D Secure, an answer lost on the way).
 */

/** The worker's job that settles purchases left `paying`, every 10 minutes. */
export const QUOTE_PURCHASE_SETTLE_QUEUE = 'quotes.settle-purchases';

/** A purchase left `paying` this long has lost its buyer: the job settles it (and looks again as often). */
export const PURCHASE_LEFT_AFTER_MS = 15 * 60_000;

/**
 * How long after its quote expired a purchase is still watched: its intent, waiting for 3-D Secure or
 * another card, is cancelled at the first look after the quote no longer binds, and a processor that
 * could not be reached then is asked again for this long.
 */
export const PURCHASE_WATCHED_AFTER_EXPIRY_MS = 7 * 86_400_000;

/** What settling a purchase needs of other modules. */
export interface SettlementDeps {
  readonly db: Executor;
  readonly clock: Clock;
  readonly payments: QuotePayments;
  /** POST /policys: the binding service, with every rule of binding a quote and checking a payment. */
  readonly policies: {
    submit(tenant: Tenant, input: PolicyInput): Promise<{ policy: PolicyResponse }>;
  };
}

type PaidPurchase = Pick<QuotePurchase, 'intentId' | 'customerId' | 'amountPence'>;

// Only these refusals of the binding service are final for this quote: the money then goes back.
// Anything else (the database or the processor unavailable) leaves the paid intent for a retry.
const FINAL_REFUSALS = new Set([
  'QUOTE_NOT_BINDABLE',
  'QUOTE_PRICING_MISMATCH',
  'QUOTE_RISK_MISMATCH',
  'VALIDATION_FAILED',
  'POLICY_TERM_ENDED',
]);

/**
 * The policy that binds the paid `quote` at `now`, as POST /policys takes it: the quote's input and
 * pricing, the intent as its payment block.
 */
function bindingInput(
  quote: QuoteRecord & { input: PolicyInput },
  purchase: PaidPurchase,
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

/** The statuses of an intent nobody has paid, which the processor cancels. */
const UNPAID = new Set(['requires_payment_method', 'requires_confirmation', 'requires_action']);

/** Whether `quote` will never bind again: bound, expired, its start day passed, declined. */
function noLongerBinds(quote: QuoteRecord, now: Date): boolean {
  if (quote.boundAt !== null || isPseudonymised(quote.input)) return true;
  const bindable = bindability(quote, now, undefined);
  return !bindable.ok && bindable.reason !== 'REFERRAL_PENDING';
}

/**
 * An intent never paid, of a quote that no longer binds, cancelled at the processor: a buyer who kept
 * its client secret (3-D Secure left open in a tab) can no longer pay for a policy that cannot be
 * bound. One paid meanwhile stays `paying`, and the next look refunds it.
 */
async function cancelUnpaid(
  deps: SettlementDeps,
  tenant: Tenant,
  quote: QuoteRecord,
  purchase: QuotePurchase,
  intentStatus: string,
): Promise<QuotePurchase['status']> {
  if (!UNPAID.has(intentStatus) || !noLongerBinds(quote, deps.clock.now())) return 'paying';
  try {
    await deps.payments.cancel(tenant, quote.id, purchase.intentId);
  } catch (error) {
    if (error instanceof AppError && error.code === 'VALIDATION_FAILED') return 'paying';
    throw error;
  }
  await setQuotePurchaseStatus(deps.db, quote.id, 'cancelled', deps.clock.now());
  return 'cancelled';
}

/** Gives the whole payment back and records it: once per quote (the refund's key is the quote's). */
async function refund(deps: SettlementDeps, tenant: Tenant, quoteId: string, intentId: string) {
  await deps.payments.refund(tenant, quoteId, intentId);
  await setQuotePurchaseStatus(deps.db, quoteId, 'refunded', deps.clock.now());
}

/**
 * Binds the paid quote through POST /policys and records the purchase bound; a final refusal refunds
 * the payment and is rethrown.
 */
export async function bindPaid(
  deps: SettlementDeps,
  tenant: Tenant,
  quote: QuoteRecord & { input: PolicyInput },
  purchase: PaidPurchase,
  paymentMethodId: string | null,
): Promise<PolicyResponse> {
  const input = bindingInput(quote, purchase, paymentMethodId, deps.clock.now());
  try {
    const { policy } = await deps.policies.submit(tenant, input);
    await setQuotePurchaseStatus(deps.db, quote.id, 'bound', deps.clock.now());
    return policy;
  } catch (error) {
    if (!(error instanceof AppError) || !FINAL_REFUSALS.has(error.code)) throw error;
    const after = await findQuote(deps.db, tenant, quote.reference);
    // Another request for the same quote bound it with this very payment: nothing to give back.
    if (after?.boundAt == null) await refund(deps, tenant, quote.id, purchase.intentId);
    throw error;
  }
}

/**
 * Settles the `paying` purchase of `quote` when its intent has been paid: binds the quote, which
 * refunds when it no longer binds (expired, its start day passed); refunds when the quote was bound by
 * another payment; records it bound when its policy was bound with this one (and the record was
 * missed). An intent not paid is left as it is while its quote may bind, and cancelled once it never
 * will. Returns what the purchase is now.
 */
export async function settlePaid(
  deps: SettlementDeps,
  tenant: Tenant,
  quote: QuoteRecord,
  purchase: QuotePurchase,
): Promise<QuotePurchase['status']> {
  if (purchase.status !== 'paying') return purchase.status;
  const intent = await deps.payments.intent(tenant, purchase.intentId);
  if (intent.status !== 'succeeded') return cancelUnpaid(deps, tenant, quote, purchase, intent.status);
  if (quote.boundAt !== null) {
    if (await deps.payments.boundWith(tenant, purchase.intentId)) {
      await setQuotePurchaseStatus(deps.db, quote.id, 'bound', deps.clock.now());
      return 'bound';
    }
    await refund(deps, tenant, quote.id, purchase.intentId);
    return 'refunded';
  }
  if (isPseudonymised(quote.input)) {
    await refund(deps, tenant, quote.id, purchase.intentId);
    return 'refunded';
  }
  try {
    await bindPaid(
      deps,
      tenant,
      quote as QuoteRecord & { input: PolicyInput },
      purchase,
      intent.paymentMethodId,
    );
    return 'bound';
  } catch (error) {
    if (!(error instanceof AppError && FINAL_REFUSALS.has(error.code))) throw error;
    // Refunded, or bound meanwhile by its buyer's own request with this payment.
    return (await findQuotePurchase(deps.db, quote.id))?.status ?? 'paying';
  }
}

/**
 * The job's pass: each purchase left `paying` for `PURCHASE_LEFT_AFTER_MS`, while its quote is
 * watched, settled as `settlePaid` says (one that fails is logged and looked at again next time).
 * Returns how many were bound, refunded and cancelled.
 */
export async function settleLeftPurchases(
  deps: SettlementDeps,
  options: { limit: number; onError: (error: unknown, quoteId: string) => void },
): Promise<{ bound: number; refunded: number; cancelled: number }> {
  const now = deps.clock.now();
  const left = await openPurchasesLeftSince(
    deps.db,
    new Date(now.getTime() - PURCHASE_LEFT_AFTER_MS),
    new Date(now.getTime() - PURCHASE_WATCHED_AFTER_EXPIRY_MS),
    options.limit,
  );
  const settled = { bound: 0, refunded: 0, cancelled: 0 };
  for (const purchase of left) {
    const tenant = asTenant(purchase.companyId, purchase.environment as DataEnvironment);
    try {
      const quote = await findQuote(deps.db, tenant, purchase.quoteReference);
      if (quote === undefined) continue;
      const status = await settlePaid(deps, tenant, quote, purchase);
      if (status === 'paying') await touchQuotePurchase(deps.db, purchase.quoteId, now);
      else settled[status] += 1;
    } catch (error) {
      options.onError(error, purchase.quoteId);
      await touchQuotePurchase(deps.db, purchase.quoteId, now);
    }
  }
  return settled;
}
