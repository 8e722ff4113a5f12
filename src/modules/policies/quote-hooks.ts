import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { PolicyInput, Pricing } from './policy-schemas.ts';

/** A quote a policy binds: its id for the binding, and the pricing the policy takes from it. */
export interface QuotedPricing {
  readonly quoteId: string;
  readonly pricing: Pricing;
}

/**
 * What the policies module asks of quotes (issue 36), implemented by the quotes module and wired by
 * the container: a `pricing.quote_reference` that names one of the company's quotes binds it. A
 * reference that names none is an outside quoting engine's, kept as sent, as before.
 */
export interface PolicyQuoteHooks {
  /**
   * Before the transaction: the pricing of the quote `input.pricing.quote_reference` names, for a new
   * policy (`policyReference` undefined) or an adjustment of that policy; undefined when it names none
   * of the company's quotes. 409 `QUOTE_NOT_BINDABLE` (expired, declined, referral not approved,
   * bound, another policy's), 422 `QUOTE_RISK_MISMATCH` naming each rated field of the policy that is
   * not the quote's, 422 `QUOTE_PRICING_MISMATCH` naming each pricing field sent that differs.
   */
  priceFor(
    db: Executor,
    tenant: Tenant,
    input: PolicyInput,
    policyReference: string | undefined,
    now: Date,
  ): Promise<QuotedPricing | undefined>;
  /** In the policy's transaction: binds the quote to the version; 409 when another bound it first. */
  bind(
    trx: Executor,
    quoteId: string,
    ids: { policyId: string; policyVersionId: string },
    now: Date,
  ): Promise<void>;
}

/** Without the quotes module (tests of other modules, tools): every quote reference is an outside one. */
export const noQuoteHooks: PolicyQuoteHooks = {
  priceFor: () => Promise.resolve(undefined),
  bind: () => Promise.resolve(),
};
