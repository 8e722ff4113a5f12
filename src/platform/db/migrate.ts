import type { Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { withoutQueryTimeout } from './database.ts';

/**
 * Applies every pending migration, the same files on PGlite and PostgreSQL. Migrations are listed
 * statically (not read from a folder), so a test file or editor backup can never run as one.
 */
export async function migrateToLatest(
  db: Kysely<unknown>,
  migrations: Record<string, Migration>,
): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: () => Promise.resolve(migrations) };
  const migrator = new Migrator({ db, provider });
  // A migration may rightly take minutes on a large table: the query timeout does not apply.
  const { error, results } = await withoutQueryTimeout(() => migrator.migrateToLatest());
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
