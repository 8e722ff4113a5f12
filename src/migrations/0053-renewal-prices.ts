import { sql, type Kysely } from 'kysely';

/**
 * Renewal prices (FCA ICOBS 6B.2.1R/6B.2.2R): each time a policy rated by Milepost has a renewal
 * priced, for its notice (`stage` notice, when the renewal is stored ahead of the term's end) and when
 * it is made (`stage` renewal, at the term's end), what it was priced at, the equivalent new-business
 * price it may not exceed, last year's price and the rate book version used; or why the version would
 * not renew it (`outcome` declined, referred or unrated).
 *
 * - Owned by the rating module, which prices the renewal and writes the row in the transaction that
 *   stores or makes the renewal; placed with the policy (distributed by `policy_id`).
 * - The yearly estimates are integer pence, for the report of renewals priced at the cap; the full
 *   `pricing` blocks are kept as JSONB, as the policy version holds them.
 * - A row is never changed: a renewal priced again (a new notice, then the renewal itself) adds one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table renewal_prices (
      id uuid not null default gen_random_uuid(),
      company_id uuid not null references companies (id),
      environment text not null,
      policy_id uuid not null constraint renewal_prices_policy_fkey references policies (id),
      policy_reference text not null,
      product_id uuid not null references products (id),
      product_reference text not null,
      rate_book_version_id uuid references rate_book_versions (id),
      stage text not null,
      outcome text not null,
      start_at timestamptz not null,
      rated_on date not null,
      cap_applied boolean not null,
      capped text[] not null default '{}',
      renewal_yearly_pence bigint,
      new_business_yearly_pence bigint,
      last_year_yearly_pence bigint,
      renewal_pricing jsonb,
      new_business_pricing jsonb,
      rated_pricing jsonb,
      last_year_pricing jsonb,
      reasons jsonb not null default '[]',
      priced_at timestamptz not null,
      constraint renewal_prices_pkey primary key (id, policy_id),
      constraint renewal_prices_environment_check check (environment in ('sandbox', 'production')),
      constraint renewal_prices_stage_check check (stage in ('notice', 'renewal')),
      constraint renewal_prices_outcome_check check (
        outcome in ('priced', 'declined', 'referred', 'unratable')),
      constraint renewal_prices_priced_check check (
        (outcome = 'priced') = (renewal_pricing is not null and new_business_pricing is not null
          and renewal_yearly_pence is not null and new_business_yearly_pence is not null
          and rate_book_version_id is not null)),
      constraint renewal_prices_cap_check check (
        renewal_yearly_pence is null or new_business_yearly_pence is null
        or renewal_yearly_pence <= new_business_yearly_pence)
    )`.execute(db);
  // A policy's renewal prices, newest first (the policy's page), and the report's month of renewals.
  await sql`
    create index renewal_prices_policy on renewal_prices (policy_id, priced_at desc)`.execute(db);
  await sql`
    create index renewal_prices_capped on renewal_prices (company_id, environment, start_at)
    where stage = 'renewal' and cap_applied`.execute(db);
}
