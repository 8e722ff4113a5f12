/** What scoring and rescoring share: the rules a trip is scored on, and a month's figures from its trips. */
import type { Executor } from '../../schema.ts';
import { notFound } from '../../platform/errors.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import { policyUsageTermsQuery } from '../policies/index.ts';
import { findProducts, productVersionAt, type ProductRecord } from '../products/index.ts';
import { monthScore, scoringRules, type ScoringRules } from './rules/index.ts';

/**
 * The scoring rules of a policy's product, by the instant a trip starts: the `driving_score` rule of the
 * version in force then (the defaults when it has none). Undefined for a policy that is not the tenant's.
 */
export async function scoringRulesOf(
  trx: Executor,
  tenant: Tenant,
  policyId: string,
): Promise<((startAt: Date) => ScoringRules) | undefined> {
  const policy = await policyUsageTermsQuery(trx).where('p.id', '=', policyId).executeTakeFirst();
  if (policy === undefined) return undefined;
  let product: ProductRecord | undefined;
  if (policy.product_reference !== null)
    [product] = await findProducts(trx, tenant, [policy.product_reference]);
  return (startAt) => {
    const version = product === undefined ? undefined : productVersionAt(product.versions, startAt);
    return scoringRules(version?.rules.driving_score);
  };
}

/** A month's figures from its counting trips. */
export function monthFigures(trips: ReadonlyArray<{ score: number; distanceMetres: number }>) {
  const metres = trips.reduce((sum, t) => sum + t.distanceMetres, 0);
  return { score: monthScore(trips), metres, count: trips.length };
}

/** Who reads scores: the company's client, or a policyholder (their own policies only). */
export type ScoreReader =
  { readonly kind: 'client' } | { readonly kind: 'policyholder'; readonly userId: string };

/** The tenant's policy `reference` as `reader` may see it: 404 for another company's or policyholder's. */
export async function readablePolicy(db: Executor, tenant: Tenant, reader: ScoreReader, reference: string) {
  const policy = await policyUsageTermsQuery(db)
    .where(forTenant(tenant, 'p'))
    .where('p.policy_reference', '=', reference)
    .executeTakeFirst();
  if (policy === undefined || (reader.kind === 'policyholder' && policy.user_id !== reader.userId))
    throw notFound('policy');
  return policy;
}
