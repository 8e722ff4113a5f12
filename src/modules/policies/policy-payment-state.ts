import type { ValueExpression } from 'kysely';
import type { Database, Executor } from '../../schema.ts';
import { notePolicyWrites } from './policy-row-cache.ts';

/**
 * Tells readers of a policy that its payment records changed (policies.payments_revision, whose
 * change the feed announces): `policyId` is an id, or a subquery naming the policy (e.g. the policy of
 * a payment row) so that the bump costs no extra round trip. Runs on `db`, the payment's transaction
 * when there is one.
 */
export async function bumpPaymentsRevision(
  db: Executor,
  policyId: ValueExpression<Database, 'policies', string | null>,
): Promise<void> {
  const owners = await db
    .updateTable('policies')
    .set((eb) => ({ payments_revision: eb('payments_revision', '+', 1) }))
    .where('id', '=', policyId)
    .returning('user_id')
    .execute();
  notePolicyWrites(owners.map((r) => r.user_id));
}

/** `bumpPaymentsRevision` for several policies in one statement (a billing run's charges). */
export async function bumpPaymentsRevisions(db: Executor, policyIds: readonly string[]): Promise<void> {
  const owners = await db
    .updateTable('policies')
    .set((eb) => ({ payments_revision: eb('payments_revision', '+', 1) }))
    .where('id', 'in', [...new Set(policyIds)])
    .returning('user_id')
    .execute();
  notePolicyWrites(owners.map((r) => r.user_id));
}

/** The reference of the policy `policyId`, or undefined when there is none. */
export async function findPolicyReference(db: Executor, policyId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('policies')
    .select('policy_reference')
    .where('id', '=', policyId)
    .executeTakeFirst();
  return row?.policy_reference;
}

/** The policyholder (user id) of the policy `policyId`, or undefined when there is none. */
export async function findPolicyholderId(db: Executor, policyId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('policies')
    .select(['user_id'])
    .where('id', '=', policyId)
    .executeTakeFirst();
  return row?.user_id;
}

/**
 * Policies as another module's query joins them (id, reference, policyholder), as a derived table
 * that the planner flattens into a plain join: `.innerJoin(policyReferences(db).as('p'), 'p.id', …)`.
 */
export function policyReferences(db: Executor) {
  return db.selectFrom('policies').select(['id', 'policy_reference', 'user_id']);
}
