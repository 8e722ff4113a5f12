/**
 * Writes, from one `pg_dump --schema-only` of a freshly migrated database:
 *
 * - docs/schema.sql: the schema as pg_dump prints it, so that a reader sees every table, index,
 *   constraint, trigger and function at a glance, and a review sees what a migration changed;
 * - src/migrations/snapshot.sql: the same schema as the statements a fresh database is created with in
 *   one step (src/platform/db/migrate.ts), with the monthly partitions the migrations make around today
 *   and the record of every migration as applied.
 *
 *   npm run docs:schema            # rewrite both (PostgreSQL: TEST_DATABASE_URL, or the local server)
 *   npm run docs:schema -- --check # exit 1 when a committed file differs
 *
 * Two files, not one: the document keeps pg_dump's comments and layout for reading, and leaves out what
 * is not the schema's design but its state on the day it was migrated; the snapshot must carry that state
 * (as rules relative to the day it runs) and the migration records, and ships with the service (dist/).
 *
 * Left out of both: the job queue's own schema (pg-boss installs and upgrades it), pg_dump's version
 * lines and per-run `\restrict` keys, and the monthly partitions as dated tables (`<table>_pYYYY_MM`; the
 * partitioned parent and its DEFAULT partition stay): the snapshot makes the same months relative to
 * the day it is applied, as the migrations did relative to theirs.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { migrations } from '../src/migrations/index.ts';
import { splitSqlStatements } from '../src/platform/db/sql-script.ts';
import { SNAPSHOT_MIGRATIONS_PREFIX } from '../src/platform/db/migrate.ts';
import { createTestDatabase, onPostgres } from '../test/support/database.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
export const SCHEMA_FILE = path.join(ROOT, 'docs/schema.sql');
export const SNAPSHOT_FILE = path.join(ROOT, 'src/migrations/snapshot.sql');

/**
 * Extensions a migration creates only where the server offers them (0027: pg_trgm, which embedded
 * PGlite lacks), with what depends on them: in the snapshot, these statements run under the same test.
 */
const OPTIONAL_EXTENSIONS: Readonly<Record<string, RegExp>> = {
  pg_trgm: /\bpg_trgm\b|\bgin_trgm_ops\b|\bgist_trgm_ops\b/,
};

