import { sql, type Kysely } from 'kysely';

/**
 * What a billing run writes for each policy, made smaller (bench/billing.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Every statement raises its policy's version count, so a billing run updates each policy row it
  // bills. With free room on the page the update is heap-only (no entry in the policy's five indexes);
  // a full page moves the row and writes all five. New pages keep a fifth free for that.
  await sql`alter table policies set (fillfactor = 80)`.execute(db);

  // A version's snapshot (about 3 kB of JSON) is over PostgreSQL's 2 kB threshold, so it was compressed
  // and moved out of line, and every read of a field decompressed all of it: pglz_decompress was the
  // largest single cost of a billing run (perf). Rows up to a page now stay whole and uncompressed.
  await sql`alter table policy_versions set (toast_tuple_target = 8160)`.execute(db);

  // A statement (`st`) version changes no term, so it no longer stores a copy of the snapshot before it
  // (3 kB a policy a month, most of a billing run's WAL): readers carry the previous one forward, and
  // `terms_sequence` names the version whose snapshot holds the policy's terms now. Copies already
  // stored stay.
  await sql`alter table policies add column terms_sequence integer not null default 0`.execute(db);
  await sql`
    update policies p set terms_sequence = coalesce((
      select max(v.sequence) from policy_versions v where v.policy_id = p.id and v.version_type <> 'st'
    ), 0)`.execute(db);
  await sql`alter table policy_versions alter column snapshot drop not null`.execute(db);
  await sql`
    alter table policy_versions add constraint policy_versions_snapshot_kept
    check (snapshot is not null or version_type = 'st')`.execute(db);
}
