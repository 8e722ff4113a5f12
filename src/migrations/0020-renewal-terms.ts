import { sql, type Kysely } from 'kysely';

/**
 * A renewal written before its term starts is a version of its own term, and an adjustment written
 * after it may still belong to the current term: `term` says which term a version sets (1 for the
 * first, one more for each renewal), so the order of writing no longer decides which terms are in
 * force. `superseded_at` marks a version that no longer counts: a stored renewal replaced by a newer
 * one or cancelled with the policy, or a lapse undone by a renewal that continues the cover. Existing
 * versions get the term they were written in (each renewal opened the next); statement versions set no
 * term and keep null. A renewal may be paid by card at once, as a new policy is: payments get the
 * purpose `renewal`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table payments drop constraint if exists payments_purpose_check`.execute(db);
  await sql`
    alter table payments add constraint payments_purpose_check check (purpose in
      ('new_business', 'renewal', 'adjustment', 'cancellation', 'statement', 'intent'))`.execute(db);
  await sql`alter table policy_versions add column term integer`.execute(db);
  await sql`alter table policy_versions add column superseded_at timestamptz`.execute(db);
  await sql`
    update policy_versions v set term = n.term
    from (
      select id, 1 + count(*) filter (where version_type = 'rn')
        over (partition by policy_id order by sequence) as term
      from policy_versions
    ) n
    where v.id = n.id and v.version_type <> 'st'`.execute(db);
}
