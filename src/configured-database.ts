/**
 * The database the configuration names, and the embedded one's blank cluster: a PGlite data directory
 * with the whole schema (the snapshot's tables and the job queue's) already made, dumped at install
 * time (`npm ci` runs `prepare`, which runs this file) to node_modules/.cache/milepost/, out of dist/,
 * which the build keeps to what src/ holds. A first start on an empty DATA_DIR extracts it in place of
 * PGlite's initdb (platform/db/database.ts, `seedDataDir`), then migrates as any start does.
 *
 *   node --disable-warning=ExperimentalWarning src/configured-database.ts
 *
 * A dump made by older code is still right, only slower: the start runs the migrations it lacks, as on
 * any existing database. One made by another PGlite (another PostgreSQL build) is not used: its
 * version is kept beside it and compared.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { migrations } from './migrations/index.ts';
import { readSchemaSnapshot } from './migrations/snapshot.ts';
import type { Config } from './config.ts';
import { openDatabase, type DatabaseHandle } from './platform/db/database.ts';
import { migrateFromSnapshot } from './platform/db/migrate.ts';
import { createJobs } from './platform/jobs/jobs.ts';
import type { Database } from './schema.ts';

/** Where `prepare` leaves the dump: the package's node_modules, from src/ and from dist/ alike. */
export const BLANK_CLUSTER_FILE = path.resolve(
  import.meta.dirname,
  '../node_modules/.cache/milepost/pglite-blank.tar.gz',
);
const versionFile = (file: string): string => `${file}.version`;

async function pgliteVersion(): Promise<string> {
  const manifest = path.resolve(import.meta.dirname, '../node_modules/@electric-sql/pglite/package.json');
  return (JSON.parse(await fs.readFile(manifest, 'utf8')) as { version: string }).version;
}

/** A gzipped dump of a new in-memory cluster, migrated and with the job queue's schema. */
export async function buildBlankCluster(): Promise<Blob> {
  const handle = await openDatabase<Database>({});
  try {
    await migrateFromSnapshot(handle.db as never, migrations, await readSchemaSnapshot());
    const jobs = createJobs({ connectionString: undefined, pglite: handle.pglite, runWorkers: false });
    await jobs.start();
    await jobs.stop(1);
    // Checked, not asserted: openDatabase({}) is PGlite by construction.
    if (handle.pglite === undefined) throw new Error('the blank cluster needs PGlite');
    return await handle.pglite.dumpDataDir('gzip');
  } finally {
    await handle.close();
  }
}

/** Writes the dump and the PGlite version that made it, each through a rename (never half a file). */
export async function writeBlankCluster(dump: Blob, file = BLANK_CLUSTER_FILE): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const writes: Array<[string, string | Buffer]> = [
    [file, Buffer.from(await dump.arrayBuffer())],
    [versionFile(file), await pgliteVersion()],
  ];
  for (const [target, content] of writes) {
    const temporary = `${target}.${String(process.pid)}.tmp`;
    await fs.writeFile(temporary, content);
    await fs.rename(temporary, target);
  }
}

/** The dump, if there is one made by this PGlite; undefined leaves a first start to initdb. */
export async function readBlankCluster(file = BLANK_CLUSTER_FILE): Promise<Blob | undefined> {
  try {
    const [madeBy, ours] = await Promise.all([fs.readFile(versionFile(file), 'utf8'), pgliteVersion()]);
    if (madeBy.trim() !== ours) return undefined;
    return new Blob([await fs.readFile(file)]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** PostgreSQL when DATABASE_URL is set, else PGlite embedded in DATA_DIR (from the blank cluster when new). */
export function openConfiguredDatabase(config: Config): Promise<DatabaseHandle<Database>> {
  return openDatabase<Database>(
    config.databaseUrl === undefined
      ? { dataDir: path.join(config.dataDir, 'pglite'), seed: readBlankCluster }
      : { connectionString: config.databaseUrl, queryTimeoutMs: config.databaseQueryTimeoutMs },
  );
}

// Not awaited: a module others import may not await at its top level (test files are loaded with
// `require`, test/support/shard.ts). A failure is still the process's: an unhandled rejection ends it.
if (import.meta.main) void buildBlankCluster().then(writeBlankCluster);
