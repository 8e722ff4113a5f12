import { sql, type Kysely } from 'kysely';

/**
 * Buying a quote on the monthly plan, and the buyer's secret (issue 36).
 *
 * - `policies.prepaid_installments`: how many of the first term's installments were paid at binding
 *   (a quote bought on the monthly plan pays its first installment with the card before the policy
 *   exists). The statement run bills the first term's installments after these, so none is collected
 *   twice. Later terms start from their first installment. Owned by the policies module.
 * - `quotes.purchase_secret_hash`: the SHA-256 of the secret a quote asked with the client id alone (the
 *   web app) is answered with, once; reading the quote back and buying it with the client id alone need
 *   the secret. Null for quotes asked with client credentials or by staff. Owned by the quotes module.
 * - `quote_settings.quote_page_product`: the product the company's public quote page (`/app/quote`)
 *   quotes, where the page's link names none. Owned by the quotes module.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table policies
      add column prepaid_installments integer not null default 0,
      add constraint policies_prepaid_installments_check check (prepaid_installments >= 0)`.execute(db);
  await sql`alter table quotes add column purchase_secret_hash bytea`.execute(db);
  await sql`alter table quote_settings add column quote_page_product text`.execute(db);
}
