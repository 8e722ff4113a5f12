/**
 * Monthly statements rendered to PDF with their route maps, against a bare pdfkit page in the same run.
 *
 *   npm run bench -- documents [seconds per loop, default 3] [statements for the memory run, default 10000]
 *
 * On one core: `renderDocument` of a June statement (60 journeys of 20–60 points over the UK outline, 30
 * days, the company's PNG logo) against the baseline, one pdfkit page with the same font and the same text
 * (the summary and the day table as plain lines) and no map, no table, no tags. Passes alternate for about
 * `seconds` each; the figures are the best pass, with the median beside it, and the CPU time a statement
 * and a bare page take (`process.cpuUsage`, which a loaded machine disturbs far less than the wall clock,
 * though still some: other work on the same cores slows a thread's caches, so compare CPU times taken in the
 * same hour), converted to a rate on every core (1000 ms / CPU ms a statement × cores) for both.
 * Then on every core: the render pool the documents worker uses (a thread a core, twice as many
 * statements in hand), statements/s by the wall clock. Then a child process started with `npm start`'s
 * Node flags renders the given number of statements through that pool, as the worker does, and reports its
 * peak resident set (VmHWM, the process with its threads; the threads run dist/, as in `npm start`, but
 * the child itself is this TypeScript file, so it carries the stripper a service does not). Budgets: ≥ 100 statements/s, ≤ 300 MB.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { serialize } from 'node:v8';
import PDFDocument from 'pdfkit';
import type { StatementContent } from '../src/modules/documents/document-content.ts';
import { documentFonts } from '../src/modules/documents/render/fonts.ts';
import { renderDocument } from '../src/modules/documents/render/index.ts';
import { buildDist } from '../src/build.ts';
import { createRenderPool } from '../src/modules/documents/render/render-pool.ts';
import { distance, money, shortDate } from '../src/modules/documents/render/text.ts';
import { EXAMPLE_BRANDING, EXAMPLE_IDS, examplePolicy, statementFor } from '../test/support/documents.ts';

const secondsPerLoop = Number(process.argv[2] ?? 3);
const memoryRunCount = Number(process.argv[3] ?? 10_000);

/** Statements with different routes, cycled through so no one document is measured warm. */
function statements(count: number): StatementContent[] {
  const policy = examplePolicy();
  return Array.from({ length: count }, (_, i) => statementFor(policy, { ...EXAMPLE_IDS, seed: 1000 + i }));
}

/** The baseline: the statement's words on a bare A4 page in the same embedded font, nothing else. */
function barePage(s: StatementContent): Promise<Uint8Array> {
  const doc = new PDFDocument({ size: 'A4', info: { CreationDate: s.issuedAt } });
  const chunks: Uint8Array[] = [];
  doc.on('data', (chunk: Uint8Array) => chunks.push(chunk));
  const done = new Promise<Uint8Array>((resolve) => {
    doc.on('end', () => {
      resolve(Buffer.concat(chunks));
    });
  });
  doc.registerFont('Body', documentFonts().regular as unknown as PDFKit.Mixins.PDFFontSource);
  doc.font('Body').fontSize(9.5);
  doc.text(`${EXAMPLE_BRANDING.companyName} Monthly Statement ${s.policyReference} ${s.policyholder.name}`);
  for (const d of s.days)
    doc.text(
      `${shortDate(d.date)} ${String(d.journeyCount)} ${distance(d.distanceMetres, 'mile')} ${money(d.costPence)}`,
    );
  doc.text(`${money(s.billedPremiumPence)} ${s.howPaid}`);
  doc.end();
  return done;
}

async function timeLoop(
  render: (s: StatementContent) => Promise<Uint8Array>,
  docs: readonly StatementContent[],
  seconds: number,
): Promise<{ perSecond: number; cpuMs: number }> {
  const start = performance.now();
  const cpu = process.cpuUsage();
  let count = 0;
  while (performance.now() - start < seconds * 1000) {
    await render(docs[count % docs.length] as StatementContent);
    count += 1;
  }
  const used = process.cpuUsage(cpu);
  return {
    perSecond: count / ((performance.now() - start) / 1000),
    cpuMs: (used.user + used.system) / 1000 / count,
  };
}

/**
 * Renders `count` statements through `render` with `inHand` of them in flight at once, as the
 * documents worker's lanes do; statements/s by the wall clock.
 */
async function throughput(
  render: (s: StatementContent) => Promise<Uint8Array>,
  docs: readonly StatementContent[],
  count: number,
  inHand: number,
): Promise<{ perSecond: number; bytes: number }> {
  const start = performance.now();
  let next = 0;
  let bytes = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
      const pdf = await render(docs[i % docs.length] as StatementContent);
      bytes += pdf.length;
    }
  };
  await Promise.all(Array.from({ length: inHand }, lane));
  return { perSecond: count / ((performance.now() - start) / 1000), bytes };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/*
 * NOTE: the memory run's process is plain JavaScript with `npm start`'s flags: it loads the service's code
 * from dist/ (container.js and all it imports, as a worker process holds it) and renders through the
 * render pool from dist/, so neither it nor its threads carry the TypeScript stripper or this bench's test
 * helpers. The statements come from a file (v8-serialized: their dates survive).
 */
