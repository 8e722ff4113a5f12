import { londonDate } from '../../../platform/london-calendar.ts';
import type { FieldError, PolicyInput } from '../../policies/rules/index.ts';
import type { QuoteInput, RatedPricing } from '../../rating/rules/index.ts';

/*
 * The rules of a quote's life (issue 36, items 3, 4 and 9): when it may be bound, whether the pricing a
 * policy sends is the quote's, and what is left of it once its personal data is gone. Pure: the time
 * is an argument.
 */

export type QuoteDecision = 'accept' | 'refer' | 'decline';
export type ReferralStatus = 'pending' | 'approved' | 'declined';

/** A quote's input as stored: the quote as asked, or its pseudonym once the retention has passed. */
export type StoredQuoteInput = QuoteInput | PseudonymisedQuoteInput;

/** What a pseudonymised quote keeps: nothing that names or locates a person or their car. */
export interface PseudonymisedQuoteInput {
  readonly pseudonymised: true;
  readonly policy: {
    readonly product_reference?: string | undefined;
    readonly start_date: number;
    readonly end_date: number;
    readonly cover: string;
    readonly usage: string;
  };
  readonly installment_plan?: QuoteInput['installment_plan'];
}

export const isPseudonymised = (input: StoredQuoteInput): input is PseudonymisedQuoteInput =>
  'pseudonymised' in input;

/** A quote as the binding rules see it. */
export interface BindableQuote {
  readonly decision: QuoteDecision;
  readonly referralStatus: ReferralStatus | null;
  readonly expiresAt: Date;
  readonly boundAt: Date | null;
  readonly pseudonymisedAt: Date | null;
  /** The policy an adjustment quote rates; null for new business. */
  readonly policyReference: string | null;
  /** The term it rates (Unix seconds). */
  readonly input: { readonly policy: { readonly start_date: number } };
}

export type NotBindable =
  | 'DECLINED'
  | 'REFERRAL_PENDING'
  | 'REFERRAL_DECLINED'
  | 'EXPIRED'
  | 'START_PASSED'
  | 'BOUND'
  | 'WRONG_POLICY';

const NOT_BINDABLE_MESSAGES: Readonly<Record<NotBindable, string>> = {
  DECLINED: 'The quote was declined by underwriting and cannot be bound',
  REFERRAL_PENDING: 'The quote is referred to an underwriter and cannot be bound until it is approved',
  REFERRAL_DECLINED: 'The quote’s referral was declined by an underwriter and cannot be bound',
  EXPIRED: 'The quote has expired: ask for a new one',
  START_PASSED: 'The cover the quote prices was to start on a day that has passed: ask for a new quote',
  BOUND: 'The quote is bound already: a quote binds once',
  WRONG_POLICY: 'The quote rates a different policy (or new business): bind it where it applies',
};

export const notBindableMessage = (reason: NotBindable): string => NOT_BINDABLE_MESSAGES[reason];

/**
 * Whether new cover starting at `startSeconds` may still be sold at `now`: not on a day (London) that
 * has passed. Cover bought on its start day starts when it is bought (`boundStartSeconds`).
 *
 * NOTE: cover is never sold for a time already past: a buyer could otherwise insure a loss that has
 * happened (an accident this morning, or any day since a quote made for it). A quote stays bindable for
 * `validity_days`, so a quote for today bought next week would have backdated its cover by a week.
 */
export const startHasPassed = (startSeconds: number, now: Date): boolean =>
  londonDate(new Date(startSeconds * 1000)) < londonDate(now);

/** When cover bought at `now` from a quote for `quotedStartSeconds` starts: its start, or now if later. */
export const boundStartSeconds = (quotedStartSeconds: number, now: Date): number =>
  Math.max(quotedStartSeconds, Math.ceil(now.getTime() / 1000));

/**
 * Whether `quote` may be bound at `now`, for the policy `policyReference` (undefined: new business):
 * accepted, or referred and approved; not expired (`expires_at` is exclusive); for new business, its
 * start not on a day that has passed; never bound before.
 */
