import { sql, type Kysely } from 'kysely';

/**
 * Bacs Direct Debit beside cards.
 *
 * - `companies.direct_debit_notice_working_days`: how many working days before a collection its advance
 *   notice is sent. The Bacs scheme's default is 10 working days (the Direct Debit Guarantee's wording);
 *   an originator may agree a shorter period with its payers, never under 3 working days.
 * - `direct_debit_mandates`: a policy's mandates, from the SetupIntent that asked for one to the
 *   processor's mandate (its reference, status, the account holder and the account's last digits).
 * - `payments` gain what a collection needs: the method it is collected by, its mandate, the London day
 *   it is collected on, when its advance notice was queued and when it settled; and two statuses:
 *   `scheduled` (announced, waiting for its day) and `processing` (submitted to Bacs, until the bank
 *   pays or returns it, about three working days).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table companies
      add column direct_debit_notice_working_days integer not null default 10,
      add constraint companies_direct_debit_notice_check
        check (direct_debit_notice_working_days between 3 and 30)`.execute(db);

  await sql`
    create table direct_debit_mandates (
      id uuid primary key default gen_random_uuid(),
      company_id uuid not null references companies (id),
      environment text not null,
      policy_id uuid not null references policies (id),
      provider text not null,
      provider_customer_id text not null,
      setup_intent_id text not null,
      payment_method_id text,
      provider_mandate_id text,
      reference text,
      status text not null,
      account_holder_name text,
      sort_code text,
      account_last4 text,
      is_default boolean not null default false,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      activated_at timestamptz,
      cancelled_at timestamptz,
      cancel_reason text,
      constraint direct_debit_mandates_environment_check check (environment in ('sandbox', 'production')),
      constraint direct_debit_mandates_status_check
        check (status in ('setup', 'pending', 'active', 'inactive')),
      constraint direct_debit_mandates_setup_intent_key unique (provider, setup_intent_id),
      constraint direct_debit_mandates_mandate_key unique (provider, provider_mandate_id)
    )`.execute(db);
  await sql`create index direct_debit_mandates_policy_idx on direct_debit_mandates (policy_id, created_at)`.execute(
    db,
  );
  // NOTE: one default method a policy: at most one default mandate (a card default lives with the processor).
  await sql`
    create unique index direct_debit_mandates_default_key on direct_debit_mandates (policy_id)
      where is_default`.execute(db);

  await sql`alter table payments drop constraint payments_status_check`.execute(db);
  await sql`
    alter table payments
      add constraint payments_status_check check (status in
        ('pending', 'succeeded', 'failed', 'refunded', 'requires_action', 'canceled', 'scheduled', 'processing')),
      add column method_type text not null default 'card',
      add column mandate_id uuid,
      add column collect_on date,
      add column notice_sent_at timestamptz,
      add column settled_at timestamptz,
      add constraint payments_method_type_check check (method_type in ('card', 'bacs_debit')),
      add constraint payments_mandate_fkey foreign key (mandate_id) references direct_debit_mandates (id),
      add constraint payments_collection_check check (method_type = 'card' or collect_on is not null)`.execute(
    db,
  );
  // The collections calendar reads a company's collections by day.
  await sql`
    create index payments_collections_idx on payments (company_id, environment, collect_on)
      where collect_on is not null`.execute(db);
  // The cash report counts a payment on the day its money moved: a Direct Debit when it settled.
  await sql`
    create index payments_tenant_cash_idx on payments
      (company_id, environment, (coalesce(settled_at, created_at)), id)`.execute(db);
}
