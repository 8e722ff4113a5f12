import { sql, type Kysely } from 'kysely';

/**
 * `claim_payments.payment_reference`: the sender's own id for a payment on an exposure, so that a
 * request sent again (its answer lost) records the payment once. Unique per exposure where given.
 * Owned by the claims module.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table claim_payments
      add column payment_reference text,
      add constraint claim_payments_reference_length check (char_length(payment_reference) between 1 and 100)`.execute(
    db,
  );
  await sql`
    create unique index claim_payments_reference_key on claim_payments (exposure_id, policy_id, payment_reference)
      where payment_reference is not null`.execute(db);
}
