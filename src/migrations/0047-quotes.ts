import { sql, type Kysely } from 'kysely';
import { auditTable } from './0027-back-office.ts';

/**
 * Quotes (issue 36): a price rated from a rate book version, kept with its breakdown and underwriting
 * decision, and bound at most once to a policy.
 *
 * - `quotes` holds what was asked (`input`, personal data), the `pricing` block, the `breakdown` and the
 *   decision. A referred quote carries its referral: pending until an operations or admin staff member
 *   approves or declines it with a reason. A quote not bound is pseudonymised after the company's
 *   retention (`pseudonymised_at`, `input` stripped of the person, `applicant_email` null).
 * - `quote_bindings`: one row per bound quote, its primary key the quote, so two policies racing to
 *   bind the same quote cannot both commit (a unique violation, not check-then-insert).
 * - `quote_settings`: per company, how long a quote may be bound (default 30 days) and how long a
 *   quote not bound keeps its personal data (default 90 days).
 * - `quotes` is audited by the trigger of migration 0027: a staff member's referral decision is in the
 *   staff audit trail with its actor.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table quotes (
      id uuid primary key default gen_random_uuid(),
      company_id uuid not null references companies (id),
      environment text not null,
      quote_reference uuid not null,
      quote_version_reference uuid not null,
      rate_book_version_id uuid not null references rate_book_versions (id),
      rate_book_reference text not null,
      rate_book_version integer not null,
      policy_reference text,
      applicant_email text,
      input jsonb not null,
      pricing jsonb not null,
      breakdown jsonb not null,
      decision text not null,
      reasons jsonb not null,
      referral_status text,
      referral_reason text,
      referral_decided_by text,
      referral_staff_id uuid references staff (id),
      referral_decided_at timestamptz,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      pseudonymised_at timestamptz,
      constraint quotes_environment_check check (environment in ('sandbox', 'production')),
      constraint quotes_reference_key unique (quote_reference),
      constraint quotes_decision_check check (decision in ('accept', 'refer', 'decline')),
      constraint quotes_referral_check check (
        (decision = 'refer' and referral_status in ('pending', 'approved', 'declined'))
        or (decision <> 'refer' and referral_status is null)),
      constraint quotes_referral_decided_check check (
        (referral_status is distinct from 'pending' and referral_status is not null
          and referral_reason is not null and referral_decided_by is not null
          and referral_decided_at is not null)
        or ((referral_status is null or referral_status = 'pending')
          and referral_reason is null and referral_decided_by is null and referral_decided_at is null)),
      constraint quotes_expiry_check check (expires_at > created_at)
    )`.execute(db);
  // The referral queue: a company's pending referrals, oldest first.
  await sql`
    create index quotes_referral_queue on quotes (company_id, environment, created_at)
    where referral_status = 'pending'`.execute(db);
  // Retention finds quotes still holding personal data, oldest first.
  await sql`create index quotes_retention on quotes (created_at) where pseudonymised_at is null`.execute(db);
  // Subject access and erasure find a person's quotes by their email.
  await sql`
    create index quotes_applicant on quotes (company_id, environment, applicant_email)
    where applicant_email is not null`.execute(db);
  await sql`
    create table quote_bindings (
      quote_id uuid primary key references quotes (id),
      policy_id uuid not null references policies (id),
      policy_version_id uuid not null,
      bound_at timestamptz not null
    )`.execute(db);
  await sql`create index quote_bindings_policy on quote_bindings (policy_id)`.execute(db);
  await sql`
    create table quote_settings (
      company_id uuid primary key references companies (id),
      validity_days integer not null default 30,
      retention_days integer not null default 90,
      updated_at timestamptz not null,
      constraint quote_settings_validity_check check (validity_days between 1 and 365),
      constraint quote_settings_retention_check check (retention_days between 1 and 3650)
    )`.execute(db);
  await auditTable(db, 'quotes');
  await auditTable(db, 'quote_settings');
}
