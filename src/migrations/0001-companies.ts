import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table companies (
      id uuid primary key default gen_random_uuid(),
      company_reference text not null constraint companies_reference_key unique,
      name text not null,
      client_id text not null constraint companies_client_id_key unique,
      production_secret_hash bytea not null,
      sandbox_secret_hash bytea not null,
      currency char(3) not null default 'GBP',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      secrets_rotated_at timestamptz
    )`.execute(db);
  await sql`
    create table housekeeping_runs (
      id bigint generated always as identity primary key,
      ran_at timestamptz not null default now(),
      deleted_rows integer not null default 0
    )`.execute(db);
}