export function bindability(
  quote: BindableQuote,
  now: Date,
  policyReference: string | undefined,
): { ok: true } | { ok: false; reason: NotBindable } {
  if (quote.boundAt !== null) return { ok: false, reason: 'BOUND' };
  if (quote.decision === 'decline') return { ok: false, reason: 'DECLINED' };
  if (quote.decision === 'refer' && quote.referralStatus === 'pending')
    return { ok: false, reason: 'REFERRAL_PENDING' };
  if (quote.decision === 'refer' && quote.referralStatus !== 'approved')
    return { ok: false, reason: 'REFERRAL_DECLINED' };
  if ((quote.policyReference ?? undefined) !== policyReference) return { ok: false, reason: 'WRONG_POLICY' };
  // A pseudonymised quote has expired (retention runs only on expired quotes); the check is the same.
  if (now.getTime() >= quote.expiresAt.getTime() || quote.pseudonymisedAt !== null)
    return { ok: false, reason: 'EXPIRED' };
  if (quote.policyReference === null && startHasPassed(quote.input.policy.start_date, now))
    return { ok: false, reason: 'START_PASSED' };
  return { ok: true };
}

/** The `pricing` fields a bound policy takes from its quote (the quote's own references are added). */
const PRICING_FIELDS = [
  'upfront_rate',
  'subscription_rate',
  'usage_rate',
  'usage_unit',
  'subscription_installments',
  'upfront_premium',
  'subscription_premium',
  'usage_premium',
  'base_premium',
  'yearly_premium_estimate',
  'total_excess',
  'estimated_distance',
  'withhold_fee',
  'deposit_fee',
  'admin_fee',
  'mta_fee',
  'cancel_fee',
  'ipt_rate',
  'commission_rate',
] as const satisfies ReadonlyArray<keyof RatedPricing>;

type Pricing = PolicyInput['pricing'];

/** The interface's `pricing` block of a quote: its rated amounts and its three references. */
export function quotePricing(
  rated: RatedPricing,
  references: { quote: string; version: string; model: string },
): Pricing {
  const pricing: Record<string, unknown> = {
    quote_reference: references.quote,
    quote_version_reference: references.version,
    quote_model_reference: references.model,
  };
  for (const field of PRICING_FIELDS) pricing[field] = rated[field];
  return pricing as Pricing;
}

/**
 * Every field of `sent` that is not the quote's (`quoted`, from `quotePricing`): a field left out
 * takes the quote's value, one sent must equal it. Numbers are compared as the JSON numbers they are
 * (pounds with at most two places, rates with at most six), so 12 and 12.0 are the same.
 */
export function pricingDifferences(sent: Pricing, quoted: Pricing): FieldError[] {
  const errors: FieldError[] = [];
  const sentFields = sent as Record<string, unknown>;
  const quotedFields = quoted as Record<string, unknown>;
  for (const [field, value] of Object.entries(sentFields)) {
    if (value === undefined) continue;
    const expected = quotedFields[field];
    if (value !== expected)
      errors.push({
        path: `/body/pricing/${field}`,
        message: `is ${JSON.stringify(value)}; the quote’s is ${expected === undefined ? 'not set' : JSON.stringify(expected)}`,
      });
  }
  return errors;
}

/**
 * What a quote keeps once its retention has passed unbound (UK GDPR Art. 5(1)(e), storage
 * limitation): the product, term, cover and use, for pricing statistics; no name, contact, date of
 * birth, address, registration or history.
 */
export function pseudonymisedInput(input: StoredQuoteInput): PseudonymisedQuoteInput {
  if (isPseudonymised(input)) return input;
  return {
    pseudonymised: true,
    policy: {
      product_reference: input.policy.product_reference,
      start_date: input.policy.start_date,
      end_date: input.policy.end_date,
      cover: input.policy.cover,
      usage: input.policy.usage,
    },
    ...(input.installment_plan === undefined ? {} : { installment_plan: input.installment_plan }),
  };
}

const DAY_MS = 86_400_000;

/** When a quote made at `at` stops being bindable: `validityDays` whole days later. */
export const expiryOf = (at: Date, validityDays: number): Date =>
  new Date(at.getTime() + validityDays * DAY_MS);
