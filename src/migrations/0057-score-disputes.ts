import { sql, type Kysely } from 'kysely';
import { auditTable } from './0027-back-office.ts';

/**
 * Score disputes. A policyholder (or their insurer's integration) disputes one driving event once: the
 * unique `(policy_id, event_id)` makes a second dispute of it a conflict, whatever races. Staff decide it
 * once (pending → accepted | rejected); an accepted event no longer counts, and the trip's and month's
 * scores are rewritten in the decision's transaction. `score_disputes`, `trip_scores` and `score_months`
 * are audited by the trigger of migration 0027, so a decision and the scores it changed are in the staff
 * audit trail with their actor.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table score_disputes (
      id uuid not null default gen_random_uuid(),
      policy_id uuid not null references policies (id),
      company_id uuid not null references companies (id),
      environment text not null,
      event_id uuid not null,
      journey_id uuid not null,
      month text not null,
      reason text not null,
      details text,
      state text not null,
      decision_reason text,
      decided_by text,
      decided_staff_id uuid,
      created_at timestamptz not null,
      decided_at timestamptz,
      constraint score_disputes_pkey primary key (policy_id, id),
      constraint score_disputes_event_key unique (policy_id, event_id),
      constraint score_disputes_event_fkey foreign key (policy_id, event_id)
        references trip_score_events (policy_id, id),
      constraint score_disputes_environment_check check (environment in ('sandbox', 'production')),
      constraint score_disputes_month_check check (month ~ '^[0-9]{4}-[0-9]{2}$'),
      constraint score_disputes_reason_check check (reason in ('passenger', 'gps_error', 'other')),
      constraint score_disputes_details_check check (
        (details is null or char_length(details) between 1 and 1000)
        and (reason <> 'other' or details is not null)),
      constraint score_disputes_state_check check (state in ('pending', 'accepted', 'rejected')),
      constraint score_disputes_decision_check check (
        (state = 'pending') = (decided_at is null)
        and (state = 'pending') = (decision_reason is null))
    )`.execute(db);
  // The staff queue (by state, oldest first) and a dispute found by its reference alone.
  await sql`create index score_disputes_state_idx on score_disputes (state, created_at)`.execute(db);
  // NOTE: not unique: a sharded database keeps unique keys only with the policy in them; the primary
  // key is, and a dispute's id is a random UUID.
  await sql`create index score_disputes_id_idx on score_disputes (id)`.execute(db);
  for (const table of ['score_disputes', 'trip_scores', 'score_months']) await auditTable(db, table);
}
