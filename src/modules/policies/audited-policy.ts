import type { Executor } from '../../schema.ts';

/**
 * The policy a request named by its reference, for the audit trail: only if it is of the request's
 * company and environment. A null company or environment filters nothing (an admin route names its
 * company in the body): the reference, unique across companies, is enough there.
 */
export async function findAuditedPolicy(
  db: Executor,
  policyReference: string,
  scope: { companyId: string | null; environment: string | null },
): Promise<{ id: string; company_id: string; environment: string } | undefined> {
  let query = db
    .selectFrom('policy_references as r')
    .innerJoin('policies as p', 'p.id', 'r.policy_id')
    .select(['p.id', 'p.company_id', 'p.environment'])
    .where('r.policy_reference', '=', policyReference);
  if (scope.companyId !== null) query = query.where('p.company_id', '=', scope.companyId);
  if (scope.environment !== null) query = query.where('p.environment', '=', scope.environment);
  return query.executeTakeFirst();
}
