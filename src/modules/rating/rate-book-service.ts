import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { findProducts } from '../products/index.ts';
import {
  approveDraft,
  insertRateBook,
  latestApprovedEffectiveFrom,
  listRateBooks,
  listVersions,
  type VersionActor,
} from './rate-book-repository.ts';
import {
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  type CreateRateBookInput,
  type CreateVersionInput,
  type RateBookExport,
  type RateBookVersionView,
  type RateBookView,
} from './rate-book-schemas.ts';
import { factorFromCsv, factorToCsv } from './rules/index.ts';
import { checkedContent, rateBookView, statusAt, versionInForceAt } from './rate-book-views.ts';
import {
  createRateBookContext,
  dateOf,
  effectiveFromProblem,
  type RateBookContext,
} from './rate-book-context.ts';

/** Rate books themselves: one per product. */
function rateBookUseCases({ db, clock, getBook, productOf }: RateBookContext) {
  return {
    /** A new rate book for one of the tenant's products (one per product); 409 when either is taken. */
    async create(tenant: Tenant, input: CreateRateBookInput): Promise<RateBookView> {
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const [product] = await findProducts(trx, tenant, [input.product_reference]);
        if (product === undefined)
          throw new AppError('UNKNOWN_PRODUCT', `No product ${input.product_reference}`, {
            errors: [{ path: '/body/product_reference', message: 'names no product of the company' }],
          });
        const book = await insertRateBook(trx, tenant, {
          reference: input.rate_book_reference,
          productId: product.id,
          name: input.name,
          at: now,
        });
        if (book === 'reference')
          throw new AppError('CONFLICT', `A rate book ${input.rate_book_reference} already exists`);
        if (book === 'product')
          throw new AppError('CONFLICT', `The product ${input.product_reference} has a rate book already`);
        return rateBookView(book, product.reference, [], now);
      });
    },
    /** The tenant's rate books with their versions' summaries, by reference. */
    async list(tenant: Tenant): Promise<RateBookView[]> {
      const now = clock.now();
      const books = await listRateBooks(db, tenant);
      const versions = await listVersions(
        db,
        books.map((b) => b.id),
      );
      const products = new Map((await findProducts(db, tenant)).map((p) => [p.id, p.reference]));
      return books.map((book) =>
        rateBookView(
          book,
          products.get(book.productId) ?? '',
          versions.filter((v) => v.rateBookId === book.id),
          now,
        ),
      );
    },
    /** One rate book and its versions' summaries; 404 for another tenant's. */
    async get(tenant: Tenant, reference: string): Promise<RateBookView> {
      const book = await getBook(db, tenant, reference);
      return rateBookView(
        book,
        (await productOf(db, tenant, book.productId)).reference,
        await listVersions(db, [book.id]),
        clock.now(),
      );
    },
  };
}

/** Writing drafts: from JSON, from an exported file, a factor's table from CSV. */
function draftUseCases({ clock, draft, rewrite }: RateBookContext) {
  return {
    /** A new draft from JSON content; 422 naming every bad cell. */
    async createVersion(
      tenant: Tenant,
      actor: VersionActor,
      reference: string,
      input: CreateVersionInput,
    ): Promise<RateBookVersionView> {
      const content = checkedContent(input.content, '/body/content');
      return draft(tenant, actor, reference, content, dateOf(input.effective_from));
    },
    /** A new draft from an exported version (of this rate book or another, e.g. sandbox to production). */
    async importVersion(
      tenant: Tenant,
      actor: VersionActor,
      reference: string,
      input: { content: Record<string, unknown>; effective_from?: string | null },
    ): Promise<RateBookVersionView> {
      const content = checkedContent(input.content, '/body/content');
      // NOTE: a file's date is kept while it is still to come (a dated change promoted from sandbox);
      // a date that has passed (an old version re-imported) is dropped: the draft takes its approval's.
      const effectiveFrom = dateOf(input.effective_from);
      const kept = effectiveFrom !== null && effectiveFrom > clock.now() ? effectiveFrom : null;
      return draft(tenant, actor, reference, content, kept);
    },
    /** Replaces a draft's content and date; 409 once approved. */
    async updateVersion(
      tenant: Tenant,
      actor: VersionActor,
      reference: string,
      number: number,
      input: CreateVersionInput,
    ): Promise<RateBookVersionView> {
      const content = checkedContent(input.content, '/body/content');
      return rewrite(tenant, actor, reference, number, () => ({
        content,
        effectiveFrom: dateOf(input.effective_from),
      }));
    },

    /** Replaces one factor's table in a draft from CSV; 422 naming each bad cell by row and column. */
    async importFactorCsv(
      tenant: Tenant,
      actor: VersionActor,
      reference: string,
      number: number,
      factorName: string,
      csv: string,
    ): Promise<RateBookVersionView> {
      return rewrite(tenant, actor, reference, number, (version) => {
        const index = version.content.factors.findIndex((f) => f.name === factorName);
        const factor = version.content.factors[index];
        if (factor === undefined) throw notFound('rating factor');
        const parsed = factorFromCsv(csv, factor);
        if (!parsed.ok)
          throw new AppError('VALIDATION_FAILED', `The CSV of ${factorName} has bad cells`, {
            errors: parsed.problems.map((p) => ({
              path: `/body${p.row === null ? '' : `/${String(p.row)}`}${p.column === null ? '' : `/${p.column}`}`,
              message: p.message,
            })),
          });
        const factors = version.content.factors.map((f, i) =>
          i === index ? { ...f, rows: parsed.rows } : f,
        );
        const content = checkedContent({ ...version.content, factors }, '/body/content');
        return { content, effectiveFrom: version.effectiveFrom };
      });
    },
  };
}

