import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import ts from 'typescript';
import type { DatabaseHandle } from '../../src/platform/db/database.ts';
import type { Database } from '../../src/schema.ts';
import { dumpSchema, SCHEMA_FILE, SNAPSHOT_FILE } from '../../tools/schema-dump.ts';
import { createTestDatabase, onPostgres } from '../support/database.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

test(
  'the committed schema and schema snapshot are what the migrations build (else: npm run docs:schema)',
  { skip: onPostgres ? false : 'pg_dump needs PostgreSQL: this runs with TEST_DATABASE_URL' },
  async () => {
    const { schema, snapshot } = await dumpSchema();
    for (const [file, text] of [
      [SCHEMA_FILE, schema],
      [SNAPSHOT_FILE, snapshot],
    ] as const) {
      const committed = fs.readFileSync(file, 'utf8').split('\n');
      const generated = text.split('\n');
      const line = generated.findIndex((row, index) => committed[index] !== row);
      assert.equal(
        line,
        -1,
        `${path.relative(ROOT, file)} differs at line ${line + 1}:\n  committed: ${committed[line] ?? '(end)'}\n  migrated:  ${generated[line] ?? '(end)'}`,
      );
      assert.equal(committed.length, generated.length);
    }
  },
);

/** A column as Kysely's types declare it: its name and whether a select may give null. */
interface TypedColumn {
  nullable: boolean;
}

/**
 * Each table of `Database` (src/schema.ts, the union of every module's `…Tables`) with its columns, read
 * through the TypeScript checker: a `ColumnType<S, I, U>` or `Generated<T>` column is judged by what a
 * select gives (`__select__`).
 */
function typedTables(): Map<string, Map<string, TypedColumn>> {
  const schemaFile = path.join(ROOT, 'src/schema.ts');
  const program = ts.createProgram([schemaFile], {
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(schemaFile)!;
  const database = source.statements.find(
    (statement): statement is ts.InterfaceDeclaration =>
      ts.isInterfaceDeclaration(statement) && statement.name.text === 'Database',
  )!;
  const tables = new Map<string, Map<string, TypedColumn>>();
  for (const table of checker.getPropertiesOfType(checker.getTypeAtLocation(database))) {
    const rowType = checker.getTypeOfSymbol(table);
    const columns = new Map<string, TypedColumn>();
    for (const column of checker.getPropertiesOfType(rowType)) {
      let type = checker.getTypeOfSymbol(column);
      const selected = type.getProperty('__select__');
      if (selected !== undefined) type = checker.getTypeOfSymbol(selected);
      const parts = type.isUnion() ? type.types : [type];
      // `unknown` (a JSON column read as it comes) admits null as well.
      const admitsNull = (part: ts.Type): boolean =>
        (part.flags & (ts.TypeFlags.Null | ts.TypeFlags.Unknown | ts.TypeFlags.Any)) !== 0;
      columns.set(column.name, { nullable: parts.some(admitsNull) });
    }
    tables.set(table.name, columns);
  }
  return tables;
}

let handle: DatabaseHandle<Database>;
before(async () => {
  handle = await createTestDatabase();
});
after(async () => {
  await handle.close();
});

test("each module's table types match the migrated tables: every column, and which may be null", async () => {
  const { rows } = await sql<{ table_name: string; column_name: string; is_nullable: 'YES' | 'NO' }>`
    select c.table_name, c.column_name, c.is_nullable
    from information_schema.columns c
    join information_schema.tables t using (table_schema, table_name)
    where c.table_schema = 'public' and t.table_type = 'BASE TABLE'
      and c.table_name !~ '_(p[0-9]{4}_[0-9]{2}|default)$' and c.table_name not like 'kysely_migration%'
  `.execute(handle.db);
  const migrated = new Map<string, Map<string, boolean>>();
  for (const row of rows) {
    const columns = migrated.get(row.table_name) ?? new Map<string, boolean>();
    columns.set(row.column_name, row.is_nullable === 'YES');
    migrated.set(row.table_name, columns);
  }
  // Partitioned parents are not BASE TABLEs in information_schema.tables on every version: add them.
  const { rows: parents } = await sql<{ table_name: string; column_name: string; is_nullable: 'YES' | 'NO' }>`
    select c.relname as table_name, a.attname as column_name, case when a.attnotnull then 'NO' else 'YES' end as is_nullable
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = 'public' and c.relkind = 'p'
  `.execute(handle.db);
  for (const row of parents) {
    const columns = migrated.get(row.table_name) ?? new Map<string, boolean>();
    columns.set(row.column_name, row.is_nullable === 'YES');
    migrated.set(row.table_name, columns);
  }

  const typed = typedTables();
  const problems: string[] = [];
  for (const [table, columns] of typed) {
    const actual = migrated.get(table);
    if (actual === undefined) {
      problems.push(`${table}: typed, but no such table is migrated`);
      continue;
    }
    for (const [column, { nullable }] of columns) {
      const isNullable = actual.get(column);
      if (isNullable === undefined) problems.push(`${table}.${column}: typed, but not a column`);
      else if (isNullable && !nullable)
        problems.push(`${table}.${column}: may be null, but its type has no null`);
    }
    for (const column of actual.keys())
      if (!columns.has(column)) problems.push(`${table}.${column}: a column its type does not name`);
  }
  for (const table of migrated.keys())
    if (!typed.has(table)) problems.push(`${table}: a table no module's types declare`);
  assert.deepEqual(problems, []);
});
