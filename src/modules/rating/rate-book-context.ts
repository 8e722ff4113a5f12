import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { findProducts } from '../products/index.ts';
import {
  findRateBook,
  findVersion,
  insertDraft,
  latestApprovedEffectiveFrom,
  listVersions,
  updateDraft,
  type RateBookRecord,
  type RateBookVersionRecord,
  type VersionActor,
} from './rate-book-repository.ts';
import type { RateBookVersionView } from './rate-book-schemas.ts';
import { versionInForceAt, versionView } from './rate-book-views.ts';
import type { RateBookContent } from './rules/index.ts';

/** The product a rate book rates, as its versions need it. */
interface RatedProduct {
  readonly reference: string;
  readonly usageUnit: 'mile' | 'km';
}

/** A version's place: its rate book, the product, and the version itself. */
interface Located {
  readonly book: RateBookRecord;
  readonly product: RatedProduct;
  readonly version: RateBookVersionRecord;
}

export const dateOf = (value: string | null | undefined): Date | null =>
  value === undefined || value === null ? null : new Date(value);

/**
 * Where a draft's `effective_from` may not be: before now (a version never takes effect in the past, so
 * what was in force on a day never changes), nor at or before an approved version's.
 */
export function effectiveFromProblem(
  effectiveFrom: Date | null,
  now: Date,
  latestApproved: Date | undefined,
): string | undefined {
  const effective = effectiveFrom ?? now;
  if (effective < now) return 'is in the past: a version takes effect at its approval at the earliest';
  if (latestApproved !== undefined && effective <= latestApproved)
    return `must be after the latest approved version's (${latestApproved.toISOString()})`;
  return undefined;
}

/** The version's distances and rate per unit are in the product's unit: 422 otherwise. */
function checkUnit(content: RateBookContent, product: RatedProduct): void {
  if (content.usage_unit !== product.usageUnit)
    throw new AppError(
      'VALIDATION_FAILED',
      `The product ${product.reference} is rated per ${product.usageUnit}`,
      {
        errors: [
          { path: '/body/content/usage_unit', message: `must be the product's unit, ${product.usageUnit}` },
        ],
      },
    );
}

/** What the rate book use cases share: lookups that 404, the version view, and writing drafts. */
export function createRateBookContext(deps: { db: Executor; clock: Clock }) {
  const { db, clock } = deps;

  const productOf = async (trx: Executor, tenant: Tenant, productId: string): Promise<RatedProduct> => {
    const product = (await findProducts(trx, tenant)).find((p) => p.id === productId);
    if (product === undefined) throw new AppError('INTERNAL', `rate book of a missing product ${productId}`);
    return { reference: product.reference, usageUnit: product.usageUnit };
  };

  const getBook = async (trx: Executor, tenant: Tenant, reference: string, lock = false) => {
    const book = await findRateBook(trx, tenant, reference, lock);
    if (book === undefined) throw notFound('rate book');
    return book;
  };

  const locate = async (
    trx: Executor,
    tenant: Tenant,
    reference: string,
    number: number,
    lock = false,
  ): Promise<Located> => {
    const book = await getBook(trx, tenant, reference, lock);
    const version = await findVersion(trx, book.id, number, lock);
    if (version === undefined) throw notFound('rate book version');
    return { book, product: await productOf(trx, tenant, book.productId), version };
  };

  const viewOf = async (trx: Executor, located: Located): Promise<RateBookVersionView> => {
    const now = clock.now();
    const inForce = versionInForceAt(await listVersions(trx, [located.book.id]), now);
    return versionView(located.book, located.product.reference, located.version, inForce, now);
  };

  const checkEffectiveFrom = async (trx: Executor, book: RateBookRecord, effectiveFrom: Date | null) => {
    // A draft without a date takes its approval's: only the approval can check it.
    if (effectiveFrom === null) return;
    const problem = effectiveFromProblem(
      effectiveFrom,
      clock.now(),
      await latestApprovedEffectiveFrom(trx, book.id),
    );
    if (problem !== undefined)
      throw new AppError('VALIDATION_FAILED', `effective_from ${problem}`, {
        errors: [{ path: '/body/effective_from', message: problem }],
      });
  };

  /** A new draft of `reference` from checked content. */
  const draft = (
    tenant: Tenant,
    actor: VersionActor,
    reference: string,
    content: RateBookContent,
    effectiveFrom: Date | null,
  ): Promise<RateBookVersionView> =>
    inTransaction(db, async (trx) => {
      const book = await getBook(trx, tenant, reference, true);
      const product = await productOf(trx, tenant, book.productId);
      checkUnit(content, product);
      await checkEffectiveFrom(trx, book, effectiveFrom);
      const version = await insertDraft(trx, book.id, {
        content,
        effectiveFrom,
        author: actor,
        at: clock.now(),
      });
      return viewOf(trx, { book, product, version });
    });

  /** Replaces a draft's content (and date); 409 once it is approved. */
  const rewrite = (
    tenant: Tenant,
    actor: VersionActor,
    reference: string,
    number: number,
    change: (version: RateBookVersionRecord) => { content: RateBookContent; effectiveFrom: Date | null },
  ): Promise<RateBookVersionView> =>
    inTransaction(db, async (trx) => {
      const located = await locate(trx, tenant, reference, number, true);
      if (located.version.status !== 'draft') throw approvedConflict(number);
      const { content, effectiveFrom } = change(located.version);
      checkUnit(content, located.product);
      await checkEffectiveFrom(trx, located.book, effectiveFrom);
      const version = await updateDraft(trx, located.version.id, {
        content,
        effectiveFrom,
        editor: actor,
        at: clock.now(),
      });
      if (version === undefined) throw approvedConflict(number);
      return viewOf(trx, { ...located, version });
    });

  return { db, clock, productOf, getBook, locate, viewOf, draft, rewrite };
}

export type RateBookContext = ReturnType<typeof createRateBookContext>;

const approvedConflict = (number: number): AppError =>
  new AppError(
    'CONFLICT',
    `Version ${number} is approved and never changes: create a new draft (POST …/versions) instead`,
  );
