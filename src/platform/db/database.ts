import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { CompiledQuery, Kysely, PGliteDialect, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';

export type DatabaseKind = 'pglite' | 'postgres';

/** An open database: Kysely over either driver, plus what only the wiring needs to know. */
export interface DatabaseHandle<DB> {
  readonly kind: DatabaseKind;
  readonly db: Kysely<DB>;
  /** Set for the embedded driver: pg-boss shares this instance. */
  readonly pglite: PGlite | undefined;
  readonly connectionString: string | undefined;
  /**
   * One statement outside any transaction, prepared once per pooled connection under `name` on
   * PostgreSQL (PGlite runs it as it is): for the few statements where parsing and planning cost more
   * than running them. Kysely cannot name statements.
   */
  prepared<Row>(statement: PreparedStatement, values: readonly unknown[]): Promise<Row[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
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

export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

export interface OpenOptions {
  /** PostgreSQL URL; undefined opens PGlite. */
  readonly connectionString?: string | undefined;
  /** PGlite data directory; undefined keeps it in memory. */
  readonly dataDir?: string | undefined;
  /** A PGlite dump (`dumpDataDir`) to start from: how tests get a migrated database in ~0.3 s. */
  readonly loadDataDir?: Blob | undefined;
  readonly poolSize?: number;
}

export async function openDatabase<DB>(options: OpenOptions): Promise<DatabaseHandle<DB>> {
  if (options.connectionString !== undefined) {
    const types = new pg.TypeOverrides();
    types.setTypeParser(INT8_OID, parseInt8);
    types.setTypeParser(DATE_OID, keepText);
    const pool = new pg.Pool({
      connectionString: options.connectionString,
      types,
      max: options.poolSize ?? 10,
      // A backend that has prepared our statements and loaded its caches is worth keeping through a
      // lull: pg's default closes it after 10 s idle, and its replacement starts cold (bench/journeys.ts
      // ran its first phase after a pause at two thirds of the speed of the next).
      idleTimeoutMillis: 120_000,
    });
    // An idle client losing its connection must not crash the process; the pool replaces it.
    pool.on('error', () => undefined);
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return {
      kind: 'postgres',
      db,
      pglite: undefined,
      connectionString: options.connectionString,
      prepared: async <Row>(statement: PreparedStatement, values: readonly unknown[]) =>
        (await pool.query({ name: statement.name, text: statement.text, values: [...values] })).rows as Row[],
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      close: () => db.destroy(),
    };
  }
  if (options.dataDir !== undefined) await fs.mkdir(path.dirname(options.dataDir), { recursive: true });
  // Imported here, not at the top: a process on PostgreSQL never loads PGlite (9 MB of memory).
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = await PGlite.create({
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.loadDataDir === undefined ? {} : { loadDataDir: options.loadDataDir }),
    // NOTE: no extensions. PGlite links each as a second WebAssembly module, and with btree_gist loaded
    // every Node process tested ran its JavaScript slower (migration 0016).
    parsers: { [INT8_OID]: parseInt8, [DATE_OID]: keepText },
  });
  const db = new Kysely<DB>({ dialect: new PGliteDialect({ pglite }) });
  return {
    kind: 'pglite',
    db,
    pglite,
    connectionString: undefined,
    // Through Kysely, which holds PGlite's one session for a transaction: a query sent to PGlite
    // directly could land inside another request's open transaction.
    prepared: async <Row>(statement: PreparedStatement, values: readonly unknown[]) =>
      (await db.executeQuery<Row>(CompiledQuery.raw(statement.text, [...values]))).rows,
    ping: async () => {
      await pglite.query('select 1');
    },
    close: async () => {
      await db.destroy();
      // NOTE: Kysely closes PGlite only if it ran a query itself; close it explicitly so the process can exit.
      if (!pglite.closed) await pglite.close();
    },
  };
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
