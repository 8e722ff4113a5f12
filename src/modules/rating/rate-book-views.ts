import { AppError, type FieldError } from '../../platform/errors.ts';
import type { RateBookRecord, RateBookVersionRecord } from './rate-book-repository.ts';
import type { RateBookVersionSummary, RateBookVersionView, RateBookView } from './rate-book-schemas.ts';
import { validateRateBookContent, type RateBookContent } from './rules/index.ts';

const iso = (at: Date | null): string | null => at?.toISOString() ?? null;

/**
 * The number of the version in force at `at` among a rate book's versions: the approved one with the
 * latest `effective_from` at or before it (effective dates of approved versions are distinct).
 */
export function versionInForceAt(versions: readonly RateBookVersionRecord[], at: Date): number | null {
  let found: RateBookVersionRecord | undefined;
  for (const v of versions) {
    if (v.status !== 'approved' || v.effectiveFrom === null || v.effectiveFrom > at) continue;
    if (found?.effectiveFrom == null || v.effectiveFrom > found.effectiveFrom) found = v;
  }
  return found?.number ?? null;
}

/** A version's status as the API tells it at `at`: draft and approved are stored, the rest derived. */
export function statusAt(
  version: RateBookVersionRecord,
  inForce: number | null,
  at: Date,
): RateBookVersionSummary['status'] {
  if (version.status === 'draft') return 'draft';
  if (version.number === inForce) return 'in_force';
  return version.effectiveFrom !== null && version.effectiveFrom > at ? 'approved' : 'superseded';
}

export function summaryView(
  version: RateBookVersionRecord,
  inForce: number | null,
  at: Date,
): RateBookVersionSummary {
  return {
    version_number: version.number,
    status: statusAt(version, inForce, at),
    effective_from: iso(version.effectiveFrom),
    author: version.author,
    approver: version.approver,
    approved_at: iso(version.approvedAt),
    created_at: version.createdAt.toISOString(),
    updated_at: version.updatedAt.toISOString(),
  };
}

export function rateBookView(
  book: RateBookRecord,
  productReference: string,
  versions: readonly RateBookVersionRecord[],
  at: Date,
): RateBookView {
  const inForce = versionInForceAt(versions, at);
  return {
    rate_book_reference: book.reference,
    product_reference: productReference,
    name: book.name,
    version_in_force: inForce,
    versions: versions.map((v) => summaryView(v, inForce, at)),
    created_at: book.createdAt.toISOString(),
  };
}

export function versionView(
  book: RateBookRecord,
  productReference: string,
  version: RateBookVersionRecord,
  inForce: number | null,
  at: Date,
): RateBookVersionView {
  return {
    rate_book_reference: book.reference,
    product_reference: productReference,
    ...summaryView(version, inForce, at),
    contributors: [...version.contributors],
    content: version.content as unknown as Record<string, unknown>,
  };
}

/**
 * `factors[2].rows[5].factor` (the validator's path) as a JSON pointer under `prefix`:
 * `/body/content/factors/2/rows/5/factor`.
 */
export function pointerOf(prefix: string, path: string): string {
  if (path === '' || path === '$') return prefix;
  if (path.startsWith('/')) return `${prefix}${path}`;
  const parts = path
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter((part) => part !== '')
    .map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1'));
  return `${prefix}/${parts.join('/')}`;
}

/** The content, checked cell by cell; 422 naming every bad cell under `prefix` otherwise. */
export function checkedContent(content: unknown, prefix: string): RateBookContent {
  const checked = validateRateBookContent(content);
  if (checked.ok) return checked.value;
  const errors: FieldError[] = checked.problems.map((p) => ({
    path: pointerOf(prefix, p.path),
    message: p.message,
  }));
  throw new AppError(
    'VALIDATION_FAILED',
    `The rate book version has ${errors.length} bad ${errors.length === 1 ? 'cell' : 'cells'}`,
    { errors },
  );
}
