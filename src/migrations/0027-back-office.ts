import { sql, type Kysely } from 'kysely';

/**
 * The back office: staff accounts and their sessions, the audit trail, and policy search.
 *
 * - Staff are the insurer's own people, apart from policyholders (`users`): one email each, a role,
 *   an argon2id hash, a TOTP secret once enrolled and the last time step a code was accepted at (a
 *   code works once).
 * - Sessions are server-side: the cookie carries a random token whose SHA-256 is kept here, with the
 *   session's CSRF token and its stage (a session that has not passed every step cannot act).
 * - The audit trail is written by the database itself: every audited table has a row trigger that,
 *   when the transaction carries a staff or admin-key action (`milepost.audit`, set by the service for
 *   that request's transactions only), records the row's before and after in `audit_records`, in the
 *   same transaction as the change. Outside such a request the trigger's WHEN clause is false and
 *   nothing runs. Secrets, hashes and bulky columns never enter the trail. Records are append-only.
 * - Search: each policy keeps a lower-case search text (its reference, policyholder names and email,
 *   vehicle registration and postcodes, with and without spaces), kept up to date by a trigger on new
 *   versions. On PostgreSQL a trigram index answers partial matches on millions of policies; the
 *   embedded PGlite has no pg_trgm and scans (fine at its scale).
 */

/** Tables whose changes are not staff actions (sign-in state, billing internals, queues, the processor sandbox). */
export const UNAUDITED_TABLES = [
  'audit_records',
  'staff_sessions',
  'positions',
  'kysely_migration',
  'kysely_migration_lock',
  'housekeeping_runs',
  'auth_throttles',
  'auth_login_sessions',
  'auth_refresh_tokens',
  'auth_reset_codes',
  'stripe_sandbox_idempotency',
  'stripe_sandbox_objects',
  'processed_payment_events',
  'webhook_pending_events',
  'webhook_delivery_attempts',
  'policy_usage_years',
  'usage_alerts',
];

