import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // NOTE: this migration once also created the btree_gist extension and an exclusion constraint keeping
  // a policy's non-void journeys from overlapping (journeys_no_overlap). Migration 0016 drops that
  // constraint on databases that have it and keeps the rule in store_journey instead; a new database
  // never gets either, so that PGlite need not load the extension (see 0016 for why).
  // NOTE: company_id and environment are the policy's, copied so that every read filters by tenant
  // without a join; the policy's foreign key already ties them to a company.
  await sql`
    create table journeys (
      id uuid primary key default gen_random_uuid(),
      company_id uuid not null,
      environment text not null check (environment in ('sandbox', 'production')),
      policy_id uuid not null references policies (id),
      policy_reference text not null,
      policy_version_id uuid not null references policy_versions (id),
      provider_reference text,
      route text not null,
      route_precision smallint not null check (route_precision in (5, 6)),
      point_count integer not null check (point_count >= 2),
      start_at timestamptz not null,
      end_at timestamptz not null,
      distance_metres bigint not null check (distance_metres >= 0),
      distance_unit text not null check (distance_unit in ('mile', 'km')),
      usage_rate numeric not null check (usage_rate >= 0),
      usage_premium_pence bigint not null check (usage_premium_pence >= 0),
      start_lat double precision not null,
      start_lng double precision not null,
      end_lat double precision not null,
      end_lng double precision not null,
      start_name text,
      start_postcode text,
      end_name text,
      end_postcode text,
      is_void boolean not null default false,
      voided_at timestamptz,
      void_reason text,
      statement_version_id uuid references policy_versions (id),
      created_at timestamptz not null,
      constraint journeys_provider_reference_key unique (policy_id, provider_reference),
      constraint journeys_end_after_start check (end_at > start_at),
      constraint journeys_void_consistent check (is_void = (voided_at is not null))
    )`.execute(db);
  // Statements (a policy's journeys by start) and reads by policy and period.
  await sql`create index journeys_policy_start_idx on journeys (policy_id, start_at)`.execute(db);

  // Stores a journey and its `journey.created` event, unless the journey overlaps a non-void one of its
  // policy or reuses its provider reference (then nothing is stored): true when stored.
  // NOTE: a function only so that PostgreSQL keeps the plans of these two inserts per connection
  // (PL/pgSQL caches them; Kysely cannot prepare statements): measured with pgbench, the same two
  // inserts as one CTE statement ran at 3,300 a second, through this function at 4,600, the bare
  // journey insert alone at 6,000. It holds no rule: rating and cover are decided before it is called,
  // and the caller's guard on the policy's version count wraps the call. The event row is the one
  // platform/events.ts `recordEvent` writes. A later migration that changes either table must replace it.
  await sql`
    create function insert_journey_with_event(
      p_id uuid, p_company_id uuid, p_environment text, p_policy_id uuid, p_policy_reference text,
      p_policy_version_id uuid, p_provider_reference text, p_route text, p_route_precision smallint,
      p_point_count integer, p_start_at timestamptz, p_end_at timestamptz, p_distance_metres bigint,
      p_distance_unit text, p_usage_rate numeric, p_usage_premium_pence bigint,
      p_start_lat double precision, p_start_lng double precision,
      p_end_lat double precision, p_end_lng double precision,
      p_start_name text, p_start_postcode text, p_end_name text, p_end_postcode text,
      p_created_at timestamptz, p_event_type text, p_event_data jsonb
    ) returns boolean language plpgsql as $$
    begin
      insert into journeys (
        id, company_id, environment, policy_id, policy_reference, policy_version_id, provider_reference,
        route, route_precision, point_count, start_at, end_at, distance_metres, distance_unit,
        usage_rate, usage_premium_pence, start_lat, start_lng, end_lat, end_lng,
        start_name, start_postcode, end_name, end_postcode, created_at
      ) values (
        p_id, p_company_id, p_environment, p_policy_id, p_policy_reference, p_policy_version_id,
        p_provider_reference, p_route, p_route_precision, p_point_count, p_start_at, p_end_at,
        p_distance_metres, p_distance_unit, p_usage_rate, p_usage_premium_pence,
        p_start_lat, p_start_lng, p_end_lat, p_end_lng,
        p_start_name, p_start_postcode, p_end_name, p_end_postcode, p_created_at
      )
      on conflict do nothing;
      if not found then
        return false;
      end if;
      insert into events (company_id, environment, type, data, created_at)
      values (p_company_id, p_environment, p_event_type, p_event_data, p_created_at);
      return true;
    end
    $$`.execute(db);

  // The audit record of each void: one per journey (the unique key makes voiding idempotent). A journey
  // already billed when voided is owed a credit; statements set credited_statement_version_id once given.
  await sql`
    create table journey_voids (
      id uuid primary key default gen_random_uuid(),
      journey_id uuid not null constraint journey_voids_journey_key unique references journeys (id),
      policy_id uuid not null references policies (id),
      company_id uuid not null,
      environment text not null check (environment in ('sandbox', 'production')),
      reason text not null,
      billed_statement_version_id uuid references policy_versions (id),
      credited_statement_version_id uuid references policy_versions (id),
      usage_premium_pence bigint not null,
      request_id text,
      created_at timestamptz not null
    )`.execute(db);
  await sql`
    create index journey_voids_credit_due_idx on journey_voids (policy_id)
    where billed_statement_version_id is not null and credited_statement_version_id is null`.execute(db);
}
