import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { migrations } from '../../../src/migrations/index.ts';
import { readSchemaSnapshot } from '../../../src/migrations/snapshot.ts';
import { openDatabase, type DatabaseHandle } from '../../../src/platform/db/database.ts';
import {
  migrateFromSnapshot,
  migrateToLatest,
  snapshotMigrations,
} from '../../../src/platform/db/migrate.ts';
import { catalogue } from '../../support/catalogue.ts';
import { createEmptyDatabase, onPostgres } from '../../support/database.ts';

let snapshot: string;
let migrated: DatabaseHandle<unknown>;
let migratedCatalogue: Record<string, string[]>;
before(async () => {
  snapshot = await readSchemaSnapshot();
  migrated = await createEmptyDatabase<unknown>();
  await migrateToLatest(migrated.db, migrations);
  migratedCatalogue = await catalogue(migrated.db);
});
after(async () => {
  await migrated.close();
});

/** Each part of the catalogue that differs, with the lines only one side has. */
function differences(expected: Record<string, string[]>, actual: Record<string, string[]>): string[] {
  const found: string[] = [];
  for (const part of Object.keys(expected)) {
    const want = new Set(expected[part]);
    const have = new Set(actual[part]);
    for (const line of want) if (!have.has(line)) found.push(`${part}: only migrated: ${line}`);
    for (const line of have) if (!want.has(line)) found.push(`${part}: only from the snapshot: ${line}`);
  }
  return found;
}

test('the snapshot names every migration, in order (else: npm run docs:schema)', () => {
  assert.deepEqual(snapshotMigrations(snapshot, migrations), Object.keys(migrations));
});

test('an empty database made from the snapshot has the schema the migrations build (else: npm run docs:schema)', async () => {
  const handle = await createEmptyDatabase<unknown>();
  try {
    const outcome = await migrateFromSnapshot(handle.db, migrations, snapshot);
    assert.equal(outcome.fromSnapshot, true);
    assert.deepEqual(outcome.applied, Object.keys(migrations));
    const made = await catalogue(handle.db);
    assert.ok(made['partitions']!.some((line) => /^journeys_p\d{4}_\d{2} of journeys /.test(line)));
    assert.deepEqual(differences(migratedCatalogue, made), []);
    // Nothing left to do at the next start, which takes the migrations' path.
    assert.deepEqual(await migrateFromSnapshot(handle.db, migrations, snapshot), {
      applied: [],
      fromSnapshot: false,
    });
  } finally {
    await handle.close();
  }
});

test('a database that has some migrations runs the ones it lacks, and ends with the same schema', async () => {
  const names = Object.keys(migrations);
  const firstHalf = Object.fromEntries(names.slice(0, 20).map((name) => [name, migrations[name]!]));
  const handle = await createEmptyDatabase<unknown>();
  try {
    await migrateToLatest(handle.db, firstHalf);
    const outcome = await migrateFromSnapshot(handle.db, migrations, snapshot);
    assert.deepEqual(outcome, { applied: names.slice(20), fromSnapshot: false });
    assert.deepEqual(differences(migratedCatalogue, await catalogue(handle.db)), []);
  } finally {
    await handle.close();
  }
});

test('a migration added after the snapshot was made runs after it; a snapshot of other migrations is not used', async () => {
  const later: Migration = {
    up: async (db: Kysely<unknown>) => {
      await sql`create table snapshot_later (id int primary key)`.execute(db);
    },
  };
  const handle = await createEmptyDatabase<unknown>();
  try {
    const outcome = await migrateFromSnapshot(handle.db, { ...migrations, '9999-later': later }, snapshot);
    assert.equal(outcome.fromSnapshot, true);
    assert.equal(outcome.applied.at(-1), '9999-later');
    await sql`insert into snapshot_later values (1)`.execute(handle.db);
  } finally {
    await handle.close();
  }
  const renamed = Object.fromEntries(Object.entries(migrations).map(([name, m]) => [`x${name}`, m]));
  assert.deepEqual(snapshotMigrations(snapshot, renamed), []);
});

test(
  'processes starting together on one empty database apply the snapshot once',
  { skip: onPostgres ? false : 'one process at a time opens an embedded database' },
  async () => {
    const empty = await createEmptyDatabase<unknown>();
    const others = await Promise.all(
      [1, 2, 3].map(() => openDatabase<unknown>({ connectionString: empty.connectionString!, poolSize: 2 })),
    );
    try {
      const outcomes = await Promise.all(
        [empty, ...others].map((handle) => migrateFromSnapshot(handle.db, migrations, snapshot)),
      );
      assert.equal(outcomes.filter((outcome) => outcome.fromSnapshot).length, 1);
      assert.deepEqual(
        outcomes.filter((outcome) => !outcome.fromSnapshot),
        [1, 2, 3].map(() => ({ applied: [], fromSnapshot: false })),
      );
      assert.deepEqual(differences(migratedCatalogue, await catalogue(empty.db)), []);
    } finally {
      for (const handle of others) await handle.close();
      await empty.close();
    }
  },
);
