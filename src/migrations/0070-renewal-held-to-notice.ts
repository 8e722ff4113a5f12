import { sql, type Kysely } from 'kysely';

/**
 * `renewal_prices.held_to_notice`: the parts of a renewal made at the term's end (the fixed premium,
 * the rate per unit) held to the price its notice stated, because rated again they came higher. Empty
 * for a notice, and for a renewal that cost no more than its notice said. Owned by the rating module.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table renewal_prices
      add column held_to_notice text[] not null default '{}',
      add constraint renewal_prices_held_to_notice_check
        check (held_to_notice <@ array['fixed', 'per_unit']::text[] and (stage = 'renewal' or held_to_notice = '{}'))`.execute(
    db,
  );
}
