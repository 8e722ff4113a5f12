import { sql, type Kysely } from 'kysely';

/**
 * Odometer readings (issue 18) and what statements keep of them.
 *
 * - A reading belongs to a policy (given, or found from the device bound at its time); one per policy
 *   and second, so a reading sent twice is stored once.
 * - A statement with readings around both ends keeps the two it compared and the GPS distance between
 *   them (in a table of their own: most statements have none, and the statements insert stays as it
 *   was), so that it shows its `odometer` block as written, and the next statement starts from the
 *   reading this one ended at (consecutive spans chain, and no distance is reconciled twice).
 * - Readings of a policy are listed by time (the unique key's index); a device's name is kept as sent.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table odometer_readings (
      id uuid primary key default gen_random_uuid(),
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      policy_id uuid not null references policies (id),
      device_id text,
      reading_metres bigint not null check (reading_metres >= 0),
      time timestamptz not null,
      source text not null check (source in ('connected_car', 'photo', 'mot')),
      created_at timestamptz not null,
      constraint odometer_readings_policy_time_key unique (policy_id, time)
    )`.execute(db);
  await sql`
    create table statement_odometers (
      statement_id uuid primary key references statements (id),
      policy_id uuid not null references policies (id),
      start_metres bigint not null,
      start_at timestamptz not null,
      end_metres bigint not null,
      end_at timestamptz not null,
      gps_metres bigint not null check (gps_metres >= 0),
      constraint statement_odometers_readings check (end_metres >= start_metres and end_at > start_at)
    )`.execute(db);
  await sql`create index statement_odometers_policy on statement_odometers (policy_id, end_at)`.execute(db);
}
