import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { buildBlankCluster, readBlankCluster, writeBlankCluster } from '../../../src/configured-database.ts';
import { migrations } from '../../../src/migrations/index.ts';
import { readSchemaSnapshot } from '../../../src/migrations/snapshot.ts';
import { openDatabase } from '../../../src/platform/db/database.ts';
import { migrateFromSnapshot } from '../../../src/platform/db/migrate.ts';
import { catalogue } from '../../support/catalogue.ts';
import { onPostgres } from '../../support/database.ts';

// The embedded database's first start: an empty DATA_DIR is created from the blank cluster `npm ci`
// dumps (src/configured-database.ts) rather than by PGlite's initdb, and ends with the schema a
// database made from the snapshot has. PGlite's own behaviour: nothing here runs on PostgreSQL.
const skip = onPostgres ? 'the blank cluster is PGlite’s; PostgreSQL is created by its own tools' : false;

let folder: string;
let dumpFile: string;
let blank: Blob;
before(async () => {
  if (skip !== false) return;
  folder = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-blank-'));
  dumpFile = path.join(folder, 'cache', 'pglite-blank.tar.gz');
  await writeBlankCluster(await buildBlankCluster(), dumpFile);
  const read = await readBlankCluster(dumpFile);
  assert.ok(read !== undefined, 'the dump just written is read back');
  blank = read;
});
after(async () => {
  if (skip === false) await fs.rm(folder, { recursive: true, force: true });
});

const open = (dataDir: string) => openDatabase<unknown>({ dataDir, seed: () => Promise.resolve(blank) });

test(
  'a new data directory seeded from the blank cluster has the snapshot’s schema and nothing to migrate',
  { skip },
  async () => {
    const dataDir = path.join(folder, 'fresh', 'pglite');
    const seeded = await open(dataDir);
    const fromSnapshot = await openDatabase<unknown>({});
    try {
      assert.deepEqual(await migrateFromSnapshot(seeded.db, migrations, await readSchemaSnapshot()), {
        applied: [],
        fromSnapshot: false,
      });
      await migrateFromSnapshot(fromSnapshot.db, migrations, await readSchemaSnapshot());
      assert.deepEqual(await catalogue(seeded.db), await catalogue(fromSnapshot.db));
      const { rows } = await sql<{ found: boolean }>`
      select exists (select 1 from pg_namespace where nspname = 'pgboss') as found`.execute(seeded.db);
      assert.equal(rows[0]?.found, true, 'the job queue’s schema is in the cluster');
    } finally {
      await seeded.close();
      await fromSnapshot.close();
    }
    await assert.rejects(fs.stat(`${dataDir}.seeding`), { code: 'ENOENT' }, 'no staging directory is left');
  },
);

test('a cluster already there is opened as it is, never seeded again', { skip }, async () => {
  const dataDir = path.join(folder, 'kept', 'pglite');
  const first = await open(dataDir);
  await sql`create table kept_row (note text)`.execute(first.db);
  await sql`insert into kept_row values ('still here')`.execute(first.db);
  await first.close();
  const again = await open(dataDir);
  try {
    const { rows } = await sql<{ note: string }>`select note from kept_row`.execute(again.db);
    assert.deepEqual(rows, [{ note: 'still here' }]);
  } finally {
    await again.close();
  }
});

test('a start killed while seeding leaves nothing the next one opens as a cluster', { skip }, async () => {
  const dataDir = path.join(folder, 'killed', 'pglite');
  // What a kill can leave: half an extraction beside the directory, and a directory with no PG_VERSION.
  await fs.mkdir(`${dataDir}.seeding/base`, { recursive: true });
  await fs.writeFile(`${dataDir}.seeding/base/half`, 'x');
  await fs.mkdir(dataDir, { recursive: true });
  await fs.writeFile(path.join(dataDir, 'postmaster.opts'), 'x');
  const seeded = await open(dataDir);
  try {
    const outcome = await migrateFromSnapshot(seeded.db, migrations, await readSchemaSnapshot());
    assert.deepEqual(outcome, { applied: [], fromSnapshot: false });
  } finally {
    await seeded.close();
  }
  await fs.stat(path.join(dataDir, 'PG_VERSION'));
});

test(
  'a dump made by another PGlite, or none at all, leaves the first start to initdb',
  { skip },
  async () => {
    const other = path.join(folder, 'other', 'pglite-blank.tar.gz');
    await fs.mkdir(path.dirname(other), { recursive: true });
    await fs.copyFile(dumpFile, other);
    await fs.writeFile(`${other}.version`, '0.0.1');
    assert.equal(await readBlankCluster(other), undefined);
    assert.equal(await readBlankCluster(path.join(folder, 'none', 'pglite-blank.tar.gz')), undefined);
  },
);
