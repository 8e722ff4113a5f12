import { customerBreakdown } from '../rating/rules/index.ts';
import type { QuoteRecord } from './quote-repository.ts';
import type { QuoteView } from './quote-schemas.ts';
import { quotePricing, startHasPassed } from './rules/index.ts';

/** Who reads a quote: staff and the company's integration see all; the applicant what the insurer shows. */
export type QuoteAudience = 'full' | 'customer';

/** The quote's state at `now`, as one word. */
export function quoteStatus(quote: QuoteRecord, now: Date): QuoteView['status'] {
  if (quote.boundAt !== null) return 'bound';
  if (quote.decision === 'decline' || quote.referralStatus === 'declined') return 'declined';
  if (quote.referralStatus === 'pending') return 'referred';
  if (now.getTime() >= quote.expiresAt.getTime() || quote.pseudonymisedAt !== null) return 'expired';
  // New cover whose start day has passed is no longer sold (bindability: START_PASSED).
  if (quote.policyReference === null && startHasPassed(quote.input.policy.start_date, now)) return 'expired';
  return 'bindable';
}

/** A stored quote as the API shows it to `audience` at `now`. */
export function quoteView(quote: QuoteRecord, now: Date, audience: QuoteAudience): QuoteView {
  return {
    quote_reference: quote.reference,
    quote_version_reference: quote.versionReference,
    quote_model_reference: quote.rateBookVersionId,
    rate_book_reference: quote.rateBookReference,
    rate_book_version: quote.rateBookVersion,
    policy_reference: quote.policyReference,
    status: quoteStatus(quote, now),
    pricing: quotePricing(quote.pricing, {
      quote: quote.reference,
      version: quote.versionReference,
      model: quote.rateBookVersionId,
    }),
    breakdown: audience === 'full' ? quote.breakdown : customerBreakdown(quote.breakdown),
    decision: { outcome: quote.decision, reasons: [...quote.reasons] },
    referral:
      quote.referralStatus === null
        ? null
        : {
            status: quote.referralStatus,
            reason: quote.referralReason,
            // Which staff member decided is the insurer's to know, not the applicant's.
            decided_by: audience === 'full' ? quote.referralDecidedBy : null,
            decided_at: quote.referralDecidedAt?.toISOString() ?? null,
          },
    expires_at: quote.expiresAt.toISOString(),
    created_at: quote.createdAt.toISOString(),
    bound_at: quote.boundAt?.toISOString() ?? null,
    pseudonymised: quote.pseudonymisedAt !== null,
    ...(audience === 'full' ? { input: quote.input } : {}),
  };
}

/**
 * `view` of `quote` (with its purchase secret, if any) as JSON text: what the `Quote` schema's serializer
 * writes, its fields in the schema's order; a quote just stored gives the texts of its breakdown and
 * input as they were written to its row, rather than having them serialised again.
 */
export function quoteJson(
  view: QuoteView,
  quote: Pick<QuoteRecord, 'breakdown' | 'input' | 'storedTexts'>,
  purchaseSecret?: string,
): string {
  const { breakdown, decision, referral, expires_at, created_at, bound_at, pseudonymised, input } = view;
  const stored = quote.storedTexts;
  const head = JSON.stringify({
    quote_reference: view.quote_reference,
    quote_version_reference: view.quote_version_reference,
    quote_model_reference: view.quote_model_reference,
    rate_book_reference: view.rate_book_reference,
    rate_book_version: view.rate_book_version,
    policy_reference: view.policy_reference,
    status: view.status,
    pricing: view.pricing,
  });
  const breakdownText =
    stored !== undefined && breakdown === quote.breakdown ? stored.breakdown : JSON.stringify(breakdown);
  const tail = JSON.stringify({ decision, referral, expires_at, created_at, bound_at, pseudonymised });
  const inputText =
    input === undefined
      ? ''
      : `,"input":${stored !== undefined && input === quote.input ? stored.input : JSON.stringify(input)}`;
  const secretText =
    purchaseSecret === undefined ? '' : `,"purchase_secret":${JSON.stringify(purchaseSecret)}`;
  // head and tail are objects with fields, `{…}` each, spliced around the breakdown.
  return `${head.slice(0, -1)},"breakdown":${breakdownText},${tail.slice(1, -1)}${inputText}${secretText}}`;
}
