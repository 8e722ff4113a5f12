import { sql, type Kysely } from 'kysely';

/**
 * Quote purchases (issue 36): the first payment of a quote bought in the web app
 * (`POST /quotes/:quote_reference/purchase`), one row per quote.
 *
 * - Owned by the quotes module. The primary key is the quote: the processor's customer and intent are
 *   made once per quote (their idempotency keys derive from the quote's id), and every later attempt
 *   (another card after a decline, the confirmation after 3-D Secure, a retry after a crash between
 *   the payment and the policy) finds the same intent here and never charges a second one.
 * - `status` is `paying` while the intent is not yet paid, `bound` once the policy took the payment,
 *   `refunded` when a paid quote could not be bound (it expired or was bound by another request
 *   between the payment and the policy) and the money went back.
 * - It holds no personal data: the person is in the quote and the processor's customer.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table quote_purchases (
      quote_id uuid not null constraint quote_purchases_quote_fkey references quotes (id),
      provider_payment_id text not null,
      provider_customer_id text not null,
      amount_pence bigint not null,
      status text not null default 'paying',
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint quote_purchases_pkey primary key (quote_id),
      constraint quote_purchases_payment_key unique (provider_payment_id),
      constraint quote_purchases_amount_check check (amount_pence > 0),
      constraint quote_purchases_status_check check (status in ('paying', 'bound', 'refunded'))
    )`.execute(db);
}
