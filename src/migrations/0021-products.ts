import { sql, type Kysely } from 'kysely';

/**
 * Products: what a policy's `product_reference` names, per company and environment, with the
 * pay-by-mile rules it bills by. Rules change by versions, each effective from a time, so the rules
 * in force on any past day stay known.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table products (
      id uuid primary key default gen_random_uuid(),
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      product_reference text not null,
      usage_unit text not null check (usage_unit in ('mile', 'km')),
      created_at timestamptz not null,
      constraint products_reference_key unique (company_id, environment, product_reference)
    )`.execute(db);
  await sql`
    create table product_versions (
      id uuid primary key default gen_random_uuid(),
      product_id uuid not null references products (id) on delete cascade,
      sequence integer not null,
      name text not null,
      rules jsonb not null,
      effective_from timestamptz not null,
      created_at timestamptz not null,
      constraint product_versions_sequence_key unique (product_id, sequence)
    )`.execute(db);
}
