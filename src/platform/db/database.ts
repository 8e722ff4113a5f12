import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  Kysely,
  PGliteDialect,
  PostgresAdapter,
  PostgresDialect,
  sql,
  type DialectAdapter,
  type MigrationLockOptions,
  type PostgresPool,
  type PostgresPoolClient,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import { attributingDialect, auditing } from './audit-context.ts';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';
import { inStatementSpan } from './statement-names.ts';

export type DatabaseKind = 'pglite' | 'postgres';

/** An open database: Kysely over either driver, plus what only the wiring needs to know. */
export interface DatabaseHandle<DB> {
  readonly kind: DatabaseKind;
  readonly db: Kysely<DB>;
  /** Set for the embedded driver: pg-boss shares this instance. */
  readonly pglite: PGlite | undefined;
  readonly connectionString: string | undefined;
  /** The bound on one statement's answer on PostgreSQL (0: none); dedicated connections use it too. */
  readonly queryTimeoutMs: number;
  /**
   * One statement outside any transaction, straight on pg's pool past Kysely's driver: for the hot
   * statement of ingestion. On PostgreSQL it is the extended protocol's unnamed statement, parsed,
   * planned and run in one exchange, like Kysely's. NOTE: never named, because behind PgBouncer in
   * transaction pooling (1.18 here) the next transaction may reach a server session that has not
   * prepared a named statement ("does not exist") or that has it from another client ("already exists").
   */
  prepared<Row>(text: string, values: readonly unknown[]): Promise<Row[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** `DatabaseHandle.prepared`, as the modules whose hot statement it sends are handed it. */
export type Prepared = DatabaseHandle<unknown>['prepared'];

const CONNECTION_MESSAGES = [
  'Connection terminated',
  'connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Query read timeout',
];
/** SQLSTATE read_only_sql_transaction: a write to a database that takes none. */
export const READ_ONLY_TRANSACTION = '25006';
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * The database could not be reached or dropped the connection (as opposed to refusing a statement):
 * PostgreSQL's classes 08 (connection exception) and 57P (shut down, terminated by an administrator,
 * starting up), the socket's errors, and pg's own messages for a lost or unobtainable connection; or
 * it takes no writes (25006: a failover left the connection on a standby, or the provider set the
 * database read-only as its disk filled). The request that met one is answered 503, to be tried
 * again, and its connection is dropped, so the next one is opened afresh.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (code.startsWith('08') ||
      code.startsWith('57P') ||
      code === READ_ONLY_TRANSACTION ||
      CONNECTION_CODES.has(code))
  )
    return true;
  return CONNECTION_MESSAGES.some((text) => error.message.includes(text));
}

/** int8 as a JS number on both drivers; a value beyond 2^53 fails loudly instead of rounding. */
export function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`int8 value ${text} is beyond 2^53`);
  return value;
}
const INT8_OID = 20;
const DATE_OID = 1082;
// NOTE: pg turns a `date` into a local-midnight Date, which shifts the day on hosts east of UTC; keep the text.
const keepText = (text: string): string => text;

/**
 * A timestamp parameter for PGlite, which writes a Date with `toISOString`: past year 9999 that has a
 * sign (`+010000-01-01T00:00:00.000Z`, the end of a range to 9999-12-31), which PostgreSQL refuses (a
 * 500); it reads the year without the sign, as pg writes it. Other values as PGlite writes them.
 */
function timestampParam(value: unknown, pgliteWrites: (value: unknown) => string): string {
  return value instanceof Date && Number.isFinite(value.getTime())
    ? value.toISOString().replace(/^\+/, '')
    : pgliteWrites(value);
}

/**
 * The embedded data directory's cluster could not be opened or made: files cut short or damaged (a
 * disk that filled, a copy taken while a process ran), or a disk that refuses the writes. Nothing in
 * the directory is changed.
 */
