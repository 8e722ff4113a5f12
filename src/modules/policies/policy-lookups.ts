/**
 * Reads of the policies table that other modules build on: the query starts here, with the policies'
 * columns and filters, and the caller adds its own tables' parts (a subquery, a join), so its SQL is one
 * statement as before.
 */
import type { Executor } from '../../schema.ts';

/**
 * Live policies whose billing date falls on a day whose billing days are `billingDays` (29–31 fall on
 * the last day of shorter months), covered before `billingInstant`, across tenants: `policies as p`.
 */
export function duePoliciesQuery(db: Executor, billingDays: readonly number[], billingInstant: Date) {
  return (
    db
      .selectFrom('policies as p')
      .where('p.status', '=', 'active')
      .where('p.billing_day', 'in', [...billingDays])
      // NOTE: where cover first began, not the current term's start: a renewal stored early moves that
      // ahead, and a term that starts on its billing date still owes the previous term's last period.
      .where('p.first_start_at', '<', billingInstant)
  );
}

/** What usage reads of a policy (its product and current term), as `policies as p`. */
export function policyUsageTermsQuery(db: Executor) {
  return db
    .selectFrom('policies as p')
    .select([
      'p.id',
      'p.policy_reference',
      'p.user_id',
      'p.product_reference',
      'p.current_start_at',
      'p.current_end_at',
    ]);
}
