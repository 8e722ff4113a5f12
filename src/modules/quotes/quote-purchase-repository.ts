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

/** The quote's purchase, or undefined when nobody has tried to buy it. */
export async function findQuotePurchase(db: Executor, quoteId: string): Promise<QuotePurchase | undefined> {
  const row = await db
    .selectFrom('quote_purchases')
    .select(['quote_id', 'provider_payment_id', 'provider_customer_id', 'amount_pence', 'status'])
    .where('quote_id', '=', quoteId)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : {
        quoteId: row.quote_id,
        intentId: row.provider_payment_id,
        customerId: row.provider_customer_id,
        amountPence: row.amount_pence,
        status: row.status,
      };
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

/** Moves a purchase on from `paying` (to `bound` or `refunded`). */
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