/** Reading, exporting and approving versions. */
function versionUseCases({ db, clock, locate, viewOf }: RateBookContext) {
  return {
    /** One version with its content. */
    async getVersion(tenant: Tenant, reference: string, number: number): Promise<RateBookVersionView> {
      return viewOf(db, await locate(db, tenant, reference, number));
    },
    /** A version as a file that `importVersion` takes back. */
    async exportVersion(tenant: Tenant, reference: string, number: number): Promise<RateBookExport> {
      const now = clock.now();
      const located = await locate(db, tenant, reference, number);
      const inForce = versionInForceAt(await listVersions(db, [located.book.id]), now);
      return {
        format: EXPORT_FORMAT,
        format_version: EXPORT_FORMAT_VERSION,
        rate_book_reference: located.book.reference,
        product_reference: located.product.reference,
        version_number: located.version.number,
        status: statusAt(located.version, inForce, now),
        effective_from: located.version.effectiveFrom?.toISOString() ?? null,
        exported_at: now.toISOString(),
        content: located.version.content as unknown as Record<string, unknown>,
      };
    },
    /**
     * Approves a draft (four eyes): only a signed-in staff member who wrote none of it (403
     * FOUR_EYES_REQUIRED otherwise). From then on it never changes; it is in force from its
     * `effective_from` (now when it has none) until a later approved version's.
     */
    async approve(
      tenant: Tenant,
      actor: VersionActor,
      reference: string,
      number: number,
    ): Promise<RateBookVersionView> {
      const approverStaffId = actor.staffId;
      if (approverStaffId === null)
        throw new AppError(
          'FOUR_EYES_REQUIRED',
          'A rate book version is approved by a signed-in staff member (the console), not by client credentials',
        );
      return inTransaction(db, async (trx) => {
        const located = await locate(trx, tenant, reference, number, true);
        const { version } = located;
        if (version.status !== 'draft')
          throw new AppError('CONFLICT', `Version ${number} is approved already`);
        if (version.contributorStaffIds.includes(approverStaffId))
          throw new AppError(
            'FOUR_EYES_REQUIRED',
            `Version ${number} was written by ${actor.label}: another staff member must approve it`,
          );
        const now = clock.now();
        const problem = effectiveFromProblem(
          version.effectiveFrom,
          now,
          await latestApprovedEffectiveFrom(trx, located.book.id),
        );
        if (problem !== undefined)
          throw new AppError(
            'CONFLICT',
            `Version ${number} cannot be approved: its effective_from ${problem}`,
          );
        const approved = await approveDraft(trx, version.id, {
          approver: actor.label,
          approverStaffId,
          effectiveFrom: version.effectiveFrom ?? now,
          at: now,
        });
        if (approved === undefined) throw new AppError('CONFLICT', `Version ${number} is approved already`);
        return viewOf(trx, { ...located, version: approved });
      });
    },

    /** One factor's table as CSV. */
    async exportFactorCsv(tenant: Tenant, reference: string, number: number, factorName: string) {
      const { version } = await locate(db, tenant, reference, number);
      const factor = version.content.factors.find((f) => f.name === factorName);
      if (factor === undefined) throw notFound('rating factor');
      return { csv: factorToCsv(factor), filename: `${reference}-v${String(number)}-${factorName}.csv` };
    },
  };
}

/** Rate books and their versions: drafts, four-eyes approval, import and export. */
export function createRateBookService(deps: { db: Executor; clock: Clock }) {
  const ctx = createRateBookContext(deps);
  return { ...rateBookUseCases(ctx), ...draftUseCases(ctx), ...versionUseCases(ctx) };
}

export type RateBookService = ReturnType<typeof createRateBookService>;