const MEMORY_CHILD = `
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { deserialize } from 'node:v8';
const [dist, input, countText] = process.argv.slice(1);
const count = Number(countText);
await import(dist + '/container.js');
const { createRenderPool } = await import(dist + '/modules/documents/render/render-pool.js');
const { docs, branding } = deserialize(readFileSync(input));
const pool = createRenderPool(availableParallelism());
const start = performance.now();
const cpu = process.cpuUsage();
let next = 0;
let bytes = 0;
const lane = async () => {
  for (let i = next++; i < count; i = next++) {
    const pdf = await pool.render({ kind: 'statement', content: docs[i % docs.length] }, branding);
    bytes += pdf.length;
  }
};
await Promise.all(Array.from({ length: pool.concurrency }, lane));
const seconds = (performance.now() - start) / 1000;
const used = process.cpuUsage(cpu);
await pool.close();
const peakKb = Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
const cpuMs = (used.user + used.system) / 1000 / count;
process.stdout.write(JSON.stringify({ count, seconds, cpuMs, peakRssMb: peakKb / 1024, meanBytes: bytes / count }) + '\\n');
`;

async function measureMemory(
  count: number,
): Promise<{ peakRssMb: number; seconds: number; cpuMs: number; meanBytes: number }> {
  const root = path.resolve(import.meta.dirname, '..');
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const flags = pkg.scripts.start.split(' ').filter((word) => word.startsWith('--'));
  const folder = mkdtempSync(path.join(tmpdir(), 'milepost-documents-bench-'));
  const input = path.join(folder, 'statements.bin');
  writeFileSync(input, serialize({ docs: statements(50), branding: EXAMPLE_BRANDING }));
  try {
    const dist = pathToFileURL(path.join(root, 'dist')).href;
    const child = spawn(
      process.execPath,
      [...flags, '--input-type=module', '--eval', MEMORY_CHILD, dist, input, String(count)],
      { env: { ...process.env, MALLOC_ARENA_MAX: '2' }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (code !== 0) throw new Error(`the memory run exited with ${String(code)}`);
    return JSON.parse(out) as { peakRssMb: number; seconds: number; cpuMs: number; meanBytes: number };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const docs = statements(50);
const withMap = (s: StatementContent) => renderDocument({ kind: 'statement', content: s }, EXAMPLE_BRANDING);
const loadBefore = loadavg()[0] ?? 0;
await timeLoop(withMap, docs, 1);
await timeLoop(barePage, docs, 1);
const rendered: Array<{ perSecond: number; cpuMs: number }> = [];
const bare: Array<{ perSecond: number; cpuMs: number }> = [];
for (let pass = 0; pass < 3; pass += 1) {
  rendered.push(await timeLoop(withMap, docs, secondsPerLoop / 3));
  bare.push(await timeLoop(barePage, docs, secondsPerLoop / 3));
}
const best = Math.max(...rendered.map((r) => r.perSecond));
const bestBare = Math.max(...bare.map((r) => r.perSecond));
const cpuMs = median(rendered.map((r) => r.cpuMs));
const cpuBareMs = median(bare.map((r) => r.cpuMs));
console.log(
  `statements with maps: ${best.toFixed(0)}/s best, ${median(rendered.map((r) => r.perSecond)).toFixed(0)}/s median (one core); ${cpuMs.toFixed(1)} ms CPU a statement (median)`,
);
console.log(
  `baseline, bare pdfkit page with the same text: ${bestBare.toFixed(0)}/s best, ${median(bare.map((r) => r.perSecond)).toFixed(0)}/s median; ${cpuBareMs.toFixed(1)} ms CPU a page`,
);
console.log(
  `ratio statements / baseline: ${(best / bestBare).toFixed(2)} by the clock, ${(cpuBareMs / cpuMs).toFixed(2)} by CPU`,
);
const threads = availableParallelism();
const pool = createRenderPool(threads);
const viaPool = (s: StatementContent) => pool.render({ kind: 'statement', content: s }, EXAMPLE_BRANDING);
await throughput(viaPool, docs, 4 * threads, pool.concurrency);
const poolRuns: number[] = [];
for (let pass = 0; pass < 3; pass += 1) {
  const count = Math.max(50, Math.round((best * threads * secondsPerLoop) / 3));
  poolRuns.push((await throughput(viaPool, docs, count, pool.concurrency)).perSecond);
}
await pool.close();
const bestPool = Math.max(...poolRuns);
console.log(
  `statements with maps on ${String(threads)} render threads: ${bestPool.toFixed(0)}/s best, ${median(poolRuns).toFixed(0)}/s median`,
);
const perCores = (ms: number): string => ((1000 / ms) * threads).toFixed(0);
console.log(
  `load average (1 min) ${loadBefore.toFixed(1)} before, ${(loadavg()[0] ?? 0).toFixed(1)} after; by CPU time on ${String(threads)} cores: statements ${perCores(cpuMs)}/s (${cpuMs.toFixed(1)} ms each), bare pages ${perCores(cpuBareMs)}/s (${cpuBareMs.toFixed(1)} ms each)`,
);
buildDist();
const memory = await measureMemory(memoryRunCount);
console.log(
  `${String(memoryRunCount)} statements through the render pool in a child with npm start's flags: ${memory.seconds.toFixed(1)} s (${(memoryRunCount / memory.seconds).toFixed(0)}/s; ${memory.cpuMs.toFixed(1)} ms CPU a statement, the process's threads together), peak RSS ${memory.peakRssMb.toFixed(0)} MB, ${(memory.meanBytes / 1024).toFixed(0)} kB a PDF`,
);
console.log(
  `budgets: ≥ 100 statements/s ${bestPool >= 100 ? 'met' : 'MISSED'} (${bestPool.toFixed(0)}/s); ≤ 300 MB ${memory.peakRssMb <= 300 ? 'met' : 'MISSED'}`,
);