/** pg_dump's output without what changes from run to run or from one pg_dump build to the next. */
export function normaliseDump(dump: string): string {
  return `${dump
    .split('\n')
    .filter((line) => !/^\\(un)?restrict /.test(line) && !/^-- Dumped (from|by) /.test(line))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}

/** A monthly partition of the migrated database, as a month relative to the one it was migrated in. */
interface MonthlyPartition {
  parent: string;
  monthOffset: number;
  options: string | null;
}

async function monthlyPartitions(db: Kysely<unknown>): Promise<MonthlyPartition[]> {
  const { rows } = await sql<{ parent: string; month_offset: number; options: string | null }>`
    select parent.relname as parent,
      ((substring(child.relname from '_p([0-9]{4})_[0-9]{2}$')::int * 12
        + substring(child.relname from '_p[0-9]{4}_([0-9]{2})$')::int)
       - (extract(year from now() at time zone 'UTC')::int * 12
        + extract(month from now() at time zone 'UTC')::int))::int as month_offset,
      array_to_string(child.reloptions, ', ') as options
    from pg_inherits i
    join pg_class child on child.oid = i.inhrelid
    join pg_class parent on parent.oid = i.inhparent
    join pg_namespace n on n.oid = parent.relnamespace
    where n.nspname = 'public' and child.relkind in ('r', 'p') and child.relname ~ '_p[0-9]{4}_[0-9]{2}$'
    order by parent.oid, month_offset`.execute(db);
  return rows.map((row) => ({ parent: row.parent, monthOffset: row.month_offset, options: row.options }));
}

const literal = (text: string | null): string => (text === null ? 'NULL' : `'${text.replaceAll("'", "''")}'`);

/** The statements that make `partitions` for the months around the day they run, in the order they were made. */
function partitionStatement(partitions: readonly MonthlyPartition[]): string {
  const rows = partitions
    .map((p) => `    (${literal(p.parent)}, ${String(p.monthOffset)}, ${literal(p.options)})`)
    .join(',\n');
  return `DO $snapshot$
DECLARE
  spec record;
  month date;
  partition text;
BEGIN
  FOR spec IN SELECT * FROM (VALUES
${rows}
  ) AS s(parent, month_offset, options)
  LOOP
    month := (date_trunc('month', now() at time zone 'UTC') + make_interval(months => spec.month_offset))::date;
    partition := spec.parent || '_p' || to_char(month, 'YYYY_MM');
    EXECUTE format('CREATE TABLE public.%I PARTITION OF public.%I FOR VALUES FROM (%L) TO (%L)',
      partition, spec.parent, to_char(month, 'YYYY-MM-DD') || 'T00:00:00Z',
      to_char((month + interval '1 month')::date, 'YYYY-MM-DD') || 'T00:00:00Z');
    IF spec.options IS NOT NULL THEN
      EXECUTE format('ALTER TABLE public.%I SET (%s)', partition, spec.options);
    END IF;
  END LOOP;
END $snapshot$`;
}

/** A statement that runs only where `extension` is offered. */
function optional(extension: string, statement: string): string {
  return `DO $snapshot$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_catalog.pg_available_extensions WHERE name = ${literal(extension)}) THEN
    EXECUTE ${literal(statement)};
  END IF;
END $snapshot$`;
}

/** The snapshot: the dump's statements (less its session settings), then the partitions and migration records. */
export function snapshotFrom(
  dump: string,
  partitions: readonly MonthlyPartition[],
  names: readonly string[],
): string {
  const statements = splitSqlStatements(dump)
    // Session settings: the snapshot's runner sets what it needs for its transaction alone.
    .filter((statement) => !/^SET /.test(statement) && !/^SELECT pg_catalog\.set_config\(/.test(statement))
    .map((statement) => {
      const extension = Object.entries(OPTIONAL_EXTENSIONS).find(([, uses]) => uses.test(statement));
      return extension === undefined ? statement : optional(extension[0], statement);
    });
  statements.push(partitionStatement(partitions));
  statements.push(
    `INSERT INTO public.kysely_migration (name, "timestamp")
SELECT name, to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM unnest(ARRAY[
${names.map((name) => `  ${literal(name)}`).join(',\n')}
]) AS name`,
  );
  return `-- The schema of a freshly migrated database, applied in one step to an empty one (src/platform/db/migrate.ts).
-- Generated with docs/schema.sql by \`npm run docs:schema\`; never edited by hand.
${SNAPSHOT_MIGRATIONS_PREFIX}${names.join(' ')}

${statements.join(';\n\n')};
`;
}

/** The schema of a new database migrated to the latest migration (PostgreSQL only: it runs pg_dump). */
export async function dumpSchema(): Promise<{ schema: string; snapshot: string }> {
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
    const schema = normaliseDump(stdout);
    const partitions = await monthlyPartitions(handle.db as Kysely<unknown>);
    return { schema, snapshot: snapshotFrom(schema, partitions, Object.keys(migrations)) };
  } finally {
    await handle.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
  const { schema, snapshot } = await dumpSchema();
  let stale = false;
  for (const [file, text] of [
    [SCHEMA_FILE, schema],
    [SNAPSHOT_FILE, snapshot],
  ] as const) {
    if (values.check) {
      const committed = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
      if (committed !== text) {
        console.error(`${path.relative(ROOT, file)} is out of date: npm run docs:schema`);
        stale = true;
      }
    } else {
      fs.writeFileSync(file, text);
      console.log(`wrote ${path.relative(ROOT, file)}`);
    }
  }
  if (stale) process.exit(1);
}

// Not awaited: tests import this module, and test/support/shard.ts loads them with `require`, which
// refuses a top-level await. A failure still ends the process (an unhandled rejection).
if (import.meta.main) void main();
