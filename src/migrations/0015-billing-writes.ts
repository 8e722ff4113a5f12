import { sql, type Kysely } from 'kysely';

/**
 * What a billing run writes for each policy, made smaller (bench/billing.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Every statement raises its policy's version count, so a billing run updates each policy row it
  // bills. With free room on the page the update is heap-only (no new entry in any of the policy's
  // indexes); a full page moves the row and writes them all. New pages keep a fifth free for that.
  await sql`alter table policies set (fillfactor = 80)`.execute(db);

  // A version's snapshot (about 3 kB of JSON) is over PostgreSQL's 2 kB threshold, so it was compressed
  // and moved out of line, and every read of a field decompressed all of it: pglz_decompress was the
  // largest single cost of a billing run (perf). Rows up to a page now stay whole and uncompressed.
  await sql`alter table policy_versions set (toast_tuple_target = 8160)`.execute(db);

  // What billing needs of a policy's terms is kept on its row, where a billing run locks it anyway,
  // instead of being read from the latest snapshot (a join and a 3 kB row a policy, twice): the billing
  // day, the subscription price, where cover first started, and how far statements have billed
  // (`billed_through_at`, the latest statement's end, moved by the statement's own transaction). Set
  // with every version (policy-repository.ts, appendVersion and appendStatementVersions).
  await sql`
    alter table policies
      add column billing_day smallint,
      add column subscription_premium_pence bigint,
      add column subscription_installments smallint,
      add column first_start_at timestamptz,
      add column billed_through_at timestamptz`.execute(db);
  await sql`
    update policies p set
      billing_day = (terms.snapshot->'policy'->>'billing_day_date')::smallint,
      subscription_premium_pence = round((terms.snapshot->'pricing'->>'subscription_premium')::numeric * 100),
      subscription_installments = (terms.snapshot->'pricing'->>'subscription_installments')::smallint,
      first_start_at = to_timestamp((first.snapshot->'policy'->>'start_date')::bigint),
      billed_through_at = (select max(s.period_end_at) from statements s where s.policy_id = p.id)
    from policy_versions first, policy_versions terms
    where first.policy_id = p.id and first.sequence = 1
      and terms.policy_id = p.id and terms.sequence = (
        select max(v.sequence) from policy_versions v where v.policy_id = p.id and v.version_type <> 'st')`.execute(
    db,
  );
  // A policy row is written before its first version, in the same transaction.
  await sql`
    alter table policies add constraint policies_terms_kept check (
      version_count = 0 or (subscription_premium_pence is not null and first_start_at is not null))`.execute(
    db,
  );
  await sql`create index policies_billing_day_idx on policies (billing_day) where status = 'active'`.execute(
    db,
  );

  // A statement (`st`) version changes no term, so it no longer stores a copy of the snapshot before it
  // (3 kB a policy a month, most of a billing run's WAL): readers carry the previous one forward. Copies
  // already stored stay.
  await sql`alter table policy_versions alter column snapshot drop not null`.execute(db);
  await sql`
    alter table policy_versions add constraint policy_versions_snapshot_kept
    check (snapshot is not null or version_type = 'st')`.execute(db);

  // Storing a journey reads how far its policy is billed from the row it locks anyway (see above),
  // not from the statements (one index lookup less a journey).
  await sql`
    create or replace function store_journey(
      p_id uuid, p_company_id uuid, p_environment text, p_policy_id uuid, p_policy_reference text,
      p_policy_version_id uuid, p_provider_reference text, p_route text, p_route_precision smallint,
      p_point_count integer, p_start_at timestamptz, p_end_at timestamptz, p_distance_metres bigint,
      p_distance_unit text, p_usage_rate numeric, p_usage_premium_pence bigint,
      p_start_lat double precision, p_start_lng double precision,
      p_end_lat double precision, p_end_lng double precision,
      p_start_name text, p_start_postcode text, p_end_name text, p_end_postcode text,
      p_created_at timestamptz, p_version_count integer, p_event_type text, p_event_data jsonb
    ) returns smallint language plpgsql as $$
    declare
      v_billed_through timestamptz;
    begin
      select billed_through_at into v_billed_through from policies
      where id = p_policy_id and version_count = p_version_count for key share;
      if not found then
        return 2;
      end if;
      -- Versions are never updated or deleted, so no lock is needed to rely on one.
      perform 1 from policy_versions where id = p_policy_version_id and policy_id = p_policy_id;
      if not found then
        raise exception 'policy version % is not a version of policy %', p_policy_version_id, p_policy_id
          using errcode = 'foreign_key_violation';
      end if;
      insert into journeys (
        id, company_id, environment, policy_id, policy_reference, policy_version_id, provider_reference,
        route, route_precision, point_count, start_at, end_at, distance_metres, distance_unit,
        usage_rate, usage_premium_pence, start_lat, start_lng, end_lat, end_lng,
        start_name, start_postcode, end_name, end_postcode, created_at, late
      ) values (
        p_id, p_company_id, p_environment, p_policy_id, p_policy_reference, p_policy_version_id,
        p_provider_reference, p_route, p_route_precision, p_point_count, p_start_at, p_end_at,
        p_distance_metres, p_distance_unit, p_usage_rate, p_usage_premium_pence,
        p_start_lat, p_start_lng, p_end_lat, p_end_lng,
        p_start_name, p_start_postcode, p_end_name, p_end_postcode, p_created_at,
        coalesce(p_start_at <= v_billed_through, false)
      )
      on conflict do nothing;
      if not found then
        return 1;
      end if;
      insert into events (company_id, environment, type, data, created_at)
      values (p_company_id, p_environment, p_event_type, p_event_data, p_created_at);
      return 0;
    end
    $$`.execute(db);

  // Emails queued in bulk store their template's values and are rendered when sent (notifications'
  // LATER_TEMPLATES): a statement email's subject and bodies were a third of a billing run's WAL.
  await sql`
    alter table outbox_emails
      alter column subject drop not null,
      add column data jsonb,
      add constraint outbox_emails_content check (subject is not null or data is not null)`.execute(db);
}
