import { sql, type Expression, type Generated } from 'kysely';
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

/** `paying` until the policy took the payment; `refunded` when a paid quote could not be bound. */
export type QuotePurchaseStatus = 'paying' | 'bound' | 'refunded';

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
}

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
  /** The id of the version in force for the quote (`versionInForceIdQuery`): it must be the quote's. */
  readonly versionInForce: Expression<string>;
  /** The validity the expiry was counted with: it must still be the company's. */
  readonly validityDays: number;
}

/**
 * Inserts a quote; each is its own row, however many an applicant asks for. With a `guard`, only if it
 * holds: undefined when it does not (nothing is written then).
 */
export async function insertQuote(db: Executor, tenant: Tenant, quote: NewQuote): Promise<QuoteRecord>;
export async function insertQuote(
  db: Executor,
  tenant: Tenant,
  quote: NewQuote,
  guard: QuoteGuard,
): Promise<QuoteRecord | undefined>;
export async function insertQuote(
  db: Executor,
  tenant: Tenant,
  quote: NewQuote,
  guard?: QuoteGuard,
): Promise<QuoteRecord | undefined> {
  const referralStatus = quote.decision === 'refer' ? 'pending' : null;
  const applicantEmail = quote.input.proposer.email.toLowerCase();
  // NOTE: an INSERT … SELECT (not VALUES), so that the guard can be its WHERE; a SELECT's parameters
  // take no type from the columns they fill, hence the casts.
  let values = db.selectNoFrom((eb) => [
    eb.cast<string>(eb.val(tenant.companyId), 'uuid').as('company_id'),
    eb.val(tenant.environment).as('environment'),
    eb.cast<string>(eb.val(quote.reference), 'uuid').as('quote_reference'),
    eb.cast<string>(eb.val(quote.versionReference), 'uuid').as('quote_version_reference'),
    eb.cast<string>(eb.val(quote.rateBookVersionId), 'uuid').as('rate_book_version_id'),
    eb.val(quote.rateBookReference).as('rate_book_reference'),
    eb.cast<number>(eb.val(quote.rateBookVersion), 'integer').as('rate_book_version'),
    eb.cast<string | null>(eb.val(quote.policyReference), 'text').as('policy_reference'),
    eb.val(applicantEmail).as('applicant_email'),
    eb.cast<string>(eb.val(JSON.stringify(quote.input)), 'jsonb').as('input'),
    eb.cast<string>(eb.val(JSON.stringify(quote.pricing)), 'jsonb').as('pricing'),
    eb.cast<string>(eb.val(JSON.stringify(quote.breakdown)), 'jsonb').as('breakdown'),
    eb.val(quote.decision).as('decision'),
    eb.cast<string>(eb.val(JSON.stringify(quote.reasons)), 'jsonb').as('reasons'),
    eb.cast<string | null>(eb.val(referralStatus), 'text').as('referral_status'),
    eb.cast<Date>(eb.val(quote.createdAt), 'timestamptz').as('created_at'),
    eb.cast<Date>(eb.val(quote.expiresAt), 'timestamptz').as('expires_at'),
    eb.cast<Uint8Array | null>(eb.val(quote.purchaseSecretHash ?? null), 'bytea').as('purchase_secret_hash'),
  ]);
  if (guard !== undefined) {
    const validity = db
      .selectFrom('quote_settings')
      .select('validity_days')
      .where('company_id', '=', tenant.companyId);
    values = values.where((eb) =>
      eb.and([
        eb(guard.versionInForce, '=', eb.cast<string>(eb.val(quote.rateBookVersionId), 'uuid')),
        eb(eb.fn.coalesce(validity, eb.val(DEFAULT_QUOTE_SETTINGS.validityDays)), '=', guard.validityDays),
      ]),
    );
  }
  const row = await db
    .insertInto('quotes')
    .columns([
      'company_id',
      'environment',
      'quote_reference',
      'quote_version_reference',
      'rate_book_version_id',
      'rate_book_reference',
      'rate_book_version',
      'policy_reference',
      'applicant_email',
      'input',
      'pricing',
      'breakdown',
      'decision',
      'reasons',
      'referral_status',
      'created_at',
      'expires_at',
      'purchase_secret_hash',
    ])
    .expression(values)
    .returning('id')
    .executeTakeFirst();
  if (row === undefined) return undefined;
  // NOTE: only the id comes back: the quote is what was just written, and reading its JSON back
  // would parse the breakdown again on every quote.
  return {
    id: row.id,
    companyId: tenant.companyId,
    environment: tenant.environment,
    reference: quote.reference,
    versionReference: quote.versionReference,
    rateBookVersionId: quote.rateBookVersionId,
    rateBookReference: quote.rateBookReference,
    rateBookVersion: quote.rateBookVersion,
    policyReference: quote.policyReference,
    applicantEmail,
    input: quote.input,
    pricing: quote.pricing,
    breakdown: quote.breakdown,
    decision: quote.decision,
    reasons: quote.reasons,
    referralStatus,
    referralReason: null,
    referralDecidedBy: null,
    referralDecidedAt: null,
    createdAt: quote.createdAt,
    expiresAt: quote.expiresAt,
    pseudonymisedAt: null,
    boundAt: null,
    boundPolicyId: null,
    purchaseSecretHash: quote.purchaseSecretHash ?? null,
  };
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
