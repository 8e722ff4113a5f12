import { sql, type Generated } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { RenewalPriceTable } from './renewal-price-repository.ts';
import type { RateBookContent } from './rules/index.ts';

export interface RatingTables {
  rate_books: {
    id: Generated<string>;
    company_id: string;
    environment: string;
    rate_book_reference: string;
    product_id: string;
    name: string;
    created_at: Date;
  };
  rate_book_versions: {
    id: Generated<string>;
    rate_book_id: string;
    version_number: number;
    status: 'draft' | 'approved';
    content: string | RateBookContent;
    effective_from: Date | null;
    author: string;
    author_staff_id: string | null;
    contributor_staff_ids: Generated<string[]>;
    contributors: Generated<string[]>;
    approver: string | null;
    approver_staff_id: string | null;
    approved_at: Date | null;
    created_at: Date;
    updated_at: Date;
  };
  renewal_prices: RenewalPriceTable;
}

/** A rate book: one per product, per company and environment. */
export interface RateBookRecord {
  readonly id: string;
  readonly reference: string;
  readonly productId: string;
  readonly name: string;
  readonly createdAt: Date;
}

/** Who acted on a version: a staff member (by id) or the company's integration (client credentials). */
export interface VersionActor {
  /** `staff:<email>` or `integration`. */
  readonly label: string;
  readonly staffId: string | null;
}

