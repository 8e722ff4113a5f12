/**
 * Writes docs/schema.sql: the schema of a freshly migrated database, as `pg_dump --schema-only` prints
 * it, so that a reader sees every table, index, constraint, trigger and function at a glance, and a
 * review sees what a migration changed.
 *
 *   npm run docs:schema            # rewrite docs/schema.sql (PostgreSQL: TEST_DATABASE_URL, or the local server)
 *   npm run docs:schema -- --check # exit 1 when the committed file differs
 *
 * Left out, because they are not the schema's design but its state on the day it was migrated: the job
 * queue's own schema (pg-boss installs and upgrades it), the monthly partitions that migrations and the
 * housekeeping create for the months around today (`<table>_pYYYY_MM`; the partitioned parent and its
 * DEFAULT partition stay), and pg_dump's version lines and per-run `\restrict` keys.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { createTestDatabase, onPostgres } from '../test/support/database.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
export const SCHEMA_FILE = path.join(ROOT, 'docs/schema.sql');

/** pg_dump's output without what changes from run to run or from one pg_dump build to the next. */
export function normaliseDump(dump: string): string {
  return `${dump
    .split('\n')
    .filter((line) => !/^\\(un)?restrict /.test(line) && !/^-- Dumped (from|by) /.test(line))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}

/** The schema of a new database migrated to the latest migration (PostgreSQL only: it runs pg_dump). */
export async function dumpSchema(): Promise<string> {
  if (!onPostgres) throw new Error('the schema dump needs PostgreSQL: set TEST_DATABASE_URL');
  const handle = await createTestDatabase();
  const url = handle.connectionString;
  if (url === undefined) throw new Error('the test database has no connection string');
  try {
    const { stdout } = await promisify(execFile)(
      'pg_dump',
      [
        '--schema-only',
        '--no-owner',
        '--no-privileges',
        '--exclude-schema=pgboss',
        '--exclude-table=public.*_p[0-9][0-9][0-9][0-9]_[0-9][0-9]',
        url,
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    return normaliseDump(stdout);
  } finally {
    await handle.close();
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
  const schema = await dumpSchema();
  if (values.check) {
    const committed = fs.existsSync(SCHEMA_FILE) ? fs.readFileSync(SCHEMA_FILE, 'utf8') : '';
    if (committed !== schema) {
      console.error('docs/schema.sql is out of date: npm run docs:schema');
      process.exit(1);
    }
  } else {
    fs.writeFileSync(SCHEMA_FILE, schema);
    console.log(`wrote ${path.relative(ROOT, SCHEMA_FILE)}`);
  }
}
