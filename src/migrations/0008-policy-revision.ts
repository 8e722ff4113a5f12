import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Bumped by every change to a policy's payment records (versions bump version_count): with it, the
  // policy row alone says whether a cached view of the policy is still current.
  await sql`alter table policies add column payments_revision integer not null default 0`.execute(db);
}
