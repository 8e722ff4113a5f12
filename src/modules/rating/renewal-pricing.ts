import { londonDate } from '../../platform/london-calendar.ts';
import { toPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { Pricing, RenewalPriceOutcome, RenewalToPrice } from '../policies/index.ts';
import { findProducts } from '../products/index.ts';
import { findVersionInForce } from './rate-book-repository.ts';
import { insertRenewalPrice, type NewRenewalPrice } from './renewal-price-repository.ts';
import { decide, heldToNotice, renewalPrice, type QuoteInput, type RateBookContent } from './rules/index.ts';

/*
 * Automatic renewals of policies rated by Milepost, priced fairly by rule: FCA ICOBS 6B.2.1R/6B.2.2R
 * (PS21/5) forbid a renewal price above the equivalent new-business price through the same channel. A
 * policy is rated by Milepost when its current pricing's `quote_model_reference` names a rate book
 * version of the same company. Its renewal is rated on the version of its product's rate book in force
 * at the renewal's start, as it is (its policy year) and as new business (`renewalPrice`), and takes the
 * lower of the two, part by part. Made at the term's end, it is also never above what its notice
 * stated, part by part (`heldToNotice`). A renewal the version declines, refers or cannot rate is
 * refused, so it is never made at a price nobody gave. Every pricing is stored for staff (renewal_prices).
 */

/** The rate book version a policy's pricing names, when it is one of the tenant's. */
async function namedVersion(
  db: Executor,
  tenant: Tenant,
  reference: string | undefined,
): Promise<{ productId: string } | undefined> {
  // Only a UUID can name a version: anything else (another rating engine's reference) names none.
  if (
    reference === undefined ||
    !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(reference)
  )
    return undefined;
  const row = await db
    .selectFrom('rate_book_versions as v')
    .innerJoin('rate_books as b', 'b.id', 'v.rate_book_id')
    .select('b.product_id')
    .where(forTenant(tenant, 'b'))
    .where('v.id', '=', reference)
    .executeTakeFirst();
  return row === undefined ? undefined : { productId: row.product_id };
}

/** The renewal as a quote: the policy object without pricing, on last year's installment plan. */
function quoteInputOf(renewal: RenewalToPrice, content: RateBookContent): QuoteInput {
  const { pricing: _pricing, payment: _payment, ...rest } = renewal.renewal;
  const plan = (renewal.lastYear.subscription_installments ?? 0) > 0 ? 'monthly' : 'single';
  const offered = content.installment_plans.some((p) => p.kind === plan);
  return { ...rest, ...(offered ? { installment_plan: plan } : {}) };
}

const yearlyPence = (pricing: { yearly_premium_estimate?: number | undefined }): number | null =>
  pricing.yearly_premium_estimate === undefined ? null : toPence(pricing.yearly_premium_estimate);

/** Prices one automatic renewal (the policies module's `priceRenewal`), storing what it found. */
export async function priceRenewal(
  trx: Executor,
  tenant: Tenant,
  renewal: RenewalToPrice,
): Promise<RenewalPriceOutcome> {
  const named = await namedVersion(trx, tenant, renewal.lastYear.quote_model_reference);
  if (named === undefined) return { kind: 'not_rated' };
  const startAt = new Date(renewal.renewal.policy.start_date * 1000);
  const ratedOn = londonDate(startAt);
  const products = await findProducts(trx, tenant);
  const productReference = products.find((p) => p.id === named.productId)?.reference ?? '';
  const inForce = await findVersionInForce(trx, tenant, named.productId, startAt);
  const base = {
    policyId: renewal.policyId,
    policyReference: renewal.policyReference,
    productId: named.productId,
    productReference,
    stage: renewal.stage,
    startAt,
    ratedOn,
    lastYearYearlyPence: yearlyPence(renewal.lastYear),
    lastYearPricing: renewal.lastYear,
    pricedAt: renewal.at,
  };
  const refuse = async (
    outcome: 'declined' | 'referred' | 'unratable',
    reasons: string[],
    versionId: string | null,
  ): Promise<RenewalPriceOutcome> => {
    await insertRenewalPrice(trx, tenant, {
      ...base,
      ...NOT_PRICED,
      rateBookVersionId: versionId,
      outcome,
      reasons,
    });
    return { kind: 'refused', outcome, reasons };
  };
  if (inForce === undefined)
    return refuse('unratable', [`No rate book version is in force on ${ratedOn}, the renewal's start`], null);
  const { content, id: versionId } = inForce.version;
  const input = quoteInputOf(renewal, content);
  const decision = decide(content, input, ratedOn);
  if (decision.decision !== 'accept')
    return refuse(
      decision.decision === 'decline' ? 'declined' : 'referred',
      decision.reasons.map((r) => r.reason),
      versionId,
    );
  const priced = renewalPrice(content, input, ratedOn, renewal.lastYear);
  if (!priced.ok)
    return refuse(
      'unratable',
      priced.problems.map((p) => `${p.path} ${p.message}`),
      versionId,
    );
  const { new_business: newBusiness, renewal: rated } = priced.value;
  const { term_days: termDays, year_days: yearDays } = rated.breakdown.fixed;
  const { pricing: offered, held } =
    renewal.notice === undefined
      ? { pricing: priced.value.offered, held: [] }
      : heldToNotice(priced.value.offered, renewal.notice, { termDays, yearDays });
  const pricing: Pricing = { ...offered, quote_model_reference: versionId };
  const row: NewRenewalPrice = {
    ...base,
    rateBookVersionId: versionId,
    outcome: 'priced',
    capApplied: priced.value.cap_applied,
    capped: priced.value.capped,
    heldToNotice: held,
    renewalYearlyPence: yearlyPence(offered),
    newBusinessYearlyPence: yearlyPence(newBusiness.pricing),
    renewalPricing: pricing,
    newBusinessPricing: newBusiness.pricing,
    ratedPricing: rated.pricing,
    reasons: [],
  };
  await insertRenewalPrice(trx, tenant, row);
  return { kind: 'priced', pricing };
}

const NOT_PRICED = {
  capApplied: false,
  capped: [],
  heldToNotice: [],
  renewalYearlyPence: null,
  newBusinessYearlyPence: null,
  renewalPricing: null,
  newBusinessPricing: null,
  ratedPricing: null,
} as const;
