import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { citusStatements, DISTRIBUTION, DROPPED_ON_CITUS } from '../../../src/distribution.ts';
import type { DatabaseHandle } from '../../../src/platform/db/database.ts';
import type { Database } from '../../../src/schema.ts';
import { createTestDatabase } from '../../support/database.ts';

/**
 * The migrated schema against the sharding plan (src/distribution.ts): what Citus would need of it
 * holds today, so distributing it is the plan's statements and no schema change. A new table, unique
 * key or foreign key that a sharded database could not keep fails here.
 */
let database: DatabaseHandle<Database>;
before(async () => {
  database = await createTestDatabase();
});
after(() => database.close());

interface Key {
  readonly name: string;
  readonly table: string;
  readonly columns: string[];
}
interface ForeignKey extends Key {
  readonly target: string;
  readonly targetColumns: string[];
}

async function tables(): Promise<string[]> {
  const result = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
    order by 1`.execute(database.db);
  return result.rows.map((r) => r.name);
}

/** Unique indexes, primary keys and unique constraints alike, partial ones included; not partitions'. */
async function uniqueKeys(): Promise<Key[]> {
  const result = await sql<{ name: string; table: string; columns: string[] }>`
    select i.relname as name, t.relname as table,
      array(select a.attname::text from unnest(x.indkey) with ordinality k(attnum, n)
            join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum order by k.n) as columns
    from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
    join pg_namespace s on s.oid = t.relnamespace
    where s.nspname = current_schema() and x.indisunique and not t.relispartition
    order by 1`.execute(database.db);
  return result.rows;
}

async function foreignKeys(): Promise<ForeignKey[]> {
  const result = await sql<ForeignKey>`
    select c.conname as name, t.relname as table, r.relname as target,
      array(select a.attname::text from unnest(c.conkey) with ordinality k(attnum, n)
            join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum order by k.n) as columns,
      array(select a.attname::text from unnest(c.confkey) with ordinality k(attnum, n)
            join pg_attribute a on a.attrelid = r.oid and a.attnum = k.attnum order by k.n) as "targetColumns"
    from pg_constraint c join pg_class t on t.oid = c.conrelid join pg_class r on r.oid = c.confrelid
    join pg_namespace s on s.oid = t.relnamespace
    where s.nspname = current_schema() and c.contype = 'f' and c.conparentid = 0 and not t.relispartition
    order by 1`.execute(database.db);
  return result.rows;
}

const placementOf = (table: string) => {
  const placement = DISTRIBUTION[table];
  assert.ok(placement !== undefined, `${table} has no place in src/distribution.ts`);
  return placement;
};
const distributionColumn = (table: string): string | undefined => {
  const placement = placementOf(table);
  return placement.kind === 'policy' || placement.kind === 'device' ? placement.column : undefined;
};

describe('the schema against the sharding plan (src/distribution.ts)', () => {
  test('every table has its place, and the plan names no table that is gone', async () => {
    const names = await tables();
    const unplaced = names.filter((t) => DISTRIBUTION[t] === undefined);
    assert.deepEqual(unplaced, [], 'tables with no place in the plan');
    assert.deepEqual(
      Object.keys(DISTRIBUTION).filter((t) => !names.includes(t)),
      [],
      'the plan names tables the schema does not have',
    );
  });

  test('every sharded table has its distribution column, never null', async () => {
    const result = await sql<{ table: string; column: string; nullable: boolean }>`
      select c.relname as table, a.attname as column, not a.attnotnull as nullable
      from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and a.attnum > 0 and not a.attisdropped`.execute(database.db);
    for (const [table, placement] of Object.entries(DISTRIBUTION)) {
      if (placement.kind !== 'policy' && placement.kind !== 'device') continue;
      const column = result.rows.find((r) => r.table === table && r.column === placement.column);
      assert.ok(column !== undefined, `${table} has no ${placement.column}`);
      assert.equal(column.nullable, false, `${table}.${placement.column} may be null`);
    }
  });

  test('every unique key of a sharded table includes its distribution column', async () => {
    const keys = await uniqueKeys();
    const crossing = keys
      .filter((key) => {
        const column = distributionColumn(key.table);
        return column !== undefined && !key.columns.includes(column);
      })
      .map((key) => key.name)
      .sort();
    assert.deepEqual(crossing, [], 'unique keys a shard could not keep');
  });

  test('foreign keys: within the policy’s tables through the policy; to reference tables; or listed as dropped', async () => {
    const keys = await foreignKeys();
    const dropped = new Set(DROPPED_ON_CITUS.map((d) => `${d.table}.${d.constraint}`));
    const unkeepable: string[] = [];
    for (const key of keys) {
      const from = placementOf(key.table);
      const to = placementOf(key.target);
      const keepable =
        to.kind === 'reference' ||
        (from.kind === 'coordinator' && to.kind === 'coordinator') ||
        (from.kind === 'policy' &&
          to.kind === 'policy' &&
          key.columns.some((column, i) => column === from.column && key.targetColumns[i] === to.column));
      if (keepable)
        assert.ok(
          !dropped.has(`${key.table}.${key.name}`),
          `${key.name} is listed as dropped but Citus keeps it`,
        );
      else unkeepable.push(`${key.table}.${key.name}`);
    }
    assert.deepEqual(unkeepable.sort(), [...dropped].sort());
  });

  test('the statements that distribute it place every table, and docs/operations.md gives them', () => {
    const statements = citusStatements();
    for (const [table, placement] of Object.entries(DISTRIBUTION)) {
      const placed = statements.filter((s) => s.includes(`('${table}'`));
      assert.equal(placed.length, 1, `${table} (${placement.kind}) is placed ${String(placed.length)} times`);
    }
    const operations = fs.readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
    assert.ok(
      operations.includes(['```sql', ...statements, '```'].join('\n')),
      'docs/operations.md gives citusStatements()',
    );
  });
});
