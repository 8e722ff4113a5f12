import { sql, type Kysely } from 'kysely';

/**
 * A crash wakes the claims workers as it commits. Migration 0049's trigger on `crash_events` records
 * the first notice each crash owes (`claim_crashes_owed`); it now also notifies the change feed
 * (channel `milepost_claims_owed`), which PostgreSQL delivers when the crash's transaction commits and
 * never when it rolls back, so a worker opens the draft claim at once instead of at its next pass. The
 * payload is empty: a worker leases whatever is owed, and a transaction that stores many crashes (trip
 * cutting) sends one notification, as PostgreSQL folds identical ones within a transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function claims_owe_first_notice() returns trigger language plpgsql as $$
    begin
      insert into claim_crashes_owed (crash_event_id, company_id, environment, policy_id, due_at, created_at)
      values (new.id, new.company_id, new.environment, new.policy_id, new.received_at, new.received_at);
      perform pg_notify('milepost_claims_owed', '');
      return null;
    end $$`.execute(db);
}
