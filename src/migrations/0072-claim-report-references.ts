import { sql, type Kysely } from 'kysely';

/**
 * `claims.report_reference`: the sender's own id for a reported claim, so that a report sent again (its
 * answer lost, or the button pressed twice) opens one claim. Unique per policy where given;
 * `report_digest` (SHA-256 of the report as sent) tells the same report sent again from another one
 * under the same reference. Owned by the claims module.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table claims
      add column report_reference text,
      add column report_digest text,
      add constraint claims_report_reference_length check (char_length(report_reference) between 1 and 100),
      add constraint claims_report_reference_digest check ((report_reference is null) = (report_digest is null))`.execute(
    db,
  );
  await sql`
    create unique index claims_report_reference_key on claims (policy_id, report_reference)
      where report_reference is not null`.execute(db);
}
