/**
 * Builds dist/ from src/ (`npm ci` runs it through `prepare`, `npm start` through `prestart`): each
 * source file with its types stripped, as JavaScript, and every other file (the geocoder's data, the
 * password list) copied, so that `node dist/main.js` runs the service without Node's TypeScript stripper.
 *
 * Why: the stripper (amaro, WebAssembly) stays loaded for the life of any process that ran a `.ts` file,
 * with the memory it grew to strip the largest one: ~30 MB of an API process's RSS (measured with
 * bench/journeys.ts). Stripping keeps every line and column where it was, so stack traces point at the
 * same places in src/ (dist/x.js line n is src/x.ts line n), and relative `.ts` import specifiers become
 * `.js`. Only changed files are written (compared by size and modification time), so a `prestart` with
 * nothing to do takes a few milliseconds and never loads the stripper; files gone from src/ are removed.
 *
 *   node --disable-warning=ExperimentalWarning src/build.ts [--check] [--out DIR]
 *
 * `--check` writes nothing and exits 1 if dist/ is out of date. `--out` builds into another folder, which
 * needs the repository's package.json, node_modules and web/ beside it (the service finds them as `../`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { stripTypeScriptTypes } from 'node:module';
import { parseArgs } from 'node:util';

const SOURCE = path.resolve(import.meta.dirname);
const DIST = path.resolve(import.meta.dirname, '../dist');
// Tests, and this script, are not part of the running service.
const SKIPPED = [/\.test\.ts$/, /^build\.ts$/];

/** A relative import or export specifier ending in `.ts`, in static and dynamic imports alike. */
const RELATIVE_TS_SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"\n]*?)\.ts\2/g;

/** A TypeScript module as the JavaScript module Node runs: types blanked out, `.ts` imports as `.js`. */
export function compileModule(source: string): string {
  return stripTypeScriptTypes(source, { mode: 'strip' }).replace(
    RELATIVE_TS_SPECIFIER,
    (_match, keyword: string, quote: string, specifier: string) =>
      `${keyword}${quote}${specifier}.js${quote}`,
  );
}

function outputPath(output: string, relative: string): string {
  return path.join(output, relative.endsWith('.ts') ? relative.replace(/\.ts$/, '.js') : relative);
}

/** Whether `output` was written from `input` as it is now (the output carries the input's modification time). */
function upToDate(input: fs.Stats, output: string, sameSize: boolean): boolean {
  try {
    const written = fs.statSync(output);
    // Within a millisecond: file systems keep times to the nanosecond, and utimes takes a double.
    return Math.abs(written.mtimeMs - input.mtimeMs) < 1 && (!sameSize || written.size === input.size);
  } catch {
    return false;
  }
}

/** Writes through a temporary file and a rename, so a process starting meanwhile never reads half a file. */
function writeAtomically(file: string, write: (temporary: string) => void, modifiedAtMs: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${String(process.pid)}.tmp`;
  write(temporary);
  fs.utimesSync(temporary, modifiedAtMs / 1000, modifiedAtMs / 1000);
  fs.renameSync(temporary, file);
}

/** Brings dist/ up to date with src/; returns the paths (relative to dist/) it wrote or removed. */
export function buildDist(options: { check?: boolean; output?: string } = {}): {
  written: string[];
  removed: string[];
} {
  const OUTPUT = options.output ?? DIST;
  const written: string[] = [];
  const removed: string[] = [];
  const expected = new Set<string>();
  for (const entry of fs.readdirSync(SOURCE, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const relative = path.relative(SOURCE, path.join(entry.parentPath, entry.name));
    if (SKIPPED.some((pattern) => pattern.test(relative))) continue;
    const input = path.join(SOURCE, relative);
    const output = outputPath(OUTPUT, relative);
    expected.add(output);
    const stats = fs.statSync(input);
    const isModule = relative.endsWith('.ts');
    // A module's output differs in size from its source (specifiers), so only the time is compared.
    if (upToDate(stats, output, !isModule)) continue;
    written.push(path.relative(OUTPUT, output));
    if (options.check === true) continue;
    writeAtomically(
      output,
      (temporary) => {
        if (isModule) fs.writeFileSync(temporary, compileModule(fs.readFileSync(input, 'utf8')));
        else fs.copyFileSync(input, temporary, fs.constants.COPYFILE_FICLONE);
      },
      stats.mtimeMs,
    );
  }
  if (fs.existsSync(OUTPUT)) {
    for (const entry of fs.readdirSync(OUTPUT, { recursive: true, withFileTypes: true })) {
      const file = path.join(entry.parentPath, entry.name);
      if (!entry.isFile() || expected.has(file)) continue;
      removed.push(path.relative(OUTPUT, file));
      if (options.check !== true) fs.rmSync(file);
    }
  }
  return { written, removed };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { check: { type: 'boolean' }, out: { type: 'string' } } });
  const check = values.check === true;
  const started = performance.now();
  const { written, removed } = buildDist({
    check,
    ...(values.out === undefined ? {} : { output: path.resolve(values.out) }),
  });
  const changes = written.length + removed.length;
  if (check) {
    if (changes > 0) {
      process.stderr.write(
        `dist: out of date (${String(written.length)} to write, ${String(removed.length)} to remove): run npm run build\n`,
      );
      process.exit(1);
    }
  } else if (changes > 0) {
    process.stdout.write(
      `dist: ${String(written.length)} files written, ${String(removed.length)} removed in ${String(Math.round(performance.now() - started))} ms\n`,
    );
  }
}
