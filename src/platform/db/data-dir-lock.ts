import fs from 'node:fs';
import path from 'node:path';

/** The embedded data directory is held by another live process. */
export class DataDirInUseError extends Error {
  readonly pid: number;
  constructor(dataDir: string, pid: number) {
    super(
      `the data directory ${dataDir} is in use by process ${pid}; stop it or use the admin API (or set DATABASE_URL to share a PostgreSQL database)`,
    );
    this.name = 'DataDirInUseError';
    this.pid = pid;
  }
}

export interface DataDirLock {
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function holderOf(file: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Takes the embedded data directory for this process, as PostgreSQL's postmaster.pid does.
 * NOTE: PGlite is one PostgreSQL backend in this process's memory; a second process opening the same
 * directory works on its own copy, and whichever closes last overwrites the other's writes (a company
 * created by the CLI beside a running server was lost). A lock file created exclusively (O_EXCL) makes
 * the second opener fail at once; one left by a process that died (kill -9, power loss) is taken over.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  // Beside the directory, not in it: PGlite initialises a directory only while it is empty.
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  const file = `${dataDir}.pid`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600);
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          if (holderOf(file) === process.pid) fs.rmSync(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = holderOf(file);
    // A pid equal to ours is a previous incarnation (a container restarts with the same pid).
    if (holder !== undefined && holder !== process.pid && isAlive(holder))
      throw new DataDirInUseError(dataDir, holder);
    // Removed only if still the stale holder's: another process may have taken it meanwhile.
    if (holderOf(file) === holder) fs.rmSync(file, { force: true });
  }
  throw new Error(`could not take the lock file ${file}`);
}
