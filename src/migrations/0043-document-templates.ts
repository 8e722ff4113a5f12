import { sql, type Kysely } from 'kysely';
import { auditTable } from './0027-back-office.ts';

/**
 * Document templates: how a company's documents look (its display name, the insurer's name, a colour
 * and a logo), per company and environment, company-wide or for one product, in versions each effective
 * from a London calendar day. A version is never changed once written, and each carries a number unique
 * in the company and environment, which every issued document records.
 *
 * Logos are rows of their own, kept once per company, environment and SHA-256: the template row names
 * its logo by id and hash, so the audit trail (whose trigger copies whole rows) records which logo a
 * version has without copying its bytes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table document_logos (
      id uuid primary key default gen_random_uuid(),
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      media_type text not null,
      sha256 text not null,
      size_bytes integer not null,
      width_px integer not null,
      height_px integer not null,
      bytes bytea not null,
      created_at timestamptz not null,
      constraint document_logos_media_type_check check (media_type in ('image/png', 'image/svg+xml')),
      constraint document_logos_size_check check (size_bytes = octet_length(bytes) and size_bytes <= 262144),
      constraint document_logos_sha256_key unique (company_id, environment, sha256)
    )`.execute(db);
  await sql`
    create table document_templates (
      id uuid primary key default gen_random_uuid(),
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      version integer not null,
      product_reference text,
      effective_from date not null,
      company_name text not null,
      insurer_name text not null,
      colour_hex text not null,
      logo_id uuid references document_logos (id),
      logo_sha256 text,
      created_at timestamptz not null,
      constraint document_templates_version_key unique (company_id, environment, version),
      constraint document_templates_colour_check check (colour_hex ~ '^#[0-9a-f]{6}$'),
      constraint document_templates_logo_check check ((logo_id is null) = (logo_sha256 is null))
    )`.execute(db);
  // findBranding: the latest version in effect for a product or company-wide, newest first.
  await sql`
    create index document_templates_in_effect
    on document_templates (company_id, environment, product_reference, effective_from desc, version desc)`.execute(
    db,
  );
  await auditTable(db, 'document_templates');
}
