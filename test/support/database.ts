import { createHash, randomBytes } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely, type QueryExecutorProvider, type Transaction } from 'kysely';
import pg from 'pg';
import { migrations } from '../../src/migrations/index.ts';
import { openDatabase, type DatabaseHandle } from '../../src/platform/db/database.ts';
import { migrateToLatest } from '../../src/platform/db/migrate.ts';
import { createJobs } from '../../src/platform/jobs/jobs.ts';
import type { Database } from '../../src/schema.ts';

/** PostgreSQL when TEST_DATABASE_URL is set, else PGlite in process. */
export const TEST_DATABASE_URL = process.env['TEST_DATABASE_URL'];
export const onPostgres = TEST_DATABASE_URL !== undefined && TEST_DATABASE_URL !== '';
/**
 * For `test(…, { skip })` of a test that runs the embedded database (or none) whatever TEST_DATABASE_URL
 * says: on PostgreSQL it would do the very same work again, so it runs in `npm test` only.
 */
export const embeddedOnly: string | false =
  onPostgres && 'runs the embedded database (or none) whatever TEST_DATABASE_URL says: `npm test` runs it';

/**
 * A key that changes whenever a migration (or the job schema's version) changes. It hashes the
 * migrations this process loaded, not the files on disk: a file edited while a suite runs must not
 * file a template built from the old code under the new key. (Migrations keep their SQL inside `up`.)
 */
async function schemaKey(): Promise<string> {
  const hash = createHash('sha256');
  for (const [name, migration] of Object.entries(migrations).sort(([a], [b]) => a.localeCompare(b)))
    hash.update(name).update(migration.up.toString());
  const bossPackage = JSON.parse(
    await fs.readFile(path.resolve(import.meta.dirname, '../../node_modules/pg-boss/package.json'), 'utf8'),
  ) as { version: string };
  hash.update(bossPackage.version);
  return hash.digest('hex').slice(0, 16);
}

async function prepare(handle: DatabaseHandle<Database>): Promise<void> {
  await migrateToLatest(handle.db as never, migrations);
  const jobs = createJobs({
    connectionString: handle.connectionString,
    pglite: handle.pglite,
    runWorkers: false,
  });
  await jobs.start();
  await jobs.stop(1);
}

/**
 * The migrated PGlite data directory every test file starts from, kept on disk between processes. It is
 * stored as a plain tar (46 MB against 6 MB gzipped): each test process loads it at least once, and not
 * unzipping it spares 0.3 s of CPU a load. PGlite reads it straight from the file (`openAsBlob`), which
 * spares another 0.3 s of copies.
 */
async function pgliteTemplate(): Promise<Blob> {
  const file = path.join(os.tmpdir(), `milepost-pglite-template-${await schemaKey()}.tar`);
  try {
    return await openAsBlob(file);
  } catch {
    const handle = await openDatabase<Database>({});
    await prepare(handle);
    const dump = await handle.pglite!.dumpDataDir('none');
    await handle.close();
    const temp = `${file}.${process.pid}.tmp`;
    await fs.writeFile(temp, Buffer.from(await dump.arrayBuffer()));
    // Linked, not renamed, into place: parallel test processes never read half a file, and a file
    // another process is reading (its Blob reads the file when PGlite does) is never replaced.
    await fs.link(temp, file).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    });
    await fs.rm(temp);
    return dump;
  }
}

function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

async function postgresTemplate(admin: pg.Client, base: string): Promise<string> {
  const name = `milepost_template_${await schemaKey()}`;
  // Serialise template creation across test processes.
  await admin.query('select pg_advisory_lock(727274)');
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) {
      await admin.query(`create database "${name}_building"`).catch(async () => {
        await admin.query(`drop database if exists "${name}_building"`);
        await admin.query(`create database "${name}_building"`);
      });
      const handle = await openDatabase<Database>({
        connectionString: databaseUrl(base, `${name}_building`),
        poolSize: 2,
      });
      await prepare(handle);
      await handle.close();
      await admin.query(`alter database "${name}_building" rename to "${name}"`);
    }
  } finally {
    await admin.query('select pg_advisory_unlock(727274)');
  }
  return name;
}

