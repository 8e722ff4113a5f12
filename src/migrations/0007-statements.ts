import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per statement; its id is the `st` policy version's. The unique keys are what make billing
  // exactly-once: one statement per policy and period start (so concurrent requests cannot overlap) and
  // one per policy and billing date (so a repeated billing run bills nobody twice).
  await sql`
    create table statements (
      id uuid primary key references policy_versions (id),
      policy_id uuid not null references policies (id),
      company_id uuid not null,
      environment text not null check (environment in ('sandbox', 'production')),
      period_start_at timestamptz not null,
      period_end_at timestamptz not null,
      billing_date date,
      final boolean not null default false,
      journey_count integer not null,
      distance_metres bigint not null,
      duration_seconds bigint not null,
      usage_premium_pence bigint not null,
      installments integer not null,
      subscription_premium_pence bigint not null,
      total_premium_pence bigint not null,
      credits_used_pence bigint not null,
      billed_premium_pence bigint not null,
      payment_id uuid references payments (id),
      created_at timestamptz not null,
      constraint statements_period_key unique (policy_id, period_start_at),
      constraint statements_billing_date_key unique (policy_id, billing_date),
      constraint statements_period_order check (period_end_at >= period_start_at),
      constraint statements_billed_not_negative check (billed_premium_pence >= 0 and credits_used_pence >= 0),
      constraint statements_totals_add_up check (total_premium_pence = usage_premium_pence + subscription_premium_pence
        and billed_premium_pence = total_premium_pence - credits_used_pence)
    )`.execute(db);
  await sql`create index statements_policy_end_idx on statements (policy_id, period_end_at desc)`.execute(db);

  // The credit ledger: + credits granted (a billed journey voided, goodwill, a refund kept as credit),
  // − credits used by statements. A policy's balance is the sum and never goes below zero.
  await sql`
    create table policy_credits (
      id uuid primary key default gen_random_uuid(),
      policy_id uuid not null references policies (id),
      company_id uuid not null,
      environment text not null check (environment in ('sandbox', 'production')),
      amount_pence bigint not null check (amount_pence <> 0),
      source text not null check (source in ('void', 'goodwill', 'refund', 'statement')),
      reference text not null,
      reason text,
      created_at timestamptz not null,
      -- A void is credited once, and a statement draws on the ledger once.
      constraint policy_credits_source_reference_key unique (source, reference)
    )`.execute(db);
  await sql`create index policy_credits_policy_idx on policy_credits (policy_id)`.execute(db);
}
