/**
 * Runs many test files in one process, each as a suite of its own: what `npm test` and
 * `npm run test:postgres` start, once per core (`test/shards/first.ts`, `second.ts`).
 *
 * A process a file costs about 4 s of CPU before the file's first test: loading the service's modules,
 * and on PGlite compiling its WebAssembly and optimising the hot functions again, work a process does
 * once however many files it runs. Each file is loaded with `require`, which evaluates it synchronously
 * inside its suite, so the file's top-level `test`, `before` and `after` belong to that suite: its
 * `after` closes its database before the next file starts, as when it runs alone.
 *
 * The processes share the files as they go, the largest first (size tracks a file's work): each
 * claims the next file by creating a directory named after it, which succeeds for one process only.
 * Every file still runs on its own too: `npx node --test test/integration/x/x.test.ts`.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'node:test';
import v8 from 'node:v8';

const root = path.resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);

/** The test files of `MILEPOST_TEST_FILES` (globs relative to the project, space-separated). */
function testFiles(): string[] {
  const patterns = (process.env['MILEPOST_TEST_FILES'] ?? 'src/**/*.test.ts test/**/*.test.ts')
    .split(/\s+/)
    .filter((pattern) => pattern !== '');
  const files = [...new Set(patterns.flatMap((pattern) => fs.globSync(pattern, { cwd: root })))];
  const size = (file: string) => fs.statSync(path.join(root, file)).size;
  return files
    .map((file) => ({ file, bytes: size(file) }))
    .sort((a, b) => b.bytes - a.bytes || a.file.localeCompare(b.file))
    .map(({ file }) => file);
}

/**
 * Claims files for this process. The claims live in a directory of this run's (MILEPOST_TEST_RUN, set
 * by the npm scripts); without one, a process claims every file and runs them all.
 */
function claims(): { claim(file: string): boolean; release(): void } {
  const run = process.env['MILEPOST_TEST_RUN'];
  if (run === undefined || run === '') return { claim: () => true, release: () => undefined };
  const directory = path.join(os.tmpdir(), `milepost-test-run-${run.replace(/[^\w-]/g, '')}`);
  fs.mkdirSync(directory, { recursive: true });
  return {
    claim(file) {
      try {
        fs.mkdirSync(path.join(directory, file.replaceAll('/', '__')));
        return true;
      } catch (error) {
        // ENOENT: another process has been through every file and removed the claims.
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EEXIST' || code === 'ENOENT') return false;
        throw error;
      }
    },
    // Once a process has been through every file, each one is claimed: the claims are no longer needed.
    release() {
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}

const run = claims();
let ran = 0;
for (const file of testFiles()) {
  if (!run.claim(file)) continue;
  await suite(file, () => {
    require(path.join(root, file));
  });
  ran += 1;
}
run.release();

// The files' modules stay loaded to the end, and with them what each kept at its top level (its closed
// test app): the heap grows with the files a process runs, so what it holds at the end is reported.
const mb = (bytes: number) => Math.round(bytes / 1024 ** 2);
const heap = v8.getHeapStatistics();
console.error(
  `shard: ${String(ran)} files; heap ${String(mb(heap.used_heap_size))} MB of ${String(mb(heap.heap_size_limit))} MB, ` +
    `peak RSS ${String(mb(process.resourceUsage().maxRSS * 1024))} MB`,
);
