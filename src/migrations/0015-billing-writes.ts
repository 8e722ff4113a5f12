import { sql, type Kysely } from 'kysely';

/**
 * Every statement raises its policy's version count, so a billing run updates each policy row it bills.
 * With free room on the page the update is heap-only (no entry in the policy's five indexes); a full
 * page moves the row and writes all five. Policies are a small table next to journeys; new pages keep a
 * fifth free for that.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table policies set (fillfactor = 80)`.execute(db);
  // A version's snapshot (about 3 kB of JSON) is over PostgreSQL's 2 kB threshold, so it was compressed
  // and moved out of line, and every read of a field decompressed all of it: pglz_decompress was the
  // largest single cost of a billing run (perf). Rows up to a page now stay whole and uncompressed.
  await sql`alter table policy_versions set (toast_tuple_target = 8160)`.execute(db);
}
