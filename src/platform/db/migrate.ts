import { sql, type Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { MIGRATION_LOCK_KEY, withoutQueryTimeout } from './database.ts';

/**
 * Applies every pending migration, the same files on PGlite and PostgreSQL. Migrations are listed
 * statically (not read from a folder), so a test file or editor backup can never run as one.
 */
export async function migrateToLatest(
  db: Kysely<unknown>,
  migrations: Record<string, Migration>,
): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: () => Promise.resolve(migrations) };
  // A migration may rightly take minutes on a large table: the query timeout does not apply.
  const results = await withoutQueryTimeout(() =>
    // NOTE: one transaction that holds the migration lock itself (pg_advisory_xact_lock, before the
    // migrator creates its tables), so nothing outlives it in the server session: it works through
    // PgBouncer in transaction pooling, where Kysely's session lock did not exclude (database.ts,
    // TransactionLockAdapter). Kysely ran the pending migrations in one transaction already.
    db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(trx);
      const outcome = await new Migrator({ db: trx, provider }).migrateToLatest();
      if (outcome.error !== undefined) {
        const failed = outcome.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
        // Thrown inside, so the transaction rolls back rather than committing a half.
        throw new Error(`migration ${failed} failed`, { cause: outcome.error });
      }
      return outcome.results ?? [];
    }),
  );
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
