import { sql, type Generated } from 'kysely';
import type { BatchedCall } from '../../platform/db/batched-calls.ts';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { MatchedRule, QuoteInput, RatedPricing, RatingBreakdown } from '../rating/rules/index.ts';
import type { QuoteDecision, ReferralStatus, StoredQuoteInput } from './rules/index.ts';

export interface QuoteTables {
  quotes: {
    id: Generated<string>;
    company_id: string;
    environment: string;
    quote_reference: string;
    quote_version_reference: string;
    rate_book_version_id: string;
    rate_book_reference: string;
    rate_book_version: number;
    policy_reference: string | null;
    applicant_email: string | null;
    input: string | StoredQuoteInput;
    pricing: string | RatedPricing;
    breakdown: string | RatingBreakdown;
    decision: QuoteDecision;
    reasons: string | MatchedRule[];
    referral_status: ReferralStatus | null;
    referral_reason: string | null;
    referral_decided_by: string | null;
    referral_staff_id: string | null;
    referral_decided_at: Date | null;
    created_at: Date;
    expires_at: Date;
    pseudonymised_at: Date | null;
    /** SHA-256 of the purchase secret of a quote asked with the client id alone (migration 0063). */
    purchase_secret_hash: Uint8Array | null;
  };
  quote_bindings: {
    quote_id: string;
    policy_id: string;
    policy_version_id: string;
    bound_at: Date;
  };
  quote_purchases: {
    quote_id: string;
    provider_payment_id: string;
    provider_customer_id: string;
    amount_pence: number;
    status: Generated<QuotePurchaseStatus>;
    created_at: Date;
    updated_at: Date;
  };
  quote_settings: {
    company_id: string;
    validity_days: Generated<number>;
    retention_days: Generated<number>;
    /** The product the public quote page quotes where its link names none (migration 0063). */
    quote_page_product: string | null;
    updated_at: Date;
  };
}

/**
 * `paying` until the policy took the payment; `refunded` when a paid quote could not be bound;
 * `cancelled` when an intent never paid was cancelled at the processor once its quote no longer bound.
 */
export type QuotePurchaseStatus = 'paying' | 'bound' | 'refunded' | 'cancelled';

/** A stored quote, as the service reads it. */
export interface QuoteRecord {
  readonly id: string;
  readonly companyId: string;
  readonly environment: string;
  readonly reference: string;
  readonly versionReference: string;
  readonly rateBookVersionId: string;
  readonly rateBookReference: string;
  readonly rateBookVersion: number;
  readonly policyReference: string | null;
  readonly applicantEmail: string | null;
  readonly input: StoredQuoteInput;
  readonly pricing: RatedPricing;
  readonly breakdown: RatingBreakdown;
  readonly decision: QuoteDecision;
  readonly reasons: readonly MatchedRule[];
  readonly referralStatus: ReferralStatus | null;
  readonly referralReason: string | null;
  readonly referralDecidedBy: string | null;
  readonly referralDecidedAt: Date | null;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly pseudonymisedAt: Date | null;
  /** When the quote was bound, and to which policy; null while it is not. */
  readonly boundAt: Date | null;
  readonly boundPolicyId: string | null;
  /** SHA-256 of the purchase secret; null for a quote asked by a server or staff. */
  readonly purchaseSecretHash: Uint8Array | null;
  /** The JSON texts of `input` and `breakdown` as just stored; absent on a quote read back. */
  readonly storedTexts?: StoredTexts;
}

/** A new quote's documents as the JSON texts written to its row. */
export interface StoredTexts {
  readonly input: string;
  readonly breakdown: string;
}

const storedTextsOf = (quote: NewQuote): StoredTexts => ({
  input: JSON.stringify(quote.input),
  breakdown: JSON.stringify(quote.breakdown),
});

type Row = Omit<QuoteTables['quotes'], 'id'> & {
  id: string;
  bound_at: Date | null;
  bound_policy_id: string | null;
};

const json = <T>(value: string | T): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);

