import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
} from 'kysely';
import { nameSqlText, nameStatement, statementSpan } from './statement-names.ts';

// Compiles only: the dummy driver runs nothing.
const db = new Kysely<Record<string, Record<string, unknown>>>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

test("Kysely's statements are named by operation and table, never by their values", () => {
  const cases = [
    [db.selectFrom('policies as p').select('p.id').where('p.id', '=', 'secret-1'), 'SELECT policies'],
    [db.insertInto('journeys').values({ id: 'secret-2' }), 'INSERT journeys'],
    [db.updateTable('policies').set({ status: 'secret-3' }).where('id', '=', 'x'), 'UPDATE policies'],
    [db.deleteFrom('pgboss.job').where('id', '=', 'secret-4'), 'DELETE pgboss.job'],
    [
      db
        .with('due', (w) => w.selectFrom('policies').select('id'))
        .updateTable('statements')
        .set({ paid: true }),
      'UPDATE statements',
    ],
  ] as const;
  for (const [builder, name] of cases) {
    const span = statementSpan(nameStatement(builder.compile()));
    assert.equal(span.name, name);
    assert.doesNotMatch(JSON.stringify(span), /secret/);
  }
});

test('raw statements are named from their text: operation, then the table written or read, or the function', () => {
  const raw = sql`select store_journey(${'secret'}, ${42})`.compile(db);
  assert.deepEqual(nameStatement(raw), { operation: 'SELECT', procedure: 'store_journey' });
  const cases: Array<[string, ReturnType<typeof nameSqlText>]> = [
    [
      '  -- why\n WITH x AS (SELECT 1) INSERT INTO "pgboss"."job" (id) SELECT 1',
      { operation: 'INSERT', table: 'pgboss.job' },
    ],
    ['select count(*) from only "events" where id = $1', { operation: 'SELECT', table: 'events' }],
    ["select set_config('milepost.audit', $1, true)", { operation: 'SELECT', procedure: 'set_config' }],
    ['select 1', { operation: 'SELECT' }],
    // Row locks of a select are not writes.
    [
      'select id from "policies" where id = any($1) for update of "policies"',
      { operation: 'SELECT', table: 'policies' },
    ],
    ['select * from policies for no key update', { operation: 'SELECT', table: 'policies' }],
    [
      'select x.* from json_to_recordset($1) as x(id text)',
      { operation: 'SELECT', procedure: 'json_to_recordset' },
    ],
    ["lock table policies in exclusive mode; select 'x'", { operation: 'LOCK' }],
    ['delete from positions_2025_06 where at < $1', { operation: 'DELETE', table: 'positions_2025_06' }],
    // A literal is never taken for a table.
    ["select * from (values ('secret')) v", { operation: 'SELECT' }],
  ];
  for (const [text, name] of cases) assert.deepEqual(nameSqlText(text), name, text);
});
