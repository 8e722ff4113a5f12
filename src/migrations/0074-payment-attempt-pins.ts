import { sql, type Kysely } from 'kysely';

/**
 * `payments.attempt_*`: the card or mandate an attempt asks the processor with, written before it asks.
 * A replay of the attempt (its outcome unknown, or its process killed mid-call) then asks with the same,
 * under the same idempotency key: the processor answers with the first charge, never a second one on a
 * card or mandate chosen since. Owned by the payments module.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table payments
      add column attempt_pinned integer,
      add column attempt_payment_method_id text,
      add column attempt_mandate_id uuid`.execute(db);
}
