/**
 * The no-claims step-back at renewal: the no-claims years a renewal carries over (`proposer.ncd`) are
 * stepped back once for each at-fault claim settled in the term it follows, by the step-back table of the
 * product in force at the renewal's start (`no_claims_step_back`, products' rules; the default when none).
 */
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { findProducts, noClaimsYearsAfter, productVersionAt } from '../products/index.ts';
import { fromSeconds, type PolicyContext } from './policy-context.ts';
import { renewedSnapshot, type PolicySnapshot, type RenewalTerms } from './rules/policy-versions.ts';

/**
 * `terms` with the proposer's no-claims years stepped back for the at-fault claims settled in the term
 * `lastYear` covers; `terms` as they are when the renewal sends its own proposer (the sender states the
 * years), when the policy holds no years, or when no at-fault claim was settled.
 */
export async function steppedBackTerms<Built>(
  ctx: PolicyContext<Built>,
  trx: Executor,
  tenant: Tenant,
  policyId: string,
  lastYear: PolicySnapshot,
  terms: RenewalTerms,
): Promise<RenewalTerms> {
  if (terms.replaced?.proposer !== undefined) return terms;
  const renewal = renewedSnapshot(lastYear, terms);
  const years = renewal.proposer.ncd;
  if (years === undefined || years === 0) return terms;
  const claims = await ctx.atFaultClaims(trx, policyId, {
    fromAt: fromSeconds(lastYear.policy.start_date),
    // The term's end is its last second, inclusive.
    toAt: fromSeconds(lastYear.policy.end_date + 1),
  });
  if (claims === 0) return terms;
  const reference = renewal.policy.product_reference;
  const [product] = reference === undefined ? [] : await findProducts(trx, tenant, [reference]);
  const table =
    product === undefined
      ? undefined
      : productVersionAt(product.versions, fromSeconds(terms.startDate))?.rules.no_claims_step_back;
  const kept = noClaimsYearsAfter(years, claims, table);
  return { ...terms, replaced: { ...terms.replaced, proposer: { ...renewal.proposer, ncd: kept } } };
}
