import { sql, type Kysely } from 'kysely';

/**
 * A quote's documents (`input`, `pricing`, `breakdown`, `reasons`) stored as `json`, and its row kept
 * in one heap tuple. Owned by the quotes module (quote-repository.ts).
 *
 * NOTE: the quotes table is written once a quote and read whole, by the service and by data protection;
 * no query looks inside these documents (writers that cast to `jsonb`, as erasure does, are
 * assigned `json` by PostgreSQL's cast). `jsonb` made PostgreSQL build its binary form of each on every
 * insert (and the breakdown's 2.3 kB grow to 2.5 kB), then, the row being over the 2 kB at which the
 * toaster starts, compress the breakdown and pricing and move the input to the TOAST table (a second
 * heap insert and an index insert a quote). `json` is checked and kept as sent, and with
 * `toast_tuple_target` at 2700 a quote is compressed to at most that and stays in its row: three to a
 * page. Measured on the benchmark's quote (docs/benchmarks.md, `quotes`): 3.85 kB a quote before, 2.75 kB
 * after (1,000 inserts); a backend's CPU an insert, median of seven loops of 2,000, 0.25 ms before and
 * 0.17 ms after.
 *
 * `store_quote` (migration 0064) is made again with `json` parameters, so that no document is turned
 * into `jsonb` on its way in.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table quotes
      alter column input type json,
      alter column pricing type json,
      alter column breakdown type json,
      alter column reasons type json`.execute(db);
  await sql`alter table quotes set (toast_tuple_target = 2700)`.execute(db);
  await sql`
    drop function store_quote(
      uuid, text, uuid, uuid, uuid, text, integer, text, text, jsonb, jsonb, jsonb, text, jsonb, text,
      timestamptz, timestamptz, bytea, uuid, timestamptz, integer, integer)`.execute(db);
  await sql`
    create function store_quote(
      p_company_id uuid, p_environment text, p_quote_reference uuid, p_quote_version_reference uuid,
      p_rate_book_version_id uuid, p_rate_book_reference text, p_rate_book_version integer,
      p_policy_reference text, p_applicant_email text, p_input json, p_pricing json,
      p_breakdown json, p_decision text, p_reasons json, p_referral_status text,
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