/** Columns kept out of the audit trail: secrets and their hashes, rendered emails, routes, bookkeeping. */
const HIDDEN_COLUMNS = [
  'password_hash',
  'production_secret_hash',
  'sandbox_secret_hash',
  'stripe_sandbox_key',
  'token_hash',
  'code_hash',
  'key_hash',
  'private_key_pkcs8',
  'secret',
  'previous_secret',
  'totp_secret',
  'totp_pending_secret',
  'csrf_token',
  'text_body',
  'html_body',
  'response_body',
  'route',
  'search_text',
  'updated_at',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table staff (
      id uuid primary key default gen_random_uuid(),
      email text not null,
      role text not null check (role in ('admin', 'operations', 'viewer')),
      password_hash text not null,
      password_is_temporary boolean not null,
      totp_secret text,
      totp_pending_secret text,
      totp_last_step bigint,
      active boolean not null default true,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      last_sign_in_at timestamptz,
      constraint staff_email_key unique (email)
    )`.execute(db);
  await sql`
    create table staff_sessions (
      id uuid primary key default gen_random_uuid(),
      staff_id uuid not null references staff (id),
      token_hash bytea not null,
      csrf_token text not null,
      stage text not null check (stage in ('new_password', 'totp_enrol', 'totp', 'active')),
      created_at timestamptz not null,
      last_seen_at timestamptz not null,
      expires_at timestamptz not null,
      revoked_at timestamptz,
      constraint staff_sessions_token_key unique (token_hash)
    )`.execute(db);
  await sql`create index staff_sessions_staff on staff_sessions (staff_id)`.execute(db);

  await sql`
    create table audit_records (
      id bigint generated always as identity primary key,
      occurred_at timestamptz not null,
      request_id text not null,
      actor text not null,
      staff_id uuid,
      role text,
      action text not null,
      resource text,
      company_id uuid,
      environment text,
      policy_id uuid,
      source_address text,
      outcome text not null default 'ok' check (outcome in ('ok', 'denied')),
      table_name text,
      row_key text,
      operation text check (operation in ('insert', 'update', 'delete')),
      before jsonb,
      after jsonb
    )`.execute(db);
  await sql`create index audit_records_time on audit_records (occurred_at, id)`.execute(db);
  await sql`create index audit_records_request on audit_records (request_id)`.execute(db);
  await sql`create index audit_records_actor on audit_records (actor, id)`.execute(db);
  await sql`create index audit_records_policy on audit_records (policy_id, id) where policy_id is not null`.execute(
    db,
  );
  await sql`
    create function milepost_audit_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit records are append-only' using errcode = 'P0001';
    end $$`.execute(db);
  await sql`
    create trigger audit_records_append_only before update or delete on audit_records
    for each row execute function milepost_audit_append_only()`.execute(db);

  const hidden = sql.raw(`array[${HIDDEN_COLUMNS.map((c) => `'${c}'`).join(', ')}]`);
  await sql`
    create function milepost_audit_row() returns trigger language plpgsql as $$
    declare
      ctx jsonb := current_setting('milepost.audit')::jsonb;
      hidden text[] := ${hidden};
      o jsonb;
      n jsonb;
      before_fields jsonb;
      after_fields jsonb;
      data jsonb;
    begin
      if TG_TABLE_NAME = 'outbox_emails' then
        -- An email's data may hold a temporary password until it is rendered.
        hidden := hidden || array['data'];
      end if;
      if TG_OP <> 'INSERT' then o := to_jsonb(OLD) - hidden; end if;
      if TG_OP <> 'DELETE' then n := to_jsonb(NEW) - hidden; end if;
      if TG_OP = 'UPDATE' then
        select coalesce(jsonb_object_agg(key, value), '{}') into before_fields
          from jsonb_each(o) where value is distinct from n -> key;
        select coalesce(jsonb_object_agg(key, value), '{}') into after_fields
          from jsonb_each(n) where value is distinct from o -> key;
        if before_fields = '{}' and after_fields = '{}' then return null; end if;
      else
        before_fields := o;
        after_fields := n;
      end if;
      data := coalesce(n, o);
      insert into audit_records (occurred_at, request_id, actor, staff_id, role, action, resource,
        company_id, environment, policy_id, source_address, table_name, row_key, operation, before, after)
      values (
        (ctx ->> 'at')::timestamptz, ctx ->> 'request_id', ctx ->> 'actor', (ctx ->> 'staff_id')::uuid,
        ctx ->> 'role', ctx ->> 'action', ctx ->> 'resource',
        case when TG_TABLE_NAME = 'companies' then (data ->> 'id')::uuid
             else coalesce((data ->> 'company_id')::uuid, (ctx ->> 'company_id')::uuid) end,
        coalesce(data ->> 'environment', ctx ->> 'environment'),
        case when TG_TABLE_NAME = 'policies' then (data ->> 'id')::uuid
             else (data ->> 'policy_id')::uuid end,
        ctx ->> 'source_address', TG_TABLE_NAME,
        coalesce(data ->> 'id', data ->> 'policy_id', data ->> 'statement_id', data ->> 'event_id'),
        lower(TG_OP), before_fields, after_fields);
      return null;
    end $$`.execute(db);
  const tables = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
    order by 1`.execute(db);
  for (const { name } of tables.rows) {
    if (UNAUDITED_TABLES.includes(name)) continue;
    await auditTable(db, name);
  }

  // ── Search ──────────────────────────────────────────────────────────────────────────────────
  await sql`alter table policies add column search_text text`.execute(db);
  await sql`
    create function milepost_policy_search_text(reference text, snapshot jsonb) returns text
    language sql immutable as $$
      select lower(concat_ws(' ', reference,
        snapshot #>> '{proposer,first_names}', snapshot #>> '{proposer,last_names}',
        snapshot #>> '{proposer,email}',
        snapshot #>> '{vehicle,reg}', replace(snapshot #>> '{vehicle,reg}', ' ', ''),
        snapshot #>> '{policy,address,postcode}', replace(snapshot #>> '{policy,address,postcode}', ' ', ''),
        snapshot #>> '{vehicle,overnight_postcode}'))
    $$`.execute(db);
  await sql`
    create function milepost_policy_search_update() returns trigger language plpgsql as $$
    begin
      update policies set search_text = milepost_policy_search_text(policy_reference, new.snapshot)
      where id = new.policy_id;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger policy_versions_search after insert on policy_versions
    for each row when (new.snapshot is not null) execute function milepost_policy_search_update()`.execute(
    db,
  );
  await sql`
    update policies p set search_text = milepost_policy_search_text(p.policy_reference, v.snapshot)
    from (
      select distinct on (policy_id) policy_id, snapshot from policy_versions
      where snapshot is not null order by policy_id, sequence desc
    ) v
    where v.policy_id = p.id`.execute(db);
  const trigram = await sql`select 1 from pg_available_extensions where name = 'pg_trgm'`.execute(db);
  if (trigram.rows.length > 0) {
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`create index policies_search on policies using gin (search_text gin_trgm_ops)`.execute(db);
  }
}

/** The audit trigger on one table: a later migration that adds a table calls it too. */
export async function auditTable(db: Kysely<unknown>, table: string): Promise<void> {
  await sql`
    create trigger ${sql.id(`audit_${table}`)} after insert or update or delete on ${sql.table(table)}
    for each row when (coalesce(current_setting('milepost.audit', true), '') <> '')
    execute function milepost_audit_row()`.execute(db);
}
