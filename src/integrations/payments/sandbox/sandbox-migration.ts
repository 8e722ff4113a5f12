import { sql, type Kysely } from 'kysely';

/**
 * Tables of the built-in Stripe sandbox: its objects as JSON, and its idempotency keys.
 * Forward-only; runs unchanged on PGlite and PostgreSQL 15.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table stripe_sandbox_objects (
      id text constraint stripe_sandbox_objects_pkey primary key,
      type text not null,
      data jsonb not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db);
  await sql`create index stripe_sandbox_objects_type_idx on stripe_sandbox_objects (type, created_at desc)`.execute(
    db,
  );
  // NOTE: finding intents by metadata (search, reconciliation) is a jsonb containment query.
  await sql`create index stripe_sandbox_objects_data_idx on stripe_sandbox_objects using gin (data jsonb_path_ops)`.execute(
    db,
  );
  await sql`
    create table stripe_sandbox_idempotency (
      account text not null,
      key text not null,
      request_hash text not null,
      status integer,
      body jsonb,
      created_at timestamptz not null,
      constraint stripe_sandbox_idempotency_pkey primary key (account, key)
    )`.execute(db);
}
