import type { Generated } from 'kysely';
import type { Executor } from '../../schema.ts';

export interface CompanyTables {
  companies: {
    id: Generated<string>;
    company_reference: string;
    name: string;
    client_id: string;
    production_secret_hash: Buffer;
    sandbox_secret_hash: Buffer;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
    secrets_rotated_at: Date | null;
    /** Where operational emails (a webhook endpoint disabled) go; added by migration 0006. */
    contact_email: string | null;
    /** The company's key to the built-in Stripe sandbox (migration 0017). */
    stripe_sandbox_key: string;
    /** Working days between a Direct Debit's advance notice and its collection (migration 0044; 3–30). */
    direct_debit_notice_working_days: Generated<number>;
  };
}

export interface CompanyRecord {
  readonly id: string;
  readonly companyReference: string;
  readonly name: string;
  readonly clientId: string;
  readonly productionSecretHash: Uint8Array;
  readonly sandboxSecretHash: Uint8Array;
  readonly createdAt: Date;
  readonly secretsRotatedAt: Date | null;
  readonly contactEmail: string | null;
  readonly stripeSandboxKey: string;
}

const columns = [
  'id',
  'company_reference',
  'name',
  'client_id',
  'production_secret_hash',
  'sandbox_secret_hash',
  'created_at',
  'secrets_rotated_at',
  'contact_email',
  'stripe_sandbox_key',
] as const;

function toRecord(row: {
  id: string;
  company_reference: string;
  name: string;
  client_id: string;
  production_secret_hash: Buffer;
  sandbox_secret_hash: Buffer;
  created_at: Date;
  secrets_rotated_at: Date | null;
  contact_email: string | null;
  stripe_sandbox_key: string;
}): CompanyRecord {
  return {
    id: row.id,
    companyReference: row.company_reference,
    name: row.name,
    clientId: row.client_id,
    productionSecretHash: row.production_secret_hash,
    sandboxSecretHash: row.sandbox_secret_hash,
    createdAt: row.created_at,
    secretsRotatedAt: row.secrets_rotated_at,
    contactEmail: row.contact_email,
    stripeSandboxKey: row.stripe_sandbox_key,
  };
}

export async function insertCompany(
  db: Executor,
  values: {
    companyReference: string;
    name: string;
    clientId: string;
    productionSecretHash: Buffer;
    sandboxSecretHash: Buffer;
    contactEmail?: string | null;
    stripeSandboxKey: string;
    at: Date;
  },
): Promise<CompanyRecord> {
  const row = await db
    .insertInto('companies')
    .values({
      company_reference: values.companyReference,
      name: values.name,
      client_id: values.clientId,
      production_secret_hash: values.productionSecretHash,
      sandbox_secret_hash: values.sandboxSecretHash,
      contact_email: values.contactEmail ?? null,
      stripe_sandbox_key: values.stripeSandboxKey,
      created_at: values.at,
      updated_at: values.at,
    })
    .returning(columns)
    .executeTakeFirstOrThrow();
  return toRecord(row);
}

export async function findCompanyByClientId(
  db: Executor,
  clientId: string,
): Promise<CompanyRecord | undefined> {
  const row = await db
    .selectFrom('companies')
    .select(columns)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

export async function findCompanyByReference(
  db: Executor,
  companyReference: string,
): Promise<CompanyRecord | undefined> {
  const row = await db
    .selectFrom('companies')
    .select(columns)
    .where('company_reference', '=', companyReference)
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

export async function findCompanyById(db: Executor, id: string): Promise<CompanyRecord | undefined> {
  const row = await db.selectFrom('companies').select(columns).where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

export async function listCompanies(
  db: Executor,
  page: { limit: number; afterReference?: string | undefined },
): Promise<CompanyRecord[]> {
  let query = db.selectFrom('companies').select(columns).orderBy('company_reference').limit(page.limit);
  if (page.afterReference !== undefined) query = query.where('company_reference', '>', page.afterReference);
  return (await query.execute()).map(toRecord);
}

export async function updateCompanySecrets(
  db: Executor,
  id: string,
  hashes: { productionSecretHash?: Buffer; sandboxSecretHash?: Buffer; at: Date },
): Promise<CompanyRecord | undefined> {
  const row = await db
    .updateTable('companies')
    .set({
      ...(hashes.productionSecretHash === undefined
        ? {}
        : { production_secret_hash: hashes.productionSecretHash }),
      ...(hashes.sandboxSecretHash === undefined ? {} : { sandbox_secret_hash: hashes.sandboxSecretHash }),
      secrets_rotated_at: hashes.at,
      updated_at: hashes.at,
    })
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/** A company's name and contact email, read in the caller's transaction (for operational emails). */
export async function findCompanyContact(
  db: Executor,
  id: string,
): Promise<{ name: string; contactEmail: string | null; clientId: string } | undefined> {
  const row = await db
    .selectFrom('companies')
    .select(['name', 'contact_email', 'client_id'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { name: row.name, contactEmail: row.contact_email, clientId: row.client_id };
}

/** The company's key to the built-in Stripe sandbox. */
export async function findSandboxKey(db: Executor, companyId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('companies')
    .select('stripe_sandbox_key')
    .where('id', '=', companyId)
    .executeTakeFirst();
  return row?.stripe_sandbox_key;
}

/** The company's Direct Debit settings: its name (the Guarantee names it) and its advance notice in working days. */
export async function findDirectDebitSettings(
  db: Executor,
  companyId: string,
): Promise<{ name: string; noticeWorkingDays: number } | undefined> {
  const row = await db
    .selectFrom('companies')
    .select(['name', 'direct_debit_notice_working_days'])
    .where('id', '=', companyId)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { name: row.name, noticeWorkingDays: row.direct_debit_notice_working_days };
}

/** Sets the company's Direct Debit advance notice (working days, 3–30: the column's CHECK); false when no such company. */
export async function updateDirectDebitNotice(
  db: Executor,
  companyId: string,
  noticeWorkingDays: number,
  at: Date,
): Promise<boolean> {
  const updated = await db
    .updateTable('companies')
    .set({ direct_debit_notice_working_days: noticeWorkingDays, updated_at: at })
    .where('id', '=', companyId)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}