export interface RateBookVersionRecord {
  readonly id: string;
  readonly rateBookId: string;
  readonly number: number;
  readonly status: 'draft' | 'approved';
  readonly content: RateBookContent;
  /** Null on a draft that takes effect at its approval. */
  readonly effectiveFrom: Date | null;
  readonly author: string;
  readonly authorStaffId: string | null;
  /** The staff members who wrote the draft: its author and everyone who changed it. */
  readonly contributorStaffIds: readonly string[];
  /** Their names (`staff:<email>`), in the same order. */
  readonly contributors: readonly string[];
  readonly approver: string | null;
  readonly approverStaffId: string | null;
  readonly approvedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

type VersionRow = {
  [K in keyof RatingTables['rate_book_versions']]: K extends 'id' | 'contributor_staff_ids' | 'contributors'
    ? RatingTables['rate_book_versions'][K] extends Generated<infer T>
      ? T
      : never
    : RatingTables['rate_book_versions'][K];
};

const toRateBook = (row: {
  id: string;
  rate_book_reference: string;
  product_id: string;
  name: string;
  created_at: Date;
}): RateBookRecord => ({
  id: row.id,
  reference: row.rate_book_reference,
  productId: row.product_id,
  name: row.name,
  createdAt: row.created_at,
});

const toVersion = (row: VersionRow): RateBookVersionRecord => ({
  id: row.id,
  rateBookId: row.rate_book_id,
  number: row.version_number,
  status: row.status,
  content: typeof row.content === 'string' ? (JSON.parse(row.content) as RateBookContent) : row.content,
  effectiveFrom: row.effective_from,
  author: row.author,
  authorStaffId: row.author_staff_id,
  contributorStaffIds: row.contributor_staff_ids,
  contributors: row.contributors,
  approver: row.approver,
  approverStaffId: row.approver_staff_id,
  approvedAt: row.approved_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const RATE_BOOK_COLUMNS = ['id', 'rate_book_reference', 'product_id', 'name', 'created_at'] as const;

/**
 * Inserts a rate book; `reference` or `product` when that one is taken already (a product has one rate
 * book), else the new row.
 */
export async function insertRateBook(
  db: Executor,
  tenant: Tenant,
  values: { reference: string; productId: string; name: string; at: Date },
): Promise<RateBookRecord | 'reference' | 'product'> {
  const taken = async (): Promise<'reference' | 'product' | undefined> => {
    const rows = await db
      .selectFrom('rate_books')
      .select(['rate_book_reference', 'product_id'])
      .where(forTenant(tenant))
      .where((eb) =>
        eb.or([eb('rate_book_reference', '=', values.reference), eb('product_id', '=', values.productId)]),
      )
      .execute();
    if (rows.some((r) => r.rate_book_reference === values.reference)) return 'reference';
    return rows.length > 0 ? 'product' : undefined;
  };
  const before = await taken();
  if (before !== undefined) return before;
  const row = await db
    .insertInto('rate_books')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      rate_book_reference: values.reference,
      product_id: values.productId,
      name: values.name,
      created_at: values.at,
    })
    // A racing insert of the same reference or product loses here rather than with a 500, and is
    // told which of the two the winner took (committed by then: the insert waited for it).
    .onConflict((oc) => oc.doNothing())
    .returning(RATE_BOOK_COLUMNS)
    .executeTakeFirst();
  return row === undefined ? ((await taken()) ?? 'reference') : toRateBook(row);
}

/** The tenant's rate books, by reference. */
export async function listRateBooks(db: Executor, tenant: Tenant): Promise<RateBookRecord[]> {
  const rows = await db
    .selectFrom('rate_books')
    .select(RATE_BOOK_COLUMNS)
    .where(forTenant(tenant))
    .orderBy('rate_book_reference')
    .execute();
  return rows.map(toRateBook);
}

/** The tenant's rate book under `reference`; with `lock`, its row is locked (versions are numbered under it). */
export async function findRateBook(
  db: Executor,
  tenant: Tenant,
  reference: string,
  lock = false,
): Promise<RateBookRecord | undefined> {
  let query = db
    .selectFrom('rate_books')
    .select(RATE_BOOK_COLUMNS)
    .where(forTenant(tenant))
    .where('rate_book_reference', '=', reference);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : toRateBook(row);
}

/** Every version of the rate books named, oldest first within each. */
export async function listVersions(
  db: Executor,
  rateBookIds: readonly string[],
): Promise<RateBookVersionRecord[]> {
  if (rateBookIds.length === 0) return [];
  const rows = await db
    .selectFrom('rate_book_versions')
    .selectAll()
    .where('rate_book_id', 'in', [...rateBookIds])
    .orderBy('rate_book_id')
    .orderBy('version_number')
    .execute();
  return rows.map(toVersion);
}

/** Version `number` of a rate book; `lock` takes its row's lock (for a change or an approval). */
export async function findVersion(
  db: Executor,
  rateBookId: string,
  number: number,
  lock = false,
): Promise<RateBookVersionRecord | undefined> {
  let query = db
    .selectFrom('rate_book_versions')
    .selectAll()
    .where('rate_book_id', '=', rateBookId)
    .where('version_number', '=', number);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : toVersion(row);
}

/** A new draft, numbered after the rate book's last version (the caller holds the rate book's lock). */
export async function insertDraft(
  db: Executor,
  rateBookId: string,
  values: { content: RateBookContent; effectiveFrom: Date | null; author: VersionActor; at: Date },
): Promise<RateBookVersionRecord> {
  const last = await db
    .selectFrom('rate_book_versions')
    .select((eb) => eb.fn.max('version_number').as('last'))
    .where('rate_book_id', '=', rateBookId)
    .executeTakeFirst();
  const row = await db
    .insertInto('rate_book_versions')
    .values({
      rate_book_id: rateBookId,
      version_number: (last?.last ?? 0) + 1,
      status: 'draft',
      content: JSON.stringify(values.content),
      effective_from: values.effectiveFrom,
      author: values.author.label,
      author_staff_id: values.author.staffId,
      contributor_staff_ids:
        values.author.staffId === null ? sql`'{}'::uuid[]` : sql`array[${values.author.staffId}]::uuid[]`,
      contributors:
        values.author.staffId === null ? sql`'{}'::text[]` : sql`array[${values.author.label}]::text[]`,
      created_at: values.at,
      updated_at: values.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toVersion(row);
}

/** Rewrites a draft's content and date, adding the editor to its contributors; undefined if it is no draft. */
export async function updateDraft(
  db: Executor,
  versionId: string,
  values: { content: RateBookContent; effectiveFrom: Date | null; editor: VersionActor; at: Date },
): Promise<RateBookVersionRecord | undefined> {
  const { staffId } = values.editor;
  const row = await db
    .updateTable('rate_book_versions')
    .set({
      content: JSON.stringify(values.content),
      effective_from: values.effectiveFrom,
      // NOTE: both arrays are appended together, so the n-th name is the n-th id's.
      contributor_staff_ids:
        staffId === null
          ? sql`contributor_staff_ids`
          : sql`case when ${staffId}::uuid = any (contributor_staff_ids) then contributor_staff_ids
                     else array_append(contributor_staff_ids, ${staffId}::uuid) end`,
      contributors:
        staffId === null
          ? sql`contributors`
          : sql`case when ${staffId}::uuid = any (contributor_staff_ids) then contributors
                     else array_append(contributors, ${values.editor.label}::text) end`,
      updated_at: values.at,
    })
    .where('id', '=', versionId)
    .where('status', '=', 'draft')
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : toVersion(row);
}

/** Approves a draft from `effectiveFrom`; undefined if it is no longer a draft. */
export async function approveDraft(
  db: Executor,
  versionId: string,
  values: { approver: string; approverStaffId: string; effectiveFrom: Date; at: Date },
): Promise<RateBookVersionRecord | undefined> {
  const row = await db
    .updateTable('rate_book_versions')
    .set({
      status: 'approved',
      effective_from: values.effectiveFrom,
      approver: values.approver,
      approver_staff_id: values.approverStaffId,
      approved_at: values.at,
      updated_at: values.at,
    })
    .where('id', '=', versionId)
    .where('status', '=', 'draft')
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : toVersion(row);
}

/** The latest `effective_from` among a rate book's approved versions (undefined before the first). */
export async function latestApprovedEffectiveFrom(
  db: Executor,
  rateBookId: string,
): Promise<Date | undefined> {
  const row = await db
    .selectFrom('rate_book_versions')
    .select('effective_from')
    .where('rate_book_id', '=', rateBookId)
    .where('status', '=', 'approved')
    .orderBy('effective_from', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.effective_from ?? undefined;
}

/** A version in force, with the rate book it belongs to. */
export interface VersionInForce {
  readonly rateBook: RateBookRecord;
  readonly version: RateBookVersionRecord;
}

/**
 * The version of the tenant's rate book for `productId` in force at `onDate`: the approved version with
 * the latest `effective_from` at or before it; undefined when the product has no rate book or none yet.
 */
export async function findVersionInForce(
  db: Executor,
  tenant: Tenant,
  productId: string,
  onDate: Date,
): Promise<VersionInForce | undefined> {
  const book = await db
    .selectFrom('rate_books')
    .select(RATE_BOOK_COLUMNS)
    .where(forTenant(tenant))
    .where('product_id', '=', productId)
    .executeTakeFirst();
  if (book === undefined) return undefined;
  const row = await db
    .selectFrom('rate_book_versions')
    .selectAll()
    .where('rate_book_id', '=', book.id)
    .where('status', '=', 'approved')
    .where('effective_from', '<=', onDate)
    .orderBy('effective_from', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : { rateBook: toRateBook(book), version: toVersion(row) };
}
