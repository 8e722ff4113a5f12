import { sql, type Kysely } from 'kysely';

/**
 * The pay-by-mile rules in billing. A policy row names the product its terms in force name, so billing
 * reads it with the row it locks. A statement carries the rules' lines (caps, free distance, minimum);
 * each journey a rule did not charge in full has rule credits (per journey, so a void gives back what
 * was paid for the journey, and a capped day can be recomputed when one of its journeys changes); a
 * policy year's charged distance is kept for the annual cap.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table policies add column product_reference text`.execute(db);
  await sql`
    update policies p set product_reference = (
      select snapshot->'policy'->>'product_reference' from policy_versions
      where policy_id = p.id and snapshot is not null and superseded_at is null
      order by sequence desc limit 1
    )`.execute(db);

  for (const column of [
    'cap_credit_pence',
    'annual_cap_credit_pence',
    'free_distance_credit_pence',
    'minimum_top_up_pence',
  ])
    await sql`alter table statements add column ${sql.ref(column)} bigint not null default 0`.execute(db);
  await sql`alter table statements add column capped_days jsonb not null default '[]'`.execute(db);
  await sql`alter table statements drop constraint statements_totals_add_up`.execute(db);
  await sql`
    alter table statements add constraint statements_totals_add_up check (
      total_premium_pence = usage_premium_pence + subscription_premium_pence
      and billed_premium_pence = total_premium_pence - cap_credit_pence - annual_cap_credit_pence
        - free_distance_credit_pence + minimum_top_up_pence - credits_used_pence + brought_forward_pence
      and cap_credit_pence >= 0 and annual_cap_credit_pence >= 0 and free_distance_credit_pence >= 0
      and minimum_top_up_pence >= 0
      and carried_forward_pence between 0 and billed_premium_pence and brought_forward_pence >= 0)`.execute(
    db,
  );

  // NOTE: a row's distance and credit are negative when a recompute gives charged distance back to a
  // journey (a capped day whose other journey was voided): the journey's credits are their sum.
  await sql`
    create table journey_rule_credits (
      id uuid primary key default gen_random_uuid(),
      journey_id uuid not null references journeys (id),
      policy_id uuid not null,
      statement_id uuid not null,
      rule text not null check (rule in ('daily_cap', 'annual_cap', 'free_distance')),
      day date not null,
      distance_metres bigint not null,
      credit_pence bigint not null,
      created_at timestamptz not null
    )`.execute(db);
  await sql`create index journey_rule_credits_journey_idx on journey_rule_credits (journey_id)`.execute(db);
  await sql`
    create index journey_rule_credits_day_idx on journey_rule_credits (policy_id, day)
    where rule = 'daily_cap'`.execute(db);

  await sql`
    create table policy_usage_years (
      policy_id uuid not null references policies (id),
      year_start_at timestamptz not null,
      charged_metres bigint not null,
      primary key (policy_id, year_start_at)
    )`.execute(db);
}
