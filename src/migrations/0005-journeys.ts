import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // For the exclusion constraint below (equality on a uuid inside a GiST index). A trusted extension since
  // PostgreSQL 13: a database owner may create it; PGlite is opened with it loaded.
  await sql`create extension if not exists btree_gist`.execute(db);

  // NOTE: company_id and environment are the policy's, copied so that every read filters by tenant
  // without a join. They carry no foreign key of their own: the policy's already ties them to a
  // company, and one would share-lock the company row on every journey insert.
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
      constraint journeys_void_consistent check (is_void = (voided_at is not null)),
      -- No two journeys of a policy that are not void share an instant; touching end to start is fine.
      -- The database holds this, so inserts need no lock and no check-then-insert.
      constraint journeys_no_overlap exclude using gist (
        policy_id with =,
        tstzrange(start_at, end_at) with &&
      ) where (not is_void)
    )`.execute(db);
  // Statements (a policy's journeys by start) and reads by policy and period.
  await sql`create index journeys_policy_start_idx on journeys (policy_id, start_at)`.execute(db);

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
