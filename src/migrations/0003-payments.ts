import { sql, type Kysely } from 'kysely';
import { sandboxMigration } from '../integrations/payments/index.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The built-in Stripe-compatible sandbox keeps its objects in the service's own database.
  await sandboxMigration.up(db);

  await sql`
    create table payment_customers (
      company_id uuid not null references companies (id),
      environment text not null,
      user_id uuid not null references users (id),
      provider text not null,
      provider_customer_id text not null,
      created_at timestamptz not null,
      constraint payment_customers_pkey primary key (company_id, environment, user_id, provider)
    )`.execute(db);

  await sql`
    create table payments (
      id uuid primary key default gen_random_uuid(),
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      policy_id uuid references policies (id),
      policy_version_id uuid references policy_versions (id),
      kind text not null check (kind in ('charge', 'refund')),
      purpose text not null check (purpose in ('new_business', 'adjustment', 'cancellation', 'statement', 'intent')),
      status text not null check (status in ('pending', 'succeeded', 'failed', 'refunded', 'requires_action', 'canceled')),
      amount_pence bigint not null check (amount_pence >= 0),
      refunded_pence bigint not null default 0,
      currency char(3) not null,
      provider text not null,
      provider_payment_id text,
      provider_customer_id text,
      payment_method_id text,
      refund_of uuid references payments (id),
      decline_code text,
      error_message text,
      attempts integer not null default 0,
      first_failed_at timestamptz,
      next_attempt_at timestamptz,
      awaiting_new_card boolean not null default false,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      -- A processor payment binds at most one policy payment: an intent cannot pay twice.
      constraint payments_provider_payment_key unique (provider, provider_payment_id)
    )`.execute(db);
  await sql`create index payments_policy_idx on payments (policy_id, created_at)`.execute(db);
  await sql`create index payments_version_idx on payments (policy_version_id)`.execute(db);
  // Dunning and reconciliation scan only payments that still have something to do.
  await sql`create index payments_due_idx on payments (next_attempt_at) where next_attempt_at is not null`.execute(
    db,
  );

  await sql`
    create table processed_payment_events (
      provider text not null,
      event_id text not null,
      type text not null,
      processed_at timestamptz not null,
      constraint processed_payment_events_pkey primary key (provider, event_id)
    )`.execute(db);
}
