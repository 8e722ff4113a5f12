import { sql, type Kysely } from 'kysely';

/**
 * Amounts below the card processor's minimum charge (Stripe: 30p) are not charged but carried to the
 * next statement: `carried_forward_pence` on the statement that carries it out, `brought_forward_pence`
 * on the one that bills it; the policy's ledger holds it in between (a debit, source
 * `carried_forward`), so it is never lost nor billed twice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table statements add column carried_forward_pence bigint not null default 0`.execute(db);
  await sql`alter table statements add column brought_forward_pence bigint not null default 0`.execute(db);
  await sql`alter table statements drop constraint statements_totals_add_up`.execute(db);
  await sql`
    alter table statements add constraint statements_totals_add_up check (
      total_premium_pence = usage_premium_pence + subscription_premium_pence
      and billed_premium_pence = total_premium_pence - credits_used_pence + brought_forward_pence
      and carried_forward_pence between 0 and billed_premium_pence and brought_forward_pence >= 0)`.execute(
    db,
  );
  await sql`alter table policy_credits drop constraint if exists policy_credits_source_check`.execute(db);
  await sql`
    alter table policy_credits add constraint policy_credits_source_check
    check (source in ('void', 'goodwill', 'refund', 'statement', 'carried_forward'))`.execute(db);
}
