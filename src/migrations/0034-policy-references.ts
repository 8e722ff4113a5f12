import { sql, type Kysely } from 'kysely';

/**
 * Policy references are unique across companies. A sharded `policies` table (src/distribution.ts)
 * could not keep that key, as it spans policies; so the references move to a table of their own (a
 * reference table on Citus: narrow rows, written once a policy), taken in the policy's creating
 * transaction, and `policies` keeps a plain index for reads by reference.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table policy_references (
      policy_reference text constraint policy_references_pkey primary key,
      policy_id uuid not null
    )`.execute(db);
  await sql`insert into policy_references (policy_reference, policy_id) select policy_reference, id from policies`.execute(
    db,
  );
  await sql`create index policies_reference_idx on policies (policy_reference)`.execute(db);
  await sql`alter table policies drop constraint policies_reference_key`.execute(db);
}