export class EmbeddedDatabaseUnusableError extends Error {
  constructor(dataDir: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `the embedded database in ${dataDir} could not be opened (${reason}): restore the directory from a backup, or move it away to start with an empty one`,
      { cause },
    );
    this.name = 'EmbeddedDatabaseUnusableError';
  }
}

/**
 * The embedded database's directory cannot be made, or its lock file written beside it: DATA_DIR names
 * a file, a directory this process may not write, or a read-only or full file system.
 */
export class DataDirUnwritableError extends Error {
  constructor(dataDir: string, cause: NodeJS.ErrnoException) {
    super(
      `the data directory ${dataDir} cannot be created or written (${cause.message}): set DATA_DIR to a directory this process may write`,
      { cause },
    );
    this.name = 'DataDirUnwritableError';
  }
}

/** The file system's refusals to make or write a path (as opposed to a bug, or the directory in use). */
const UNWRITABLE_PATH_CODES = new Set([
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOTDIR',
  'EEXIST',
  'ENOSPC',
  'EDQUOT',
  'ENOENT',
]);

/** Makes the embedded data directory's parent and takes its lock, refusals named as DataDirUnwritableError. */
async function takeDataDir(dataDir: string): Promise<DataDirLock> {
  try {
    await fs.mkdir(path.dirname(dataDir), { recursive: true });
    return lockDataDir(dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && UNWRITABLE_PATH_CODES.has(code))
      throw new DataDirUnwritableError(path.dirname(dataDir), error as NodeJS.ErrnoException);
    throw error;
  }
}

export interface OpenOptions {
  /** PostgreSQL URL; undefined opens PGlite. */
  readonly connectionString?: string | undefined;
  /** PGlite data directory; undefined keeps it in memory. */
  readonly dataDir?: string | undefined;
  /** A PGlite dump (`dumpDataDir`) to start from: how tests get a migrated database without migrating. */
  readonly loadDataDir?: Blob | undefined;
  /**
   * With `dataDir`: the dump a data directory that holds no cluster yet is created from, in place of
   * PGlite's initdb (see `seedDataDir`); undefined from it leaves initdb to PGlite.
   */
  readonly seed?: (() => Promise<Blob | undefined>) | undefined;
  /**
   * PGlite only: its shared buffers, PostgreSQL's 128 MB when undefined. PGlite allocates them inside
   * its WebAssembly memory at every open, which was a quarter of opening a test's database (0.4–0.8 s);
   * a test's few megabytes of data need 16.
   */
  readonly sharedBuffersMb?: number | undefined;
  readonly poolSize?: number;
  /**
   * PostgreSQL only: a statement with no answer after this long fails (503 to a request) and its
   * connection is discarded, so a database that went silent (a failover, a partition) cannot hold a
   * request or a worker for ever. 0 turns the bound off. Migrations are exempt (`withoutQueryTimeout`).
   */
  readonly queryTimeoutMs?: number;
}

/** The default for `queryTimeoutMs` (DATABASE_QUERY_TIMEOUT_MS). */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;
/** How long a new connection may take before the request that wanted it answers 503. */
export const CONNECTION_TIMEOUT_MS = 5_000;

const unboundedQueries = new AsyncLocalStorage<true>();

/**
 * Runs `work` with no bound on its statements' time: for migrations, whose statements may rightly
 * take minutes on a large table (a timed-out migration would leave the server still running it).
 */
export function withoutQueryTimeout<T>(work: () => Promise<T>): Promise<T> {
  return unboundedQueries.run(true, work);
}

/** The query timeout for a statement issued now (undefined: none, or inside `withoutQueryTimeout`). */
function timeoutFor(queryTimeoutMs: number): number | undefined {
  return queryTimeoutMs > 0 && unboundedQueries.getStore() === undefined ? queryTimeoutMs : undefined;
}

/**
 * How often a PostgreSQL session running a statement checks that its client is still connected
 * (`client_connection_check_interval`, PostgreSQL 14 and later, Linux).
 */
export const CLIENT_CHECK_INTERVAL_MS = 2_000;

