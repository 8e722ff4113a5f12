import { sql, type ColumnType, type Kysely } from 'kysely';
import type { IdempotencyRecord, SandboxObject, SandboxStore } from './store.ts';

/** The sandbox's tables (see sandbox-migration.ts), for the application's `Database` type. */
export interface SandboxTables {
  stripe_sandbox_objects: {
    id: string;
    type: string;
    /** jsonb: read as parsed JSON, written as a JSON string (pg sends JS arrays as PostgreSQL arrays). */
    data: ColumnType<SandboxObject, string, string>;
    created_at: ColumnType<Date, Date, never>;
    updated_at: ColumnType<Date, Date, Date>;
  };
  stripe_sandbox_idempotency: {
    account: string;
    key: string;
    request_hash: string;
    status: number | null;
    body: ColumnType<unknown, string | null, string | null>;
    created_at: ColumnType<Date, Date, never>;
  };
}

const newestFirst = sql`(data->>'created')::bigint desc nulls last, id desc`;

/**
 * The keys the service issued: one per company, for its sandbox environment (`companies.stripe_sandbox_key`,
 * unique, so this is an index lookup), shown with the company's credentials.
 */
const companyKeyLookup =
  (db: Kysely<SandboxTables>) =>
  async (secretKey: string): Promise<boolean> => {
    const { rows } = await sql<{ issued: number }>`
      select 1 as issued from companies where stripe_sandbox_key = ${secretKey}`.execute(db);
    return rows.length > 0;
  };

/**
 * The sandbox store over the service's database (PGlite or PostgreSQL). Its accounts are the companies'
 * sandbox keys unless `isIssuedKey` says otherwise (a database holding only the sandbox's tables).
 */
export function createKyselySandboxStore(
  db: Kysely<SandboxTables>,
  options: { isIssuedKey?: (secretKey: string) => Promise<boolean> } = {},
): SandboxStore {
  const isIssuedKey = options.isIssuedKey ?? companyKeyLookup(db);
  const objects = () => db.selectFrom('stripe_sandbox_objects');
  const contains = (match: Readonly<Record<string, unknown>> | undefined) =>
    match === undefined ? sql<boolean>`true` : sql<boolean>`data @> ${JSON.stringify(match)}::jsonb`;

  const readKey = async (account: string, key: string): Promise<IdempotencyRecord | undefined> => {
    const row = await db
      .selectFrom('stripe_sandbox_idempotency')
      .select(['account', 'key', 'request_hash', 'status', 'body', 'created_at'])
      .where('account', '=', account)
      .where('key', '=', key)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      account: row.account,
      key: row.key,
      requestHash: row.request_hash,
      response: row.status === null ? undefined : { status: row.status, body: row.body },
      createdAt: row.created_at,
    };
  };

  return {
    get: async (id) => (await objects().select('data').where('id', '=', id).executeTakeFirst())?.data,
    put: async (object) => {
      const now = new Date();
      await db
        .insertInto('stripe_sandbox_objects')
        .values({
          id: object.id,
          type: object.object,
          data: JSON.stringify(object),
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc.column('id').doUpdateSet({
            type: (eb) => eb.ref('excluded.type'),
            data: (eb) => eb.ref('excluded.data'),
            updated_at: now,
          }),
        )
        .execute();
    },
    find: async (type, match, limit = 100) => {
      const rows = await objects()
        .select('data')
        .where('type', '=', type)
        .where(contains(match))
        .orderBy(newestFirst)
        .limit(limit)
        .execute();
      return rows.map((r) => r.data);
    },
    count: async (type, match) => {
      const row = await objects()
        .select(sql<number>`count(*)::int`.as('n'))
        .where('type', '=', type)
        .where(contains(match))
        .executeTakeFirstOrThrow();
      return row.n;
    },
    reserveIdempotencyKey: async (record) => {
      // NOTE: the primary key makes the reservation atomic, even across processes sharing the database.
      for (let attempt = 0; attempt < 3; attempt++) {
        const inserted = await db
          .insertInto('stripe_sandbox_idempotency')
          .values({
            account: record.account,
            key: record.key,
            request_hash: record.requestHash,
            status: null,
            body: null,
            created_at: record.createdAt,
          })
          .onConflict((oc) => oc.columns(['account', 'key']).doNothing())
          .returning('key')
          .executeTakeFirst();
        if (inserted !== undefined) return undefined;
        const existing = await readKey(record.account, record.key);
        // Released between the insert and the read: try to reserve again.
        if (existing !== undefined) return existing;
      }
      throw new Error(`idempotency key ${record.key} keeps changing hands`);
    },
    completeIdempotencyKey: async (account, key, response) => {
      await db
        .updateTable('stripe_sandbox_idempotency')
        .set({ status: response.status, body: JSON.stringify(response.body) })
        .where('account', '=', account)
        .where('key', '=', key)
        .execute();
    },
    releaseIdempotencyKey: async (account, key) => {
      await db
        .deleteFrom('stripe_sandbox_idempotency')
        .where('account', '=', account)
        .where('key', '=', key)
        .execute();
    },
    isIssuedKey,
  };
}
