import type { Executor } from '../../schema.ts';
import type { QuotePurchaseStatus } from './quote-repository.ts';

/** The first payment of a quote bought in the web app (one per quote). */
export interface QuotePurchase {
  readonly quoteId: string;
  readonly intentId: string;
  readonly customerId: string;
  readonly amountPence: number;
  readonly status: QuotePurchaseStatus;
}

const PURCHASE_COLUMNS = [
  'quote_id',
  'provider_payment_id',
  'provider_customer_id',
  'amount_pence',
  'status',
] as const;

const toPurchase = (row: {
  quote_id: string;
  provider_payment_id: string;
  provider_customer_id: string;
  amount_pence: number;
  status: QuotePurchaseStatus;
}): QuotePurchase => ({
  quoteId: row.quote_id,
  intentId: row.provider_payment_id,
  customerId: row.provider_customer_id,
  amountPence: row.amount_pence,
  status: row.status,
});

/** The quote's purchase, or undefined when nobody has tried to buy it. */
export async function findQuotePurchase(db: Executor, quoteId: string): Promise<QuotePurchase | undefined> {
  const row = await db
    .selectFrom('quote_purchases')
    .select(PURCHASE_COLUMNS)
    .where('quote_id', '=', quoteId)
    .executeTakeFirst();
  return row === undefined ? undefined : toPurchase(row);
}

/**
 * Records the quote's intent. Two first attempts racing made the same intent (the processor's keys
 * are the quote's), so the second insert changes nothing and both read the one row.
 */
export async function insertQuotePurchase(
  db: Executor,
  purchase: Omit<QuotePurchase, 'status'>,
  at: Date,
): Promise<void> {
  await db
    .insertInto('quote_purchases')
    .values({
      quote_id: purchase.quoteId,
      provider_payment_id: purchase.intentId,
      provider_customer_id: purchase.customerId,
      amount_pence: purchase.amountPence,
      created_at: at,
      updated_at: at,
    })
    .onConflict((oc) => oc.column('quote_id').doNothing())
    .execute();
}

/** Moves a purchase on from `paying` (to `bound`, `refunded` or `cancelled`). */
export async function setQuotePurchaseStatus(
  db: Executor,
  quoteId: string,
  status: Exclude<QuotePurchaseStatus, 'paying'>,
  at: Date,
): Promise<void> {
  await db
    .updateTable('quote_purchases')
    .set({ status, updated_at: at })
    .where('quote_id', '=', quoteId)
    .where('status', '=', 'paying')
    .execute();
}

/** A purchase still `paying`, with its quote's company and reference. */
export interface OpenPurchase extends QuotePurchase {
  readonly companyId: string;
  readonly environment: string;
  readonly quoteReference: string;
}

/**
 * Purchases still `paying` that nobody has moved on since `before`, of quotes that expired after
 * `expiredAfter` (or not yet), the longest left first.
 */
export async function openPurchasesLeftSince(
  db: Executor,
  before: Date,
  expiredAfter: Date,
  limit: number,
): Promise<OpenPurchase[]> {
  const rows = await db
    .selectFrom('quote_purchases as p')
    .innerJoin('quotes as q', 'q.id', 'p.quote_id')
    .select(PURCHASE_COLUMNS.map((column) => `p.${column}` as const))
    .select(['q.company_id', 'q.environment', 'q.quote_reference'])
    .where('p.status', '=', 'paying')
    .where('p.updated_at', '<', before)
    .where('q.expires_at', '>', expiredAfter)
    .orderBy('p.updated_at')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    ...toPurchase(row),
    companyId: row.company_id,
    environment: row.environment,
    quoteReference: row.quote_reference,
  }));
}

/** Notes that a `paying` purchase was looked at (its intent not yet paid), so the next look waits. */
export async function touchQuotePurchase(db: Executor, quoteId: string, at: Date): Promise<void> {
  await db
    .updateTable('quote_purchases')
    .set({ updated_at: at })
    .where('quote_id', '=', quoteId)
    .where('status', '=', 'paying')
    .execute();
}
