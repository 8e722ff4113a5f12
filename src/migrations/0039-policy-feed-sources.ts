import { sql, type Kysely } from 'kysely';

/** Owners that fit one notification (7,000 bytes, as in 0010) at 37 bytes each: a uuid and a comma. */
const MAX_OWNERS_NOTIFIED = Math.floor(7000 / 37);

/**
 * Migration 0010 notifies the change feed (channel `milepost_policies`) when policies are inserted or
 * updated. A policy read draws on more than that row: its versions, its payment records and its
 * account's reference, kept in memory with it (src/modules/policies/policy-row-cache.ts). Each of
 * those tables now notifies the owners of the policies it changed, in the database, so no code path
 * that writes them can leave a process showing what was there before; so does deleting a policy.
 * Products are read afresh by every policy read, and notify nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Rows that name a policy (`policy_id`): its owner is notified, one notification a statement.
  // NOTE: a statement of more rows than that (a billing chunk's thousand versions or charges) notifies
  // `*` without looking the owners up: the join cost as much as the insert itself, and the chunk's
  // update of the policies has notified `*` already (the same payload is sent once a transaction).
  await sql`
    create function notify_policy_owner_changes() returns trigger language plpgsql as $$
    declare
      owners text;
    begin
      if exists (select from changed offset ${sql.lit(MAX_OWNERS_NOTIFIED)}) then
        perform pg_notify('milepost_policies', '*');
        return null;
      end if;
      select string_agg(distinct p.user_id::text, ',') into owners
      from changed c join policies p on p.id = c.policy_id;
      if owners is not null then
        perform pg_notify('milepost_policies', case when octet_length(owners) > 7000 then '*' else owners end);
      end if;
      return null;
    end
    $$`.execute(db);
  for (const table of ['policy_versions', 'payments']) {
    const name = (event: string) => sql.id(`${table}_notify_${event}`);
    await sql`
      create trigger ${name('insert')} after insert on ${sql.table(table)}
      referencing new table as changed for each statement execute function notify_policy_owner_changes()`.execute(
      db,
    );
    await sql`
      create trigger ${name('update')} after update on ${sql.table(table)}
      referencing new table as changed for each statement execute function notify_policy_owner_changes()`.execute(
      db,
    );
    await sql`
      create trigger ${name('delete')} after delete on ${sql.table(table)}
      referencing old table as changed for each statement execute function notify_policy_owner_changes()`.execute(
      db,
    );
  }
  await sql`
    create trigger policies_notify_delete after delete on policies
    referencing old table as changed for each statement execute function notify_policy_changes()`.execute(db);

  // An account's rows change at every sign-in; a policy shows only its reference, so only a new
  // reference notifies (a row trigger with a condition: transition tables take no column list).
  await sql`
    create function notify_account_reference_changes() returns trigger language plpgsql as $$
    begin
      perform pg_notify('milepost_policies', new.id::text);
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger users_notify_reference after update of user_reference on users
    for each row when (old.user_reference is distinct from new.user_reference)
    execute function notify_account_reference_changes()`.execute(db);
}
