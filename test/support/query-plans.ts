import { CompiledQuery, Kysely, PGliteDialect, PostgresDialect, type LogEvent } from 'kysely';
import pg from 'pg';
import type { DatabaseHandle } from '../../src/platform/db/database.ts';
import type { Executor } from '../../src/schema.ts';

/**
 * What a piece of the service's code sends to the database, and which partitions each statement reads:
 * for tests that hold the hot paths to partition pruning with the real statements, not copies of them.
 */

class RolledBack extends Error {}

/** `work` inside a transaction that is rolled back afterwards, so a test can look without writing. */
async function rolledBack<DB>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<unknown>): Promise<void> {
  await db
    .transaction()
    .execute(async (trx) => {
      await work(trx);
      throw new RolledBack();
    })
    .catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error;
    });
}

/**
 * Runs `work` on a Kysely over the same database that keeps every statement it sends (Kysely's `log`),
 * in a transaction rolled back afterwards; returns the statements whose text matches `about`.
 */
export async function statementsOf(
  handle: DatabaseHandle<unknown>,
  work: (db: Executor) => Promise<unknown>,
  about: RegExp,
): Promise<CompiledQuery[]> {
  const seen: CompiledQuery[] = [];
  const log = (event: LogEvent) => {
    if (event.level === 'query') seen.push(event.query);
  };
  const pool =
    handle.pglite === undefined
      ? new pg.Pool({ connectionString: handle.connectionString, max: 1 })
      : undefined;
  const dialect =
    handle.pglite !== undefined
      ? new PGliteDialect({ pglite: handle.pglite })
      : new PostgresDialect({ pool: pool ?? new pg.Pool() });
  const db = new Kysely<unknown>({ dialect, log });
  try {
    await rolledBack(db, (trx) => work(trx as unknown as Executor));
  } finally {
    if (pool !== undefined) await db.destroy();
  }
  return seen.filter((q) => about.test(q.sql));
}

/**
 * The partitions of `table` that a statement reads, by EXPLAIN ANALYZE in a rolled-back transaction:
 * a partition pruned when planning is absent from the plan, one pruned at run time "never executed".
 * SHOW_PLANS=1 prints the plans.
 */
export async function partitionsRead(
  db: Kysely<unknown>,
  query: CompiledQuery,
  table: string,
): Promise<string[]> {
  const lines: string[] = [];
  await rolledBack(db, async (trx) => {
    const plan = await trx.executeQuery<Record<string, string>>(
      CompiledQuery.raw(`explain (analyze, costs off, timing off, summary off) ${query.sql}`, [
        ...query.parameters,
      ]),
    );
    lines.push(...plan.rows.map((row) => Object.values(row)[0] ?? ''));
  });
  if (process.env['SHOW_PLANS'] !== undefined) console.log(lines.join('\n'));
  const partition = new RegExp(`\\b${table}_(?:p\\d{4}_\\d{2}|default)\\b`, 'g');
  const read = lines
    .filter((line) => !line.includes('never executed'))
    .flatMap((line) => line.match(partition) ?? []);
  return [...new Set(read)].sort();
}