/** A fresh, migrated database (job schema installed) for one test file; `close` drops it. */
export async function createTestDatabase(): Promise<DatabaseHandle<Database>> {
  if (!onPostgres)
    return openDatabase<Database>({ loadDataDir: await pgliteTemplate(), sharedBuffersMb: 16 });
  const base = TEST_DATABASE_URL!;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    const template = await postgresTemplate(admin, base);
    return await newDatabase<Database>(admin, base, `template "${template}"`, 10);
  } finally {
    await admin.end();
  }
}

/**
 * A fresh database with no schema at all, for tests of migrations themselves (they migrate it as far as
 * they need); `close` drops it.
 */
export async function createEmptyDatabase<DB = Database>(): Promise<DatabaseHandle<DB>> {
  if (!onPostgres) return openDatabase<DB>({});
  const base = TEST_DATABASE_URL!;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    return await newDatabase<DB>(admin, base, '', 2);
  } finally {
    await admin.end();
  }
}

/**
 * Attributes the rest of transaction `trx` to a test's staff actor, as the service's attributing dialect
 * does for a request (`milepost.audit`, read by the audit triggers of migration 0027): for tests of
 * databases opened without that dialect.
 */
export async function auditAsStaff(
  trx: QueryExecutorProvider,
  attribution: { at: string; requestId: string; action: string },
): Promise<void> {
  await sql`select set_config('milepost.audit', ${JSON.stringify({
    at: attribution.at,
    request_id: attribution.requestId,
    actor: 'staff:test',
    action: attribution.action,
  })}, true)`.execute(trx);
}

/** A new PostgreSQL database (`from`: a `template "name"` clause, or nothing) whose `close` drops it. */
async function newDatabase<DB>(
  admin: pg.Client,
  base: string,
  from: string,
  poolSize: number,
): Promise<DatabaseHandle<DB>> {
  const name = `milepost_test_${randomBytes(6).toString('hex')}`;
  await admin.query(`create database "${name}" ${from}`);
  const handle = await openDatabase<DB>({ connectionString: databaseUrl(base, name), poolSize });
  return {
    ...handle,
    close: async () => {
      await handle.close();
      const dropper = new pg.Client({ connectionString: base });
      await dropper.connect();
      await dropper.query(`drop database if exists "${name}" with (force)`).finally(() => dropper.end());
    },
  };
}

/**
 * The `from … where` of the backends of the current database waiting for a lock on `table`. pg_locks
 * is the whole cluster's, and every test database copied from one template gives its tables the same
 * OIDs, so without the database a test would count, or terminate, another test file's backends.
 */
export function lockWaitersOn(table: string): string {
  return `from pg_locks where relation = '${table}'::regclass and not granted
    and database = (select oid from pg_database where datname = current_database())`;
}

/**
 * `change` made in a transaction of its own and held open, for a race against a change in flight:
 * resolves once it has run; `commit` ends the transaction.
 */
export async function heldOpen(
  db: Kysely<Database>,
  change: (trx: Transaction<Database>) => Promise<void>,
): Promise<{ commit: () => Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let made!: () => void;
  const ready = new Promise<void>((resolve) => (made = resolve));
  const done = db.transaction().execute(async (trx) => {
    await change(trx);
    made();
    await released;
  });
  await Promise.race([ready, done]);
  return {
    commit: async () => {
      release();
      await done;
    },
  };
}

/** Whether some session of `db`'s database waits for a lock within `limitMs` (PostgreSQL). */
export async function someoneWaitsForLock(db: Kysely<Database>, limitMs: number): Promise<boolean> {
  for (const until = Date.now() + limitMs; Date.now() < until;) {
    const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where wait_event_type = 'Lock' and datname = current_database()`.execute(db);
    if ((waiting.rows[0]?.n ?? 0) > 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}
