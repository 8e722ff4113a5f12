import { sql, type Kysely } from 'kysely';

/**
 * Routes are stored without compression: an encoded polyline is already dense text, and pglz tried and
 * gave up on every one (a 1,000-point route stays ~3.2 kB) at ~15 µs of the server's time per journey,
 * the largest single cost in PostgreSQL's profile of the insert (perf, bench/journeys.ts). lz4 saves
 * 2 %; PGlite has no lz4. Values already stored keep their form.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table journeys alter column route set storage external`.execute(db);
}
