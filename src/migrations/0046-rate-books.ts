import { sql, type Kysely } from 'kysely';
import { auditTable } from './0027-back-office.ts';

/**
 * Rate books: the tables a product's prices are rated from, per company and environment, one rate book
 * per product, changed only by numbered versions.
 *
 * - A version holds its content (factors, bands, fees, rates, installment plans, underwriting rules)
 *   as JSONB, and moves draft → approved. "In force" is derived, not stored: on a date, the approved
 *   version with the latest `effective_from` at or before it. A draft's `effective_from` may be left
 *   empty (it then takes effect at its approval).
 * - Four eyes: the staff members who wrote a draft (`contributor_staff_ids`, and their names in `contributors`:
 *   the author and everyone who changed it) may not approve it; a check constraint holds it here as well as in the service.
 * - An approved version never changes and is never deleted: a trigger refuses it, whatever the client.
 * - Both tables are audited by the trigger of migration 0027 (a staff member's or the admin key's
 *   request records every row it changes, with its actor).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table rate_books (
      id uuid primary key default gen_random_uuid(),
      company_id uuid not null references companies (id),
      environment text not null,
      rate_book_reference text not null,
      product_id uuid not null references products (id),
      name text not null,
      created_at timestamptz not null,
      constraint rate_books_environment_check check (environment in ('sandbox', 'production')),
      constraint rate_books_reference_key unique (company_id, environment, rate_book_reference),
      constraint rate_books_product_key unique (product_id)
    )`.execute(db);
  await sql`
    create table rate_book_versions (
      id uuid primary key default gen_random_uuid(),
      rate_book_id uuid not null references rate_books (id),
      version_number integer not null,
      status text not null,
      content jsonb not null,
      effective_from timestamptz,
      author text not null,
      author_staff_id uuid references staff (id),
      contributor_staff_ids uuid[] not null default '{}',
      contributors text[] not null default '{}',
      approver text,
      approver_staff_id uuid references staff (id),
      approved_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint rate_book_versions_number_key unique (rate_book_id, version_number),
      constraint rate_book_versions_number_check check (version_number >= 1),
      constraint rate_book_versions_contributors_check check (
        cardinality(contributors) = cardinality(contributor_staff_ids)),
      constraint rate_book_versions_status_check check (status in ('draft', 'approved')),
      constraint rate_book_versions_approval_check check (
        (status = 'draft' and approver is null and approver_staff_id is null and approved_at is null)
        or (status = 'approved' and approver is not null and approver_staff_id is not null
            and approved_at is not null and effective_from is not null)),
      constraint rate_book_versions_four_eyes_check check (
        approver_staff_id is null or not (approver_staff_id = any (contributor_staff_ids)))
    )`.execute(db);
  // The versions in force are read by product and date: the approved ones, latest first.
  await sql`
    create index rate_book_versions_in_force on rate_book_versions (rate_book_id, effective_from desc)
    where status = 'approved'`.execute(db);
  await sql`
    create function milepost_rate_book_version_frozen() returns trigger language plpgsql as $$
    begin
      if OLD.status = 'approved' then
        raise exception 'rate book version % is approved and cannot be changed or deleted', OLD.id
          using errcode = 'P0001';
      end if;
      return case when TG_OP = 'DELETE' then OLD else NEW end;
    end $$`.execute(db);
  await sql`
    create trigger rate_book_versions_frozen before update or delete on rate_book_versions
    for each row execute function milepost_rate_book_version_frozen()`.execute(db);
  await auditTable(db, 'rate_books');
  await auditTable(db, 'rate_book_versions');
}