const toQuote = (row: Row): QuoteRecord => ({
  id: row.id,
  companyId: row.company_id,
  environment: row.environment,
  reference: row.quote_reference,
  versionReference: row.quote_version_reference,
  rateBookVersionId: row.rate_book_version_id,
  rateBookReference: row.rate_book_reference,
  rateBookVersion: row.rate_book_version,
  policyReference: row.policy_reference,
  applicantEmail: row.applicant_email,
  input: json(row.input),
  pricing: json(row.pricing),
  breakdown: json(row.breakdown),
  decision: row.decision,
  reasons: json(row.reasons),
  referralStatus: row.referral_status,
  referralReason: row.referral_reason,
  referralDecidedBy: row.referral_decided_by,
  referralDecidedAt: row.referral_decided_at,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  pseudonymisedAt: row.pseudonymised_at,
  boundAt: row.bound_at,
  boundPolicyId: row.bound_policy_id,
  purchaseSecretHash: row.purchase_secret_hash,
});

/** What a new quote stores. */
export interface NewQuote {
  readonly reference: string;
  readonly versionReference: string;
  readonly rateBookVersionId: string;
  readonly rateBookReference: string;
  readonly rateBookVersion: number;
  readonly policyReference: string | null;
  readonly input: QuoteInput;
  readonly pricing: RatedPricing;
  readonly breakdown: RatingBreakdown;
  readonly decision: QuoteDecision;
  readonly reasons: readonly MatchedRule[];
  readonly createdAt: Date;
  readonly expiresAt: Date;
  /** SHA-256 of the purchase secret the web app's quote is answered with (absent: none). */
  readonly purchaseSecretHash?: Buffer | undefined;
}

/**
 * What a quote rated on remembered facts (its rate book version, its company's validity) needs still
 * to hold when it is stored; checked by the insert itself, so no other statement is spent on it.
 */
export interface QuoteGuard {
  /** The quote's product: the version in force for it at `startAt` must be the quote's. */
  readonly productId: string;
  readonly startAt: Date;
  /** The validity the expiry was counted with: it must still be the company's. */
  readonly validityDays: number;
}

/** The quote just written, as the service reads it (nothing is read back). */
function storedQuote(id: string, tenant: Tenant, quote: NewQuote, storedTexts: StoredTexts): QuoteRecord {
  return {
    id,
    companyId: tenant.companyId,
    environment: tenant.environment,
    reference: quote.reference,
    versionReference: quote.versionReference,
    rateBookVersionId: quote.rateBookVersionId,
    rateBookReference: quote.rateBookReference,
    rateBookVersion: quote.rateBookVersion,
    policyReference: quote.policyReference,
    applicantEmail: applicantEmailOf(quote),
    input: quote.input,
    pricing: quote.pricing,
    breakdown: quote.breakdown,
    decision: quote.decision,
    reasons: quote.reasons,
    referralStatus: referralStatusOf(quote),
    referralReason: null,
    referralDecidedBy: null,
    referralDecidedAt: null,
    createdAt: quote.createdAt,
    expiresAt: quote.expiresAt,
    pseudonymisedAt: null,
    boundAt: null,
    boundPolicyId: null,
    purchaseSecretHash: quote.purchaseSecretHash ?? null,
    storedTexts,
  };
}

const applicantEmailOf = (quote: NewQuote): string => quote.input.proposer.email.toLowerCase();
const referralStatusOf = (quote: NewQuote): ReferralStatus | null =>
  quote.decision === 'refer' ? 'pending' : null;

