import { sql, type Generated } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { LogoMediaType } from './template-logo.ts';

export interface TemplateTables {
  document_logos: {
    id: Generated<string>;
    company_id: string;
    environment: string;
    media_type: LogoMediaType;
    sha256: string;
    size_bytes: number;
    width_px: number;
    height_px: number;
    bytes: Uint8Array;
    created_at: Date;
  };
  document_templates: {
    id: Generated<string>;
    company_id: string;
    environment: string;
    version: number;
    product_reference: string | null;
    /** A London calendar day, `YYYY-MM-DD`. */
    effective_from: string;
    company_name: string;
    insurer_name: string;
    colour_hex: string;
    logo_id: string | null;
    logo_sha256: string | null;
    created_at: Date;
  };
}

export interface LogoSummary {
  readonly mediaType: LogoMediaType;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly widthPx: number;
  readonly heightPx: number;
}

export interface TemplateRecord {
  /** Unique in the company and environment; issued documents record it. */
  readonly version: number;
  /** Null for the company-wide template. */
  readonly productReference: string | null;
  /** London calendar day `YYYY-MM-DD`. */
  readonly effectiveFrom: string;
  readonly companyName: string;
  readonly insurerName: string;
  readonly colourHex: string;
  readonly logo: LogoSummary | null;
  readonly createdAt: Date;
}

export interface TemplateLogo {
  readonly mediaType: LogoMediaType;
  readonly sha256: string;
  readonly bytes: Uint8Array;
}

const tenantTemplates = (db: Executor, tenant: Tenant) =>
  db
    .selectFrom('document_templates as t')
    .leftJoin('document_logos as l', 'l.id', 't.logo_id')
    .where(forTenant(tenant, 't'))
    .select([
      't.version',
      't.product_reference',
      't.effective_from',
      't.company_name',
      't.insurer_name',
      't.colour_hex',
      't.created_at',
      'l.media_type',
      'l.sha256',
      'l.size_bytes',
      'l.width_px',
      'l.height_px',
    ]);

type TemplateRow = Awaited<ReturnType<ReturnType<typeof tenantTemplates>['executeTakeFirstOrThrow']>>;

function toRecord(row: TemplateRow): TemplateRecord {
  const logo =
    row.media_type === null ||
    row.sha256 === null ||
    row.size_bytes === null ||
    row.width_px === null ||
    row.height_px === null
      ? null
      : {
          mediaType: row.media_type,
          sha256: row.sha256,
          sizeBytes: row.size_bytes,
          widthPx: row.width_px,
          heightPx: row.height_px,
        };
  return {
    version: row.version,
    productReference: row.product_reference,
    effectiveFrom: row.effective_from,
    companyName: row.company_name,
    insurerName: row.insurer_name,
    colourHex: row.colour_hex,
    logo,
    createdAt: row.created_at,
  };
}

/** Stores a logo once per company, environment and SHA-256 (hex); the id of the row holding it. */
export async function saveLogo(
  db: Executor,
  tenant: Tenant,
  logo: {
    mediaType: LogoMediaType;
    bytes: Uint8Array;
    sha256: string;
    widthPx: number;
    heightPx: number;
    at: Date;
  },
): Promise<string> {
  const inserted = await db
    .insertInto('document_logos')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      media_type: logo.mediaType,
      sha256: logo.sha256,
      size_bytes: logo.bytes.length,
      width_px: logo.widthPx,
      height_px: logo.heightPx,
      bytes: logo.bytes,
      created_at: logo.at,
    })
    .onConflict((oc) => oc.constraint('document_logos_sha256_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted !== undefined) return inserted.id;
  const existing = await db
    .selectFrom('document_logos')
    .select('id')
    .where(forTenant(tenant))
    .where('sha256', '=', logo.sha256)
    .executeTakeFirstOrThrow();
  return existing.id;
}

/**
 * Appends a template version numbered one past the tenant's latest, the caller holding the tenant's
 * versions (`lockTemplates`); the row is never changed afterwards.
 */
export async function insertTemplate(
  db: Executor,
  tenant: Tenant,
  values: {
    productReference: string | null;
    effectiveFrom: string;
    companyName: string;
    insurerName: string;
    colourHex: string;
    logo: { id: string; sha256: string } | null;
    at: Date;
  },
): Promise<number> {
  const latest = await db
    .selectFrom('document_templates')
    .select(sql<number>`coalesce(max(version), 0)`.as('version'))
    .where(forTenant(tenant))
    .executeTakeFirstOrThrow();
  const version = latest.version + 1;
  await db
    .insertInto('document_templates')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      version,
      product_reference: values.productReference,
      effective_from: values.effectiveFrom,
      company_name: values.companyName,
      insurer_name: values.insurerName,
      colour_hex: values.colourHex,
      logo_id: values.logo?.id ?? null,
      logo_sha256: values.logo?.sha256 ?? null,
      created_at: values.at,
    })
    .execute();
  return version;
}

