import { sql, type Kysely, type Transaction } from 'kysely';
import { DEFAULT_MIGRATION_TABLE, Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { MIGRATION_LOCK_KEY, withoutQueryTimeout } from './database.ts';
import { splitSqlStatements } from './sql-script.ts';

/** The snapshot's line that names the migrations it records as applied, space-separated, in order. */
export const SNAPSHOT_MIGRATIONS_PREFIX = '-- migrations: ';

export interface MigrationOutcome {
  /** The migrations now recorded as applied that were not before, in order. */
  readonly applied: string[];
  /** Whether the database was empty and was created from the schema snapshot. */
  readonly fromSnapshot: boolean;
}

/**
 * Applies every pending migration, the same files on PGlite and PostgreSQL. Migrations are listed
 * statically (not read from a folder), so a test file or editor backup can never run as one.
 */
export async function migrateToLatest(
  db: Kysely<unknown>,
  migrations: Record<string, Migration>,
): Promise<string[]> {
  return (await migrate(db, migrations, undefined)).applied;
}

/** Where a wait for the migration lock is told (the process's logger). */
export interface MigrationLog {
  warn(details: object, message: string): void;
}

/** The session holding the migration lock another process waits for (pg_stat_activity's columns). */
export interface MigrationLockHolder {
  readonly pid: number;
  readonly applicationName: string;
  readonly clientAddress: string | null;
  /** When its transaction, which holds the lock until it ends, began. */
  readonly since: Date | null;
  readonly state: string | null;
}

/**
 * As `migrateToLatest`, but an empty database (no table in `public`) is first created in one step from
 * `snapshot` (src/migrations/snapshot.sql, written by `npm run docs:schema`): the schema the migrations
 * it names build, with those migrations recorded as applied, so that only later ones then run. A
 * database with any table runs every migration it lacks, as ever. One migration at a time took most of
 * a first start (46 migrations, 7–19 s on PGlite); the snapshot takes a fraction of a second.
 */
export function migrateFromSnapshot(
  db: Kysely<unknown>,
  migrations: Record<string, Migration>,
  snapshot: string,
  /**
   * Told once, before waiting, when another session holds the migration lock (another process
   * migrating, or one that stopped mid-migration with its session still open), naming that session.
   */
  log?: MigrationLog,
): Promise<MigrationOutcome> {
  return migrate(db, migrations, snapshot, log);
}

async function migrate(
  db: Kysely<unknown>,
  migrations: Record<string, Migration>,
  snapshot: string | undefined,
  log?: MigrationLog,
): Promise<MigrationOutcome> {
  const provider: MigrationProvider = { getMigrations: () => Promise.resolve(migrations) };
  // A migration may rightly take minutes on a large table: the query timeout does not apply.
  return withoutQueryTimeout(() =>
    // NOTE: one transaction that holds the migration lock itself (pg_advisory_xact_lock, before the
    // migrator creates its tables), so nothing outlives it in the server session: it works through
    // PgBouncer in transaction pooling, where Kysely's session lock did not exclude (database.ts,
    // TransactionLockAdapter). Kysely ran the pending migrations in one transaction already. The
    // snapshot is applied under the same lock and in the same transaction: of processes starting
    // together on one empty database, the first creates it and the others find its tables.
    db.transaction().execute(async (trx) => {
      // Nor does a statement_timeout the database or role sets (as pg_dump's scripts do, for this
      // transaction alone): it cut a migration, or the wait for another process's, and stopped the start.
      await sql`select set_config('statement_timeout', '0', true)`.execute(trx);
      await takeMigrationLock(trx, log);
      const recorded =
        snapshot !== undefined && (await isEmpty(trx)) ? await applySnapshot(trx, snapshot, migrations) : [];
      if (recorded.length === 0 && (await isUpToDate(trx, migrations)))
        return { applied: [], fromSnapshot: false };
      const outcome = await new Migrator({ db: trx, provider }).migrateToLatest();
      if (outcome.error !== undefined) {
        const failed = outcome.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
        // Thrown inside, so the transaction rolls back rather than committing a half.
        throw new Error(`migration ${failed} failed`, { cause: outcome.error });
      }
      const ran = (outcome.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
      return { applied: [...recorded, ...ran], fromSnapshot: recorded.length > 0 };
    }),
  );
}

/**
 * Takes the migration lock for `trx`, waiting as long as another session holds it (a migration may
 * rightly take minutes); the wait is logged first. NOTE: every start takes this lock,
 * migrations pending or not, and a start that waited on it said nothing, for as long as the holder
 * lived (a process paused mid-migration, a forgotten psql session).
 */
async function takeMigrationLock(trx: Transaction<unknown>, log: MigrationLog | undefined): Promise<void> {
  const key = sql.lit(MIGRATION_LOCK_KEY);
  const { rows } = await sql<{ taken: boolean }>`select pg_try_advisory_xact_lock(${key}) as taken`.execute(
    trx,
  );
  if (rows[0]?.taken === true) return;
  if (log !== undefined)
    log.warn(
      { holder: await migrationLockHolder(trx) },
      'waiting for the migration lock: another session holds it (a process migrating, or one stopped mid-migration whose session is still open); the start goes on once it is released',
    );
  await sql`select pg_advisory_xact_lock(${key})`.execute(trx);
}

/** The session holding the migration lock (a 64-bit advisory lock: its key's halves in classid and objid). */
async function migrationLockHolder(trx: Transaction<unknown>): Promise<MigrationLockHolder | undefined> {
  const high = MIGRATION_LOCK_KEY >> 32n;
  const low = MIGRATION_LOCK_KEY & 0xffffffffn;
  const { rows } = await sql<{
    pid: number;
    application_name: string;
    client_addr: string | null;
    xact_start: Date | null;
    state: string | null;
  }>`
    select a.pid, a.application_name, host(a.client_addr) as client_addr, a.xact_start, a.state
    from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.objsubid = 1
      and l.classid = ${sql.lit(String(high))}::oid and l.objid = ${sql.lit(String(low))}::oid
      and l.database = (select oid from pg_database where datname = current_database())
    limit 1`.execute(trx);
  const [row] = rows;
  if (row === undefined) return undefined;
  return {
    pid: row.pid,
    applicationName: row.application_name,
    clientAddress: row.client_addr,
    since: row.xact_start,
    state: row.state,
  };
}

/**
 * Whether the migrations recorded as applied are exactly `migrations`: then the migrator has nothing to
 * do, and is not asked. NOTE: it would first look for its two tables through Kysely's introspection,
 * which reads every table's columns, twice: 0.4 s of a PGlite start for a schema of 100 tables, where
 * this is one query. Any other case (a migration pending, or one recorded that this release lacks) is
 * the migrator's, as before.
 */
async function isUpToDate(
  trx: Transaction<unknown>,
  migrations: Record<string, Migration>,
): Promise<boolean> {
  // Asked first: a query naming a missing table would abort the transaction.
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass(${sql.lit(DEFAULT_MIGRATION_TABLE)}) is not null as present`.execute(trx);
  if (found[0]?.present !== true) return false;
  const { rows } = await sql<{
    name: string;
  }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)}`.execute(trx);
  const recorded = new Set(rows.map((row) => row.name));
  const expected = Object.keys(migrations);
  return recorded.size === expected.length && expected.every((name) => recorded.has(name));
}

/** Whether the database has no table, view or sequence of its own yet (the job queue's schema aside). */
async function isEmpty(trx: Transaction<unknown>): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    select exists (
      select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
    ) as found`.execute(trx);
  return rows[0]?.found !== true;
}

/**
 * The migrations `snapshot` records, when they are the first of `migrations` in the same order;
 * otherwise (a snapshot from another line of migrations) none, and the snapshot is not used.
 */
export function snapshotMigrations(snapshot: string, migrations: Record<string, Migration>): string[] {
  const line = snapshot.split('\n', 8).find((text) => text.startsWith(SNAPSHOT_MIGRATIONS_PREFIX));
  if (line === undefined) return [];
  const names = line.slice(SNAPSHOT_MIGRATIONS_PREFIX.length).trim().split(/\s+/);
  const known = Object.keys(migrations);
  return names.every((name, index) => known[index] === name) ? names : [];
}

/** Runs the snapshot's statements, one at a time (PGlite takes one a query); the migrations it recorded. */
async function applySnapshot(
  trx: Transaction<unknown>,
  snapshot: string,
  migrations: Record<string, Migration>,
): Promise<string[]> {
  const names = snapshotMigrations(snapshot, migrations);
  if (names.length === 0) return [];
  // As pg_dump's own script sets them, for this transaction alone: a function's body may name a table
  // created after it; notices (an extension's) are not news.
  const { rows } = await sql<{ bodies: string; messages: string }>`
    select current_setting('check_function_bodies') as bodies, current_setting('client_min_messages') as messages,
      set_config('check_function_bodies', 'off', true), set_config('client_min_messages', 'warning', true)`.execute(
    trx,
  );
  for (const statement of splitSqlStatements(snapshot)) await sql.raw(statement).execute(trx);
  // Back as they were, for the migrations that follow in this transaction.
  const [before] = rows;
  if (before === undefined) throw new Error('the session settings could not be read');
  await sql`select set_config('check_function_bodies', ${before.bodies}, true),
    set_config('client_min_messages', ${before.messages}, true)`.execute(trx);
  return names;
}