/** Inserts a quote; each is its own row, however many an applicant asks for. */
export async function insertQuote(db: Executor, tenant: Tenant, quote: NewQuote): Promise<QuoteRecord> {
  const texts = storedTextsOf(quote);
  const row = await db
    .insertInto('quotes')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      quote_reference: quote.reference,
      quote_version_reference: quote.versionReference,
      rate_book_version_id: quote.rateBookVersionId,
      rate_book_reference: quote.rateBookReference,
      rate_book_version: quote.rateBookVersion,
      policy_reference: quote.policyReference,
      applicant_email: applicantEmailOf(quote),
      input: texts.input,
      pricing: JSON.stringify(quote.pricing),
      breakdown: texts.breakdown,
      decision: quote.decision,
      reasons: JSON.stringify(quote.reasons),
      referral_status: referralStatusOf(quote),
      created_at: quote.createdAt,
      expires_at: quote.expiresAt,
      purchase_secret_hash: quote.purchaseSecretHash ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  // NOTE: only the id comes back: the quote is what was just written, and reading its JSON back
  // would parse the breakdown again on every quote.
  return storedQuote(row.id, tenant, quote, texts);
}

/** `store_quote`'s arguments. */
export const STORE_QUOTE_ARITY = 22;

/**
 * Inserts a quote only if `guard` holds, in one statement (`store_quote`, migration 0064): undefined
 * when it does not (nothing is written then).
 */
export async function storeQuote(
  storeQuoteCall: BatchedCall,
  tenant: Tenant,
  quote: NewQuote,
  guard: QuoteGuard,
): Promise<QuoteRecord | undefined> {
  const texts = storedTextsOf(quote);
  // It takes no lock but the foreign keys' shared ones, so the calls of a statement keep their order.
  const id = await storeQuoteCall(
    [
      tenant.companyId,
      tenant.environment,
      quote.reference,
      quote.versionReference,
      quote.rateBookVersionId,
      quote.rateBookReference,
      quote.rateBookVersion,
      quote.policyReference,
      applicantEmailOf(quote),
      texts.input,
      JSON.stringify(quote.pricing),
      texts.breakdown,
      quote.decision,
      JSON.stringify(quote.reasons),
      referralStatusOf(quote),
      quote.createdAt,
      quote.expiresAt,
      quote.purchaseSecretHash ?? null,
      guard.productId,
      guard.startAt,
      guard.validityDays,
      DEFAULT_QUOTE_SETTINGS.validityDays,
    ],
    '',
  );
  return typeof id !== 'string' ? undefined : storedQuote(id, tenant, quote, texts);
}

const quoteWithBinding = (db: Executor) =>
  db
    .selectFrom('quotes as q')
    .leftJoin('quote_bindings as b', 'b.quote_id', 'q.id')
    .selectAll('q')
    .select(['b.bound_at', 'b.policy_id as bound_policy_id']);

/** The tenant's quote by its reference; undefined for none (or another company's). */
export async function findQuote(
  db: Executor,
  tenant: Tenant,
  reference: string,
  options: { lock?: boolean } = {},
): Promise<QuoteRecord | undefined> {
  let query = quoteWithBinding(db).where(forTenant(tenant, 'q')).where('q.quote_reference', '=', reference);
  if (options.lock === true) query = query.forUpdate('q');
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : toQuote(row);
}

