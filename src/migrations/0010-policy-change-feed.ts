import { sql, type Kysely } from 'kysely';

/**
 * Every statement that inserts or updates policies tells listeners whose policies changed, on channel
 * `milepost_policies`: the owners' user ids, comma-separated, or `*` when there are too many for one
 * notification (8,000 bytes). Processes keep policy reads in memory and drop them on these
 * (src/modules/policies/policy-row-cache.ts). PostgreSQL sends a notification when its transaction
 * commits, and never for one that rolls back.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function notify_policy_changes() returns trigger language plpgsql as $$
    declare
      owners text;
    begin
      select string_agg(distinct user_id::text, ',') into owners from changed;
      if owners is not null then
        perform pg_notify('milepost_policies', case when octet_length(owners) > 7000 then '*' else owners end);
      end if;
      return null;
    end
    $$`.execute(db);
  // One notification a statement, however many rows it changed (a billing chunk updates a thousand).
  await sql`
    create trigger policies_notify_insert after insert on policies
    referencing new table as changed for each statement execute function notify_policy_changes()`.execute(db);
  await sql`
    create trigger policies_notify_update after update on policies
    referencing new table as changed for each statement execute function notify_policy_changes()`.execute(db);
}
