import { sql, type Kysely } from 'kysely';

/**
 * A rotated refresh token keeps, for a few seconds, the pair it was rotated into, sealed with a key
 * derived from the rotated token itself (so the database alone opens nothing): a client whose parallel
 * requests present the same refresh token gets that pair again instead of being logged out.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table auth_refresh_tokens add column successor_sealed text`.execute(db);
}