/** Records that `quoteId` is bound; false when it already is (the primary key holds it to once). */
export async function insertBinding(
  db: Executor,
  binding: { quoteId: string; policyId: string; policyVersionId: string; at: Date },
): Promise<boolean> {
  const inserted = await db
    .insertInto('quote_bindings')
    .values({
      quote_id: binding.quoteId,
      policy_id: binding.policyId,
      policy_version_id: binding.policyVersionId,
      bound_at: binding.at,
    })
    .onConflict((oc) => oc.column('quote_id').doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** The tenant's referrals waiting for a decision, oldest first, a page after `after` (created_at, id). */
export async function listPendingReferrals(
  db: Executor,
  tenant: Tenant,
  limit: number,
): Promise<QuoteRecord[]> {
  const rows = await quoteWithBinding(db)
    .where(forTenant(tenant, 'q'))
    .where('q.referral_status', '=', 'pending')
    .orderBy('q.created_at')
    .orderBy('q.id')
    .limit(limit)
    .execute();
  return rows.map(toQuote);
}

/** Records a referral's decision on a pending referral; undefined when it was not pending. */
export async function decideReferral(
  db: Executor,
  quoteId: string,
  decision: {
    status: 'approved' | 'declined';
    reason: string;
    decidedBy: string;
    staffId: string;
    at: Date;
    /** When the quote stops being bindable from now on. */
    expiresAt: Date;
  },
): Promise<boolean> {
  const updated = await db
    .updateTable('quotes')
    .set({
      referral_status: decision.status,
      referral_reason: decision.reason,
      referral_decided_by: decision.decidedBy,
      referral_staff_id: decision.staffId,
      referral_decided_at: decision.at,
      expires_at: decision.expiresAt,
    })
    .where('id', '=', quoteId)
    .where('referral_status', '=', 'pending')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

export interface QuoteSettings {
  readonly validityDays: number;
  readonly retentionDays: number;
  /** The product the public quote page quotes where its link names none; null: none. */
  readonly quotePageProduct: string | null;
}

export const DEFAULT_QUOTE_SETTINGS: QuoteSettings = {
  validityDays: 30,
  retentionDays: 90,
  quotePageProduct: null,
};

/** The company's quote settings; the defaults when it has set none. */
export async function findQuoteSettings(db: Executor, companyId: string): Promise<QuoteSettings> {
  const row = await db
    .selectFrom('quote_settings')
    .select(['validity_days', 'retention_days', 'quote_page_product'])
    .where('company_id', '=', companyId)
    .executeTakeFirst();
  return row === undefined
    ? DEFAULT_QUOTE_SETTINGS
    : {
        validityDays: row.validity_days,
        retentionDays: row.retention_days,
        quotePageProduct: row.quote_page_product,
      };
}

/** Sets the company's quote settings; a `quotePageProduct` left undefined keeps the one set. */
export async function upsertQuoteSettings(
  db: Executor,
  companyId: string,
  settings: Omit<QuoteSettings, 'quotePageProduct'> & {
    readonly quotePageProduct?: string | null | undefined;
  },
  at: Date,
): Promise<void> {
  const product =
    settings.quotePageProduct === undefined ? {} : { quote_page_product: settings.quotePageProduct };
  await db
    .insertInto('quote_settings')
    .values({
      company_id: companyId,
      validity_days: settings.validityDays,
      retention_days: settings.retentionDays,
      quote_page_product: settings.quotePageProduct ?? null,
      updated_at: at,
    })
    .onConflict((oc) =>
      oc.column('company_id').doUpdateSet({
        validity_days: settings.validityDays,
        retention_days: settings.retentionDays,
        ...product,
        updated_at: at,
      }),
    )
    .execute();
}

/**
 * Quotes past their company's retention (`retention_days` after they were made, default 90), never
 * bound, still holding personal data, and expired: a batch locked for pseudonymising.
 */
export async function lockQuotesPastRetention(db: Executor, now: Date, limit: number) {
  const rows = await sql<{ id: string; input: string | StoredQuoteInput }>`
    select q.id, q.input from quotes q
    left join quote_settings s on s.company_id = q.company_id
    where q.pseudonymised_at is null
      and q.expires_at <= ${now}
      and q.created_at <= ${now}::timestamptz - make_interval(days => coalesce(s.retention_days, ${DEFAULT_QUOTE_SETTINGS.retentionDays}))
      and not exists (select 1 from quote_bindings b where b.quote_id = q.id)
    order by q.created_at
    limit ${limit}
    for update of q skip locked`.execute(db);
  return rows.rows.map((r) => ({ id: r.id, input: json(r.input) }));
}

/** Replaces a quote's input with its pseudonym and forgets the applicant's email. */
export async function pseudonymiseQuote(
  db: Executor,
  quoteId: string,
  input: StoredQuoteInput,
  at: Date,
): Promise<void> {
  await db
    .updateTable('quotes')
    .set({ input: JSON.stringify(input), applicant_email: null, pseudonymised_at: at })
    .where('id', '=', quoteId)
    .execute();
}
