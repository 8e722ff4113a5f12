/**
 * The terms of a product's policies in force, for re-rating a whole book (rating's impact test): read in
 * keyset batches by policy id, each policy's terms as JSON text, so a book of any size is never in
 * memory at once and the parsing can happen on the threads that rate.
 */
import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';

export interface InForceTerms {
  readonly policyId: string;
  readonly policyReference: string;
  /** The snapshot of the terms in force (the policy object with its pricing), as JSON text. */
  readonly termsJson: string;
}

/** Which policies: the tenant's, naming `productReference`, live with a term that covers `at`. */
const inForce = (tenant: Tenant, productReference: string, at: Date) => sql`${forTenant(tenant, 'p')}
  and p.product_reference = ${productReference} and p.status = 'active'
  and p.current_start_at <= ${at} and p.current_end_at > ${at}`;

/** How many policies of the product are in force at `at`. */
export async function countInForce(
  db: Executor,
  tenant: Tenant,
  productReference: string,
  at: Date,
): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`
    select count(*) as n from policies p where ${inForce(tenant, productReference, at)}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Up to `limit` policies in force after policy id `after`, in id order, each with the terms that
 * took effect last before `at` (statements and replaced versions carry none of their own).
 */
export async function readInForceTerms(
  db: Executor,
  tenant: Tenant,
  scope: { productReference: string; at: Date },
  after: string | null,
  limit: number,
): Promise<InForceTerms[]> {
  const { productReference, at } = scope;
  const cursor = after === null ? sql`` : sql`and p.id > ${after}::uuid`;
  const { rows } = await sql<{ id: string; policy_reference: string; terms: string }>`
    select p.id, p.policy_reference, t.terms
    from policies p
    cross join lateral (
      select v.snapshot::text as terms from policy_versions v
      where v.policy_id = p.id and v.version_type <> 'st' and v.snapshot is not null
        and v.superseded_at is null and v.effective_at <= ${at}
      order by v.sequence desc
      limit 1
    ) t
    where ${inForce(tenant, productReference, at)} ${cursor}
    order by p.id
    limit ${limit}`.execute(db);
  return rows.map((r) => ({ policyId: r.id, policyReference: r.policy_reference, termsJson: r.terms }));
}
