import { sql, type Kysely } from 'kysely';

/**
 * `quote_purchases.status` `cancelled`: an intent never paid whose quote no longer binds (expired, its
 * start day passed, bound another way), cancelled at the processor so that its client secret, kept by
 * a buyer, can no longer pay for nothing. Owned by the quotes module.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table quote_purchases
      drop constraint quote_purchases_status_check,
      add constraint quote_purchases_status_check check (status in ('paying', 'bound', 'refunded', 'cancelled'))`.execute(
    db,
  );
}