/** Every template version of the tenant, newest first. */
export async function listTemplates(db: Executor, tenant: Tenant): Promise<TemplateRecord[]> {
  const rows = await tenantTemplates(db, tenant).orderBy('t.version', 'desc').execute();
  return rows.map(toRecord);
}

/** One version of the tenant's templates, or undefined. */
export async function findTemplate(
  db: Executor,
  tenant: Tenant,
  version: number,
): Promise<TemplateRecord | undefined> {
  const row = await tenantTemplates(db, tenant).where('t.version', '=', version).executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/**
 * Holds the tenant's versions for the caller's transaction: versions written at once are numbered and
 * checked against their scope's latest in turn.
 */
export async function lockTemplates(trx: Executor, tenant: Tenant): Promise<void> {
  const key = `documents.templates:${tenant.companyId}:${tenant.environment}`;
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}

/** The latest `effective_from` among the versions of one scope (a product, or company-wide when null). */
export async function latestEffectiveFrom(
  db: Executor,
  tenant: Tenant,
  productReference: string | null,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('document_templates')
    .select('effective_from')
    .where(forTenant(tenant))
    .where('product_reference', productReference === null ? 'is' : '=', productReference)
    .orderBy('effective_from', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.effective_from;
}

/**
 * The version in effect on `onDate` (London `YYYY-MM-DD`): the product's own with the latest
 * `effective_from` not after that day (the later written on a tie), else the company-wide one chosen
 * the same way; undefined when neither has one in effect. One indexed read.
 */
export async function findTemplateInEffect(
  db: Executor,
  tenant: Tenant,
  productReference: string | null,
  onDate: string,
): Promise<(TemplateRecord & { logoBytes: Uint8Array | null }) | undefined> {
  const row = await tenantTemplates(db, tenant)
    .select('l.bytes')
    .where('t.effective_from', '<=', onDate)
    .where((eb) =>
      productReference === null
        ? eb('t.product_reference', 'is', null)
        : eb.or([eb('t.product_reference', 'is', null), eb('t.product_reference', '=', productReference)]),
    )
    .orderBy(sql`t.product_reference is null`)
    .orderBy('t.effective_from', 'desc')
    .orderBy('t.version', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return { ...toRecord(row), logoBytes: row.bytes };
}

/** The logo of one template version, or undefined when the version is not the tenant's or has none. */
export async function findTemplateLogo(
  db: Executor,
  tenant: Tenant,
  version: number,
): Promise<TemplateLogo | undefined> {
  const row = await db
    .selectFrom('document_templates as t')
    .innerJoin('document_logos as l', 'l.id', 't.logo_id')
    .select(['l.media_type', 'l.sha256', 'l.bytes'])
    .where(forTenant(tenant, 't'))
    .where('t.version', '=', version)
    .executeTakeFirst();
  return row === undefined ? undefined : { mediaType: row.media_type, sha256: row.sha256, bytes: row.bytes };
}
