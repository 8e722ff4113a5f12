import { sql, type Kysely } from 'kysely';

/**
 * A billing day reads its due policies a page at a time, in id order within each billing day (a
 * million-policy day is not held in memory whole): the index on the billing day gains the id, so each
 * page is one range of it rather than every due policy read and sorted again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index policies_billing_day_id_idx on policies (billing_day, id) where status = 'active'`.execute(
    db,
  );
  await sql`drop index policies_billing_day_idx`.execute(db);
}
