import { sql, type Kysely } from 'kysely';
import { auditTable } from './0027-back-office.ts';

/**
 * Data minimisation of raw positions (EDPB Guidelines 01/2020 on connected vehicles). A company that sets
 * `minimise_positions` keeps its trips' journeys (the coarsened route), driving events and scores, and
 * has the raw positions of each trip deleted in the transaction that stores and scores the trip.
 * `minimised_trips` records each such trip's span on its device, so positions arriving late inside it
 * are dropped rather than re-cut into a fragment that would replace the scored trip (a span holds no more
 * than its journey's start and end, which the subject access export gives). The settings table
 * is audited (an admin's change is in the staff trail); the spans, like positions, are not.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table telematics_settings (
      company_id uuid not null references companies (id),
      minimise_positions boolean not null,
      updated_at timestamptz not null,
      constraint telematics_settings_pkey primary key (company_id)
    )`.execute(db);
  await sql`
    create table minimised_trips (
      device_id uuid not null references devices (id),
      start_at timestamptz not null,
      end_at timestamptz not null,
      positions_deleted integer not null,
      minimised_at timestamptz not null,
      constraint minimised_trips_pkey primary key (device_id, start_at),
      constraint minimised_trips_span_check check (end_at >= start_at and positions_deleted >= 0)
    )`.execute(db);
  await auditTable(db, 'telematics_settings');
}
