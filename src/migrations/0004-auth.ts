import { sql, type Kysely } from 'kysely';

/*
 * Policyholder login: signing keys, the NEW_PASSWORD_REQUIRED sessions, refresh tokens, reset codes and
 * failure throttles. Every secret is stored hashed (SHA-256 for 256-bit random tokens, argon2id for the
 * 6-digit reset codes, which are too small for a fast hash), except the private signing keys, which the
 * service must be able to use.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Bumped by every password change: access tokens carry it, so an older token stops working at once.
  await sql`alter table users add column session_generation integer not null default 0`.execute(db);
  await sql`alter table users add column last_login_at timestamptz`.execute(db);

  await sql`
    create table auth_signing_keys (
      kid text primary key,
      algorithm text not null check (algorithm = 'Ed25519'),
      public_jwk jsonb not null,
      private_key_pkcs8 text not null,
      created_at timestamptz not null,
      signs_until timestamptz not null,
      published_until timestamptz not null
    )`.execute(db);

  await sql`
    create table auth_login_sessions (
      id uuid primary key default gen_random_uuid(),
      token_hash bytea not null constraint auth_login_sessions_token_key unique,
      user_id uuid not null references users (id) on delete cascade,
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db);
  await sql`create index auth_login_sessions_user_idx on auth_login_sessions (user_id)`.execute(db);

  await sql`
    create table auth_refresh_tokens (
      id uuid primary key default gen_random_uuid(),
      family_id uuid not null,
      token_hash bytea not null constraint auth_refresh_tokens_token_key unique,
      user_id uuid not null references users (id) on delete cascade,
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      created_at timestamptz not null,
      expires_at timestamptz not null,
      rotated_at timestamptz,
      revoked_at timestamptz,
      revoked_reason text
    )`.execute(db);
  await sql`create index auth_refresh_tokens_family_idx on auth_refresh_tokens (family_id)`.execute(db);
  await sql`create index auth_refresh_tokens_user_idx on auth_refresh_tokens (user_id) where revoked_at is null`.execute(
    db,
  );
  await sql`create index auth_refresh_tokens_expiry_idx on auth_refresh_tokens (expires_at)`.execute(db);

  await sql`
    create table auth_reset_codes (
      id uuid primary key default gen_random_uuid(),
      user_id uuid not null references users (id) on delete cascade,
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      code_hash text not null,
      attempts integer not null default 0,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db);
  await sql`create index auth_reset_codes_user_idx on auth_reset_codes (user_id, created_at)`.execute(db);

  // Keyed by a SHA-256 of "kind, tenant, login or address": no username or address is stored in clear.
  await sql`
    create table auth_throttles (
      key_hash bytea primary key,
      failures integer not null,
      last_failure_at timestamptz not null,
      blocked_until timestamptz
    )`.execute(db);
  await sql`create index auth_throttles_last_failure_idx on auth_throttles (last_failure_at)`.execute(db);
}
