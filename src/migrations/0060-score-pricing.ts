import { sql, type Kysely } from 'kysely';

/**
 * Price by driving score (a product's `score_pricing` rule): a statement's `score_adjustment_pence` line
 * (negative credits, positive charges) and `score_months`, what it adjusted each London month by and why.
 * What earlier statements adjusted a month by is the sum of their `score_months` entries for it, so a
 * month is brought up to date once per statement and never adjusted twice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table statements add column score_adjustment_pence bigint not null default 0`.execute(db);
  await sql`alter table statements add column score_months jsonb not null default '[]'`.execute(db);
  await sql`alter table statements drop constraint statements_totals_add_up`.execute(db);
  await sql`
    alter table statements add constraint statements_totals_add_up check (
      total_premium_pence = usage_premium_pence + subscription_premium_pence
      and billed_premium_pence = total_premium_pence - cap_credit_pence - annual_cap_credit_pence
        - free_distance_credit_pence + minimum_top_up_pence + score_adjustment_pence - credits_used_pence
        + brought_forward_pence
      and cap_credit_pence >= 0 and annual_cap_credit_pence >= 0 and free_distance_credit_pence >= 0
      and minimum_top_up_pence >= 0
      and carried_forward_pence between 0 and billed_premium_pence and brought_forward_pence >= 0)`.execute(
    db,
  );
}
