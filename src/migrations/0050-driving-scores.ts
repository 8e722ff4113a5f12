import { sql, type Kysely } from 'kysely';

/**
 * Driving scores. A trip journey cut from a device's positions has one `trip_scores` row (its score, or
 * none when it is shorter than a mile) and a `trip_score_events` row per event that counts, written in the
 * transaction that stores the journey; a journey voided (re-cut when late positions arrive, or voided by a
 * client) keeps its rows with `voided_at` set, so they stop counting. `score_months` holds a policy's London
 * calendar month once it has closed: the primary key makes its `score.month_closed` event happen once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table trip_scores (
      policy_id uuid not null references policies (id),
      journey_id uuid not null,
      company_id uuid not null references companies (id),
      environment text not null,
      month text not null,
      start_at timestamptz not null,
      distance_metres bigint not null,
      night_metres bigint not null,
      score numeric(4, 1),
      voided_at timestamptz,
      created_at timestamptz not null,
      constraint trip_scores_pkey primary key (policy_id, journey_id),
      constraint trip_scores_environment_check check (environment in ('sandbox', 'production')),
      constraint trip_scores_month_check check (month ~ '^[0-9]{4}-[0-9]{2}$'),
      constraint trip_scores_score_check check (score between 0 and 100),
      constraint trip_scores_distance_check check (distance_metres >= 0 and night_metres >= 0)
    )`.execute(db);
  await sql`create index trip_scores_month_idx on trip_scores (policy_id, month) where voided_at is null`.execute(
    db,
  );
  await sql`
    create table trip_score_events (
      id uuid not null default gen_random_uuid(),
      policy_id uuid not null,
      journey_id uuid not null,
      kind text not null,
      occurred_at timestamptz not null,
      lat double precision not null,
      lng double precision not null,
      speed_kmh double precision not null,
      acceleration_mps2 double precision,
      duration_seconds integer,
      constraint trip_score_events_pkey primary key (policy_id, id),
      constraint trip_score_events_trip_fkey foreign key (policy_id, journey_id)
        references trip_scores (policy_id, journey_id),
      constraint trip_score_events_kind_check check (kind in
        ('harsh_braking', 'rapid_acceleration', 'harsh_cornering', 'speeding', 'fatigue'))
    )`.execute(db);
  await sql`create index trip_score_events_trip_idx on trip_score_events (policy_id, journey_id)`.execute(db);
  await sql`
    create table score_months (
      policy_id uuid not null references policies (id),
      month text not null,
      company_id uuid not null references companies (id),
      environment text not null,
      score numeric(4, 1),
      distance_metres bigint not null,
      provisional boolean not null,
      closed_at timestamptz not null,
      constraint score_months_pkey primary key (policy_id, month),
      constraint score_months_environment_check check (environment in ('sandbox', 'production'))
    )`.execute(db);
}
