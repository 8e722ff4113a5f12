/**
 * Monthly statements rendered to PDF with their route maps, against a bare pdfkit page in the same run.
 *
 *   npm run bench -- documents [seconds per loop, default 3] [statements for the memory run, default 10000]
 *
 * On one core: `renderDocument` of a June statement (60 journeys of 20–60 points over the UK outline, 30
 * days, the company's PNG logo) against the baseline, one pdfkit page with the same font and the same text
 * (the summary and the day table as plain lines) and no map, no table, no tags. Passes alternate for about
 * `seconds` each; the figures are the best pass, with the median beside it. Then a child process started
 * with `npm start`'s Node flags renders the given number of statements one after another, as the worker
 * does, and reports its peak resident set (VmHWM). Budgets: ≥ 100 statements/s, ≤ 300 MB.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import type { StatementContent } from '../src/modules/documents/document-content.ts';
import { documentFonts } from '../src/modules/documents/render/fonts.ts';
import { renderDocument } from '../src/modules/documents/render/index.ts';
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
): Promise<number> {
  const start = performance.now();
  let count = 0;
  while (performance.now() - start < seconds * 1000) {
    await render(docs[count % docs.length] as StatementContent);
    count += 1;
  }
  return count / ((performance.now() - start) / 1000);
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/** In the child: render `count` statements in sequence and print the peak RSS in MB. */
async function memoryRun(count: number): Promise<void> {
  const docs = statements(50);
  const start = performance.now();
  let bytes = 0;
  for (let i = 0; i < count; i += 1) {
    const pdf = await renderDocument(
      { kind: 'statement', content: docs[i % docs.length] as StatementContent },
      EXAMPLE_BRANDING,
    );
    bytes += pdf.length;
  }
  const status = readFileSync('/proc/self/status', 'utf8');
  const peakKb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  const seconds = (performance.now() - start) / 1000;
  process.stdout.write(
    `${JSON.stringify({ count, seconds, peakRssMb: peakKb / 1024, meanBytes: bytes / count })}\n`,
  );
}

async function measureMemory(
  count: number,
): Promise<{ peakRssMb: number; seconds: number; meanBytes: number }> {
  const pkg = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const flags = pkg.scripts.start.split(' ').filter((word) => word.startsWith('--'));
  const child = spawn(process.execPath, [...flags, import.meta.filename, '--memory-run', String(count)], {
    env: { ...process.env, MALLOC_ARENA_MAX: '2' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`the memory run exited with ${String(code)}`);
  return JSON.parse(out) as { peakRssMb: number; seconds: number; meanBytes: number };
}

if (process.argv[2] === '--memory-run') {
  await memoryRun(Number(process.argv[3]));
} else {
  const docs = statements(50);
  const withMap = (s: StatementContent) =>
    renderDocument({ kind: 'statement', content: s }, EXAMPLE_BRANDING);
  await timeLoop(withMap, docs, 1);
  await timeLoop(barePage, docs, 1);
  const rendered: number[] = [];
  const bare: number[] = [];
  for (let pass = 0; pass < 3; pass += 1) {
    rendered.push(await timeLoop(withMap, docs, secondsPerLoop / 3));
    bare.push(await timeLoop(barePage, docs, secondsPerLoop / 3));
  }
  const best = Math.max(...rendered);
  const bestBare = Math.max(...bare);
  console.log(
    `statements with maps: ${best.toFixed(0)}/s best, ${median(rendered).toFixed(0)}/s median (one core)`,
  );
  console.log(
    `baseline, bare pdfkit page with the same text: ${bestBare.toFixed(0)}/s best, ${median(bare).toFixed(0)}/s median`,
  );
  console.log(`ratio statements / baseline: ${(best / bestBare).toFixed(2)}`);
  const memory = await measureMemory(memoryRunCount);
  console.log(
    `${String(memoryRunCount)} statements in a child with npm start's flags: ${memory.seconds.toFixed(1)} s (${(memoryRunCount / memory.seconds).toFixed(0)}/s), peak RSS ${memory.peakRssMb.toFixed(0)} MB, ${(memory.meanBytes / 1024).toFixed(0)} kB a PDF`,
  );
  console.log(
    `budgets: ≥ 100 statements/s ${best >= 100 ? 'met' : 'MISSED'}; ≤ 300 MB ${memory.peakRssMb <= 300 ? 'met' : 'MISSED'}`,
  );
}
