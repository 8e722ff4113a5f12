import { sql, type Kysely } from 'kysely';

/**
 * Erasure and retention (issue 21, data protection).
 *
 * - `users.erased_at`: when the account was erased (POST /admin/policyholders/{ref}/erase); an erased
 *   account is never erased twice and never signs in again.
 * - The audit trail stays append-only, with one controlled exception: an UPDATE that changes nothing
 *   but `before` and `after`, in a transaction that set `milepost.erasure` (only the erasure does, with
 *   `set_config(..., true)`, local to its transaction). That is how the person's original values leave
 *   the trail while every record of who did what stays. DELETE is still refused.
 * - An erased journey keeps its distance, times and premium but has no route: `route = ''` with
 *   `point_count = 0` is allowed for every source (before, a posted or device journey needed two points).
 *   Added NOT VALID and validated apart, so validation takes no lock that stops writes.
 * - Route retention finds journeys billed long ago whose route is still detailed: a partial index by
 *   start over those with more than two points (a coarsened or erased route leaves it); a journey billed
 *   before a time started before it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users add column erased_at timestamptz`.execute(db);

  await sql`
    create or replace function milepost_audit_append_only() returns trigger language plpgsql as $$
    begin
      if TG_OP = 'UPDATE' and coalesce(current_setting('milepost.erasure', true), '') = 'on'
         and (to_jsonb(OLD) - 'before' - 'after') = (to_jsonb(NEW) - 'before' - 'after') then
        return NEW;
      end if;
      raise exception 'audit records are append-only' using errcode = 'P0001';
    end $$`.execute(db);

  await sql`alter table journeys drop constraint journeys_point_count`.execute(db);
  await sql`
    alter table journeys add constraint journeys_point_count check (
      (source in ('api', 'device') and (point_count >= 2 or (route = '' and point_count = 0)))
      or (source in ('estimate', 'odometer_reconciliation') and point_count = 0)) not valid`.execute(db);
  await sql`alter table journeys validate constraint journeys_point_count`.execute(db);

  await sql`create index journeys_route_retention on journeys (start_at) where point_count > 2`.execute(db);
}