/**
 * Settings for a pg pool or client that survive a lost connection: TCP keepalive finds a silent peer,
 * a connection attempt gives up after CONNECTION_TIMEOUT_MS, and every client carries an 'error'
 * listener (pg's pool listens only on idle clients; a checked-out client's unhandled 'error' would
 * end the process).
 *
 * NOTE: a statement given up on (DATABASE_QUERY_TIMEOUT_MS, a process stopped) has its connection
 * closed, but PostgreSQL notices a closed client only when it next writes to it, so a statement that
 * computes for long, such as a report's batch on an unanalysed table, kept a core busy for minutes
 * after its request had answered 503. Each session checks its client while a statement runs and stops
 * the statement within CLIENT_CHECK_INTERVAL_MS. Sent as a startup option: PgBouncer, which takes
 * `options` only to ignore it (`ignore_startup_parameters`), needs the setting on PostgreSQL's side
 * (docs/operations.md); PGOPTIONS is kept, and an `options` in DATABASE_URL replaces both.
 */
export function resilientConnectionSettings(connectionString: string) {
  return {
    connectionString,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
    // PGOPTIONS, which pg reads only when no `options` is given, comes after: an operator's own wins.
    options: [
      `-c client_connection_check_interval=${String(CLIENT_CHECK_INTERVAL_MS)}`,
      process.env['PGOPTIONS'],
    ]
      .filter((part) => part !== undefined && part !== '')
      .join(' '),
  };
}

/** A pg client whose connection attempt gives up after CONNECTION_TIMEOUT_MS, whatever the pool waits. */
class ConnectBoundedClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: CONNECTION_TIMEOUT_MS });
  }
}

/** A pg pool whose clients, checked out or idle, never crash the process when their connection dies. */
function createResilientPool(config: pg.PoolConfig, onError: (error: Error) => void): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('error', onError);
  pool.on('connect', (client) => {
    // Its query in flight fails (503 to the request), and the pool drops the broken client.
    client.on('error', onError);
  });
  return pool;
}

/**
 * The pool as Kysely sees it, with two additions: each statement carries the query timeout, and a
 * client whose statement met a dead or silent connection is destroyed on release instead of going
 * back to the pool (pg keeps a timed-out client, with its statement still pending, as usable).
 */
function boundedPool(pool: pg.Pool, queryTimeoutMs: number): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let broken = false;
    const markBroken = (error: unknown): never => {
      if (isDatabaseUnavailable(error)) broken = true;
      throw error;
    };
    const query = (statement: unknown, parameters?: readonly unknown[]): unknown => {
      // A ROLLBACK after a timed-out statement would queue behind it and wait as long again.
      if (broken)
        return Promise.reject(new Error('Connection terminated: an earlier statement got no answer'));
      if (typeof statement !== 'string') return client.query(statement as pg.Submittable);
      const timeout = timeoutFor(queryTimeoutMs);
      return client
        .query({
          text: statement,
          values: parameters === undefined ? [] : [...parameters],
          ...(timeout === undefined ? {} : { query_timeout: timeout }),
        } as pg.QueryConfig)
        .catch(markBroken);
    };
    return {
      query: query as PostgresPoolClient['query'],
      release: (destroy?: boolean) => {
        client.release(destroy === true || broken);
      },
    };
  };
  return {
    options: pool.options,
    end: () => pool.end(),
    async connect() {
      const client = await pool.connect();
      let wrapped = clients.get(client);
      if (wrapped === undefined) clients.set(client, (wrapped = wrap(client)));
      return wrapped;
    },
  };
}

/**
 * Kysely's PostgreSQL adapter, but the migration lock of a migrator given a transaction (migrate.ts)
 * is `pg_advisory_xact_lock`, released by that transaction's end. Kysely's own is a session lock taken
 * and released by statements outside the transaction: through PgBouncer in transaction pooling each of
 * them may reach another server session, so two processes starting together both migrated ("you don't
 * own a lock of type ExclusiveLock", then a duplicate key on pg_type) and the lock stayed with an idle
 * server connection, to stop the next start for an hour.
 */
class TransactionLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
    if (!db.isTransaction) return super.acquireMigrationLock(db, options);
    await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(db);
  }
  override async releaseMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
    if (!db.isTransaction) return super.releaseMigrationLock(db, options);
  }
}

/** The advisory lock key migrations hold (Kysely's own, so an older process's migrator excludes too). */
export const MIGRATION_LOCK_KEY = 3853314791062309107n;

class PooledPostgresDialect extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionLockAdapter();
  }
}

export async function openDatabase<DB>(options: OpenOptions): Promise<DatabaseHandle<DB>> {
  if (options.connectionString !== undefined) {
    const types = new pg.TypeOverrides();
    types.setTypeParser(INT8_OID, parseInt8);
    types.setTypeParser(DATE_OID, keepText);
    const queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    // NOTE: a connection lost (a failover, an idle timeout, a PgBouncer restart, pg_terminate_backend)
    // must not crash the process, and while the database cannot be reached a request waits at most
    // CONNECTION_TIMEOUT_MS for a connection and then answers 503, rather than hanging.
    const pool = createResilientPool(
      {
        ...resilientConnectionSettings(options.connectionString),
        // pg's pool bounds two waits with this one setting: a new connection, and a turn for one of
        // the pool's connections. A new connection still gives up after CONNECTION_TIMEOUT_MS (the
        // client class below); a burst of requests on a healthy database waits its turn as long as a
        // statement may run, instead of answering 503 after 5 s (1,000 concurrent identical journeys
        // on a pool of 10 got 970 × 503 on this machine).
        connectionTimeoutMillis: Math.max(
          CONNECTION_TIMEOUT_MS,
          queryTimeoutMs > 0 ? queryTimeoutMs : DEFAULT_QUERY_TIMEOUT_MS,
        ),
        Client: ConnectBoundedClient,
        types,
        max: options.poolSize ?? 10,
        // A backend that has loaded its caches (PL/pgSQL's plans of store_journey among them) is worth
        // keeping through a lull: pg's default closes it after 10 s idle, and its replacement starts
        // cold (bench/journeys.ts ran its first phase after a pause at two thirds of the speed of the next).
        idleTimeoutMillis: 120_000,
      },
      () => undefined,
    );
    const db = new Kysely<DB>({
      dialect: attributingDialect(new PooledPostgresDialect({ pool: boundedPool(pool, queryTimeoutMs) })),
    });
    return {
      kind: 'postgres',
      db,
      pglite: undefined,
      connectionString: options.connectionString,
      queryTimeoutMs,
      // pool.query releases a client whose statement failed or timed out with the error: the pool drops it.
      prepared: async <Row>(text: string, values: readonly unknown[]) => {
        // An audited request's statements go through Kysely's driver, which tells the database who acts.
        if (auditing()) return (await db.executeQuery<Row>(CompiledQuery.raw(text, [...values]))).rows;
        const timeout = timeoutFor(queryTimeoutMs);
        const config = {
          text,
          values: [...values],
          ...(timeout === undefined ? {} : { query_timeout: timeout }),
        } as pg.QueryConfig;
        return (await inStatementSpan({ sql: text }, () => pool.query(config))).rows as Row[];
      },
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      close: () => db.destroy(),
    };
  }
  const lock = options.dataDir === undefined ? undefined : await takeDataDir(options.dataDir);
  // Imported here, not at the top: a process on PostgreSQL never loads PGlite (9 MB of memory).
  const { PGlite, types } = await import('@electric-sql/pglite');
  const timestamp = (oid: number) => {
    const pgliteWrites = types.serializers[oid];
    if (pgliteWrites === undefined) return {};
    return { [oid]: (value: unknown) => timestampParam(value, pgliteWrites) };
  };
  if (options.dataDir !== undefined && options.seed !== undefined)
    await seedDataDir(PGlite, options.dataDir, options.seed).catch((error: unknown) => {
      lock?.release();
      throw new EmbeddedDatabaseUnusableError(options.dataDir ?? '', error);
    });
  const pglite = await PGlite.create({
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.loadDataDir === undefined ? {} : { loadDataDir: options.loadDataDir }),
    ...(options.sharedBuffersMb === undefined
      ? {}
      : {
          startParams: [
            ...PGlite.defaultStartParams,
            '-c',
            `shared_buffers=${String(options.sharedBuffersMb)}MB`,
          ],
        }),
    // NOTE: no extensions. PGlite links each as a second WebAssembly module, and with btree_gist loaded
    // every Node process tested ran its JavaScript slower (migration 0016).
    parsers: { [INT8_OID]: parseInt8, [DATE_OID]: keepText },
    serializers: { ...timestamp(types.TIMESTAMP), ...timestamp(types.TIMESTAMPTZ) },
  }).catch((error: unknown) => {
    lock?.release();
    // PGlite reports a damaged cluster as a WebAssembly abort, which names no file or directory.
    throw options.dataDir === undefined ? error : new EmbeddedDatabaseUnusableError(options.dataDir, error);
  });
  const db = new Kysely<DB>({ dialect: attributingDialect(new PGliteDialect({ pglite })) });
  return {
    kind: 'pglite',
    db,
    pglite,
    connectionString: undefined,
    queryTimeoutMs: 0,
    // Through Kysely, which holds PGlite's one session for a transaction: a query sent to PGlite
    // directly could land inside another request's open transaction.
    prepared: async <Row>(text: string, values: readonly unknown[]) =>
      (await db.executeQuery<Row>(CompiledQuery.raw(text, [...values]))).rows,
    ping: async () => {
      await pglite.query('select 1');
    },
    close: async () => {
      await db.destroy();
      // NOTE: Kysely closes PGlite only if it ran a query itself; close it explicitly so the process can exit.
      if (!pglite.closed) await pglite.close();
      lock?.release();
    },
  };
}

