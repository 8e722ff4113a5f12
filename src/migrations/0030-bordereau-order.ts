import { sql, type Kysely } from 'kysely';

/**
 * The bordereau reads a month of versions in (effective time, id) order, a batch at a time from where
 * the last stopped (reports/bordereau-repository.ts): this index makes each batch a range read instead
 * of a sort of the month.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index policy_versions_effective_idx on policy_versions (effective_at, id)`.execute(db);
}
