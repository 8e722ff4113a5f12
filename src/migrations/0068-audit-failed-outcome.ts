import { sql, type Kysely } from 'kysely';

/**
 * `audit_records.outcome` may be `failed`: an audited request that ended in a server error (the
 * processor unreachable, the database gone) is recorded with the problem it answered, as a refusal
 * is, so that the trail shows every staff action tried and not only those that succeeded or were
 * refused. Owned by the staff module.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table audit_records
      drop constraint audit_records_outcome_check,
      add constraint audit_records_outcome_check check (outcome in ('ok', 'denied', 'failed'))`.execute(db);
}