/**
 * Creates the cluster of a data directory that has none (no `PG_VERSION`) from the dump `seed` gives,
 * under the caller's lock. NOTE: PGlite's initdb is most of a first start (5.9 s of CPU on the 2-core
 * machine, against 1.4 s to extract a dump of the same cluster). The dump is extracted beside the
 * directory and renamed into place only once whole, so a process killed meanwhile leaves no half a
 * cluster for the next start to open: that start finds no `PG_VERSION` and seeds it again.
 */
async function seedDataDir(
  pgliteClass: typeof PGlite,
  dataDir: string,
  seed: () => Promise<Blob | undefined>,
): Promise<void> {
  const exists = await fs.stat(path.join(dataDir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (exists) return;
  const dump = await seed();
  if (dump === undefined) return;
  const staging = `${dataDir}.seeding`;
  await fs.rm(staging, { recursive: true, force: true });
  const seeded = await pgliteClass.create({ dataDir: staging, loadDataDir: dump });
  await seeded.close();
  // A directory without PG_VERSION holds no cluster (an initdb that never finished): replaced.
  await fs.rm(dataDir, { recursive: true, force: true });
  await fs.rename(staging, dataDir);
}

const openTransactions = new AsyncLocalStorage<Transaction<unknown>>();

/** The transaction `inTransaction` has open in this async context, if any (the PGlite job adapter needs it). */
export function currentTransaction(): Transaction<unknown> | undefined {
  return openTransactions.getStore();
}

/**
 * Runs `work` in one transaction and records it for this async context, so that work enqueued
 * through the job port commits or rolls back with it on both drivers.
 */
export function inTransaction<DB, T>(db: Kysely<DB>, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  // A nested call joins the caller's transaction (Kysely has no nested transactions).
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- isTransaction proves it is one
  if (db.isTransaction) return work(db as Transaction<DB>);
  return db
    .transaction()
    .execute((trx) => openTransactions.run(trx as Transaction<unknown>, () => work(trx)));
}
