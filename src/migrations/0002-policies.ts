import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table users (
      id uuid primary key default gen_random_uuid(),
      user_reference text not null constraint users_reference_key unique,
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      email text not null,
      username text not null,
      first_names text not null,
      last_names text not null,
      password_hash text not null,
      password_is_temporary boolean not null,
      temporary_password_expires_at timestamptz,
      password_changed_at timestamptz,
      active boolean not null default true,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint users_tenant_email_key unique (company_id, environment, email),
      constraint users_tenant_username_key unique (company_id, environment, username)
    )`.execute(db);

  await sql`
    create table policies (
      id uuid primary key default gen_random_uuid(),
      policy_reference text not null constraint policies_reference_key unique,
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      user_id uuid not null references users (id),
      status text not null check (status in ('active', 'cancelled', 'lapsed')),
      version_count integer not null,
      current_start_at timestamptz not null,
      current_end_at timestamptz not null,
      auto_renew boolean not null default false,
      renewal_terms jsonb,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db);
  await sql`create index policies_tenant_idx on policies (company_id, environment, created_at)`.execute(db);
  await sql`create index policies_user_idx on policies (user_id)`.execute(db);
  // The renew/lapse job scans active policies whose term has ended.
  await sql`create index policies_term_end_idx on policies (current_end_at) where status = 'active'`.execute(
    db,
  );

  await sql`
    create table policy_versions (
      id uuid primary key default gen_random_uuid(),
      policy_id uuid not null references policies (id),
      sequence integer not null,
      version_type text not null check (version_type in ('nb', 'mta', 'st', 'cn', 'rn', 'ls')),
      snapshot jsonb not null,
      effective_at timestamptz not null,
      statement_start_at timestamptz,
      statement_end_at timestamptz,
      usage_premium_pence bigint,
      reason text,
      created_at timestamptz not null,
      constraint policy_versions_sequence_key unique (policy_id, sequence)
    )`.execute(db);

  await sql`
    create table events (
      id uuid primary key default gen_random_uuid(),
      sequence bigint generated always as identity,
      company_id uuid not null references companies (id),
      environment text not null,
      type text not null,
      data jsonb not null,
      created_at timestamptz not null
    )`.execute(db);
  await sql`create index events_tenant_idx on events (company_id, environment, sequence)`.execute(db);

  await sql`
    create table outbox_emails (
      id uuid primary key default gen_random_uuid(),
      company_id uuid references companies (id),
      environment text,
      template text not null,
      recipient text not null,
      subject text not null,
      text_body text,
      html_body text,
      status text not null check (status in ('pending', 'sent', 'logged', 'failed')),
      attempts integer not null default 0,
      last_error text,
      created_at timestamptz not null,
      sent_at timestamptz
    )`.execute(db);
}
