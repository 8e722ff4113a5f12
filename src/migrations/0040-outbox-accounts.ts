import { sql, type Kysely } from 'kysely';

/**
 * An email names the account it is for, when its sender knows it (a statement email does): an erasure
 * finds the account's emails by it, and a pending one whose account has since been erased is never sent,
 * even if it was queued by a transaction that read the address before the erasure committed. No foreign
 * key (its check on each insert would lock every account a billing chunk emails) and no index (the
 * erasure reads the outbox by recipient too, in the same scan).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table outbox_emails add column user_id uuid`.execute(db);
}
