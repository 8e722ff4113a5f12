import fs from 'node:fs/promises';

/**
 * The schema snapshot (snapshot.sql, beside this file in src/ and in dist/): what an empty database is
 * created from in one step (platform/db/migrate.ts, `migrateFromSnapshot`). `npm run docs:schema` writes
 * it from the migrations; test/integration/platform/schema-snapshot.test.ts keeps it true to them.
 */
export function readSchemaSnapshot(): Promise<string> {
  return fs.readFile(new URL('./snapshot.sql', import.meta.url), 'utf8');
}
