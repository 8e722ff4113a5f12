import { sql, type Kysely } from 'kysely';

/**
 * `store_quote`: a quote rated on remembered terms (its rate book version, its company's validity)
 * stored by one `INSERT … SELECT … WHERE`, whose condition is that the version in force at the quote's
 * start is the one it was rated on and that the company's validity is the one its expiry was counted
 * with. Returns the new quote's id, or null when they no longer hold (nothing stored). Owned by the
 * quotes module (quote-repository.ts).
 *
 * NOTE: a function so that PostgreSQL plans the insert once per connection: sent as a statement of its
 * own it was parsed and planned on every quote (a named statement would be planned once, but behind
 * PgBouncer in transaction pooling the next transaction may reach a session that has not prepared it).
 * Planning was most of the database's work per quote besides the commit: a backend's CPU per insert
 * (synchronous_commit off) was 0.60–0.86 ms sent unnamed, 0.20–0.32 ms prepared and 0.25–0.44 ms
 * through this function (docs/benchmarks.md, `quotes`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function store_quote(
      p_company_id uuid, p_environment text, p_quote_reference uuid, p_quote_version_reference uuid,
      p_rate_book_version_id uuid, p_rate_book_reference text, p_rate_book_version integer,
      p_policy_reference text, p_applicant_email text, p_input jsonb, p_pricing jsonb,
      p_breakdown jsonb, p_decision text, p_reasons jsonb, p_referral_status text,
      p_created_at timestamptz, p_expires_at timestamptz, p_purchase_secret_hash bytea,
      p_product_id uuid, p_start_at timestamptz, p_validity_days integer, p_default_validity_days integer
    ) returns uuid language plpgsql as $$
    declare
      v_id uuid;
    begin
      insert into quotes (
        company_id, environment, quote_reference, quote_version_reference, rate_book_version_id,
        rate_book_reference, rate_book_version, policy_reference, applicant_email, input, pricing,
        breakdown, decision, reasons, referral_status, created_at, expires_at, purchase_secret_hash
      )
      select
        p_company_id, p_environment, p_quote_reference, p_quote_version_reference, p_rate_book_version_id,
        p_rate_book_reference, p_rate_book_version, p_policy_reference, p_applicant_email, p_input, p_pricing,
        p_breakdown, p_decision, p_reasons, p_referral_status, p_created_at, p_expires_at,
        p_purchase_secret_hash
      where (
          select v.id
          from rate_book_versions v
          join rate_books b on b.id = v.rate_book_id
          where b.company_id = p_company_id and b.environment = p_environment
            and b.product_id = p_product_id and v.status = 'approved' and v.effective_from <= p_start_at
          order by v.effective_from desc
          limit 1
        ) = p_rate_book_version_id
        and coalesce(
          (select s.validity_days from quote_settings s where s.company_id = p_company_id),
          p_default_validity_days
        ) = p_validity_days
      returning id into v_id;
      return v_id;
    end $$`.execute(db);
}
