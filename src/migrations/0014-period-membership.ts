import { sql, type Kysely } from 'kysely';

/**
 * A statement bills the journeys that start in its period without writing to them. Claiming every
 * journey with an UPDATE (0009) was half of a billing run's database time (7.2 of 15.6 s for 20,000
 * policies × 30 journeys, bench/billing.ts); reading their sums through (policy_id, start_at) is a
 * fraction of that.
 *
 * The rule that replaces the claim, exactly once as before: a journey is billed by the first statement
 * of its policy whose period ends at or after its start, unless it was uploaded after that statement
 * was written (`late`, set by `store_journey` under the policy's key-share lock, which a statement's
 * row lock excludes). Late journeys are still claimed by setting `statement_version_id`, by the next
 * statement. A void takes the same lock, and fixes on the row the statement that had already billed the
 * journey, so a void never changes what a written statement holds.
 *
 * `journey_statement` answers "which statement billed this journey" from a row's columns, for every
 * reader (the journey's `statement_version_reference`, a statement's list of journeys).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function journey_statement(
      p_statement_version_id uuid, p_late boolean, p_is_void boolean, p_policy_id uuid, p_start_at timestamptz
    ) returns uuid language sql stable as $$
      select coalesce(p_statement_version_id, case when not p_late and not p_is_void then (
        select s.id from statements s
        where s.policy_id = p_policy_id and s.period_end_at >= p_start_at
        order by s.period_end_at limit 1
      ) end)
    $$`.execute(db);
  // Rows are no longer updated by billing, so the free room 0009 left on each page for its in-place
  // updates is no longer used: new pages are filled again.
  await sql`alter table journeys set (fillfactor = 100)`.execute(db);

  // A statement's sums come from the index alone (an index-only scan): a policy's month of journeys is
  // spread over as many heap pages as it has journeys, but sits together in the index. It replaces the
  // plain (policy_id, start_at) index, which every reader by policy used and still can.
  await sql`drop index journeys_policy_start_idx`.execute(db);
  await sql`
    create index journeys_policy_start_idx on journeys (policy_id, start_at)
    include (end_at, distance_metres, usage_premium_pence, is_void)`.execute(db);
  // Index-only scans skip the heap only on pages the visibility map marks all-visible, which vacuum
  // does. By default an insert-only table is vacuumed after it grows by a fifth, so the latest fifth of
  // a large journeys table (months of journeys) would be read from the heap; here every 50,000 inserts,
  // each such vacuum visiting only the pages written since the last.
  await sql`
    alter table journeys set (autovacuum_vacuum_insert_threshold = 50000,
      autovacuum_vacuum_insert_scale_factor = 0)`.execute(db);
}
