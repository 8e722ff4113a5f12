import { randomUUID } from 'node:crypto';
import type { Executor } from '../../schema.ts';
import { AppError, type FieldError } from '../../platform/errors.ts';
import { londonDate } from '../../platform/london-calendar.ts';
import type { Tenant } from '../companies/index.ts';
import { findProducts } from '../products/index.ts';
import { createVersionMemo, findVersionInForce, type RememberedVersion } from '../rating/index.ts';
import { decide, rate, type QuoteInput } from '../rating/rules/index.ts';
import { findQuoteSettings, type NewQuote, type QuoteGuard } from './quote-repository.ts';
import { expiryOf } from './rules/index.ts';

/** What a quote is rated and stored on: the version in force at its start, and the company's validity. */
export interface QuoteTerms extends RememberedVersion {
  readonly validityDays: number;
}

/** A quote asked for: its input, its start and the policy it adjusts (null for new business), at `now`. */
export interface QuoteRequest {
  readonly input: QuoteInput;
  readonly now: Date;
  readonly startAt: Date;
  readonly policyReference: string | null;
}

/** A 422 naming each field. */
export function invalid(message: string, errors: FieldError[]): AppError {
  return new AppError(
    'VALIDATION_FAILED',
    `${message}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
    {
      errors,
    },
  );
}

/** `proposer.dob`, `additional_drivers.0.dob` → `/body/proposer/dob`: a rating problem's field in the request. */
const bodyPath = (path: string): string => `/body/${path.replace(/\[(\d+)\]/g, '.$1').replace(/\./g, '/')}`;

/** The quote rated and decided on `terms`, ready to store; or the rating's problems, as fields of the request. */
export function quoteOn(terms: QuoteTerms, request: QuoteRequest): NewQuote | FieldError[] {
  const { input, startAt, now, policyReference } = request;
  // NOTE: ages, licence years and the five-year windows are counted to the start of cover, which
  // is what the price is for (and a quote for a later start is rated as that day will find them).
  const ratedOn = londonDate(startAt);
  const { rateBook, version } = terms;
  const rated = rate(version.content, input, ratedOn);
  if (!rated.ok) return rated.problems.map((p) => ({ path: bodyPath(p.path), message: p.message }));
  const decision = decide(version.content, input, ratedOn);
  return {
    reference: randomUUID(),
    versionReference: randomUUID(),
    rateBookVersionId: version.id,
    rateBookReference: rateBook.reference,
    rateBookVersion: version.number,
    policyReference,
    input,
    pricing: rated.value.pricing,
    breakdown: rated.value.breakdown,
    decision: decision.decision,
    reasons: decision.reasons,
    createdAt: now,
    expiresAt: expiryOf(now, terms.validityDays),
  };
}

/**
 * The terms quotes are rated on: read from the database, or remembered from the last read. Remembered
 * terms are only a candidate (another process may have approved a version or changed the validity
 * since), so a quote on them is stored with `stillHold` as its guard, and read afresh when that fails.
 */
export function createQuoteTerms(db: Executor) {
  const memo = createVersionMemo();
  const validityDaysOf = new Map<string, number>();

  return {
    /**
     * The rate book version in force at the quote's start for its product and the company's validity,
     * read (and remembered); 422 when the quote names no product, an unknown one, or one with no
     * approved version in force then.
     */
    async read(tenant: Tenant, input: QuoteInput, startAt: Date): Promise<QuoteTerms> {
      const productReference = input.policy.product_reference;
      if (productReference === undefined)
        throw invalid('The quote names no product', [
          { path: '/body/policy/product_reference', message: 'is needed to find the rate book' },
        ]);
      const [product] = await findProducts(db, tenant, [productReference]);
      if (product === undefined)
        throw new AppError('UNKNOWN_PRODUCT', `No product ${productReference}`, {
          errors: [{ path: '/body/policy/product_reference', message: 'names no product of the company' }],
        });
      const inForce = await findVersionInForce(db, tenant, product.id, startAt);
      if (inForce === undefined)
        throw new AppError(
          'NO_RATE_BOOK',
          `The product ${productReference} has no approved rate book version in force on ${londonDate(startAt)}`,
          {
            errors: [
              { path: '/body/policy/product_reference', message: 'has no rate book in force at start_date' },
            ],
          },
        );
      const { validityDays } = await findQuoteSettings(db, tenant.companyId);
      memo.remember(tenant, productReference, product.id, inForce);
      if (validityDaysOf.size >= 10_000) validityDaysOf.clear();
      validityDaysOf.set(tenant.companyId, validityDays);
      return { ...inForce, productId: product.id, validityDays };
    },

    /** The terms remembered for a quote of this product starting at `startAt`; undefined if none. */
    remembered(tenant: Tenant, input: QuoteInput, startAt: Date): QuoteTerms | undefined {
      const productReference = input.policy.product_reference;
      const validityDays = validityDaysOf.get(tenant.companyId);
      if (productReference === undefined || validityDays === undefined) return undefined;
      const candidate = memo.candidate(tenant, productReference, startAt);
      return candidate === undefined ? undefined : { ...candidate, validityDays };
    },

    /** The guard under which a quote on `terms` is stored: they are still the terms in force. */
    stillHold(terms: QuoteTerms, startAt: Date): QuoteGuard {
      return { productId: terms.productId, startAt, validityDays: terms.validityDays };
    },
  };
}
