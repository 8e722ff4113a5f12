/**
 * Characters the documents' font has no glyph for, and words longer than a line, in a policyholder's name
 * and address: every document prints them inside the margins, read back with poppler (word boxes from
 * `pdftotext -bbox`, ink from `pdftoppm`), and shows the replacement character, not the font's empty box.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { PNG } from 'pngjs';
import { MARGIN_PT, PAGE_HEIGHT_PT, PAGE_WIDTH_PT } from '../../../src/modules/documents/render/layout.ts';
import { MISSING_GLYPH } from '../../../src/modules/documents/render/text.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { fetchDocument, listDocuments } from './documents-support.ts';

const clock = fixedClock('2025-07-20T12:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
const dir = mkdtempSync(join(tmpdir(), 'milepost-glyphs-'));

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme Insurance');
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await t.close();
});

/** DejaVu Sans has no car (U+1F697); it has the letters of the Arabic ligature ﷺ (U+FDFA), not the ligature. */
const SURNAME = '🚗'.repeat(45);
const LIGATURES = 'ﷺ'.repeat(50);
const LONG_WORD = 'W'.repeat(200);

/** Words (from pdftotext's boxes) that start left of the left margin or end right of the right one. */
function wordsOutside(path: string): string[] {
  const html = execFileSync('pdftotext', ['-bbox', path, '-'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const outside: string[] = [];
  for (const line of html.split('\n')) {
    const m = /<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">(.*)<\/word>/.exec(line);
    if (m === null) continue;
    const [, xMin = '0', xMax = '0', word = ''] = m;
    if (Number(xMin) < MARGIN_PT - 1 || Number(xMax) > PAGE_WIDTH_PT - MARGIN_PT + 1) outside.push(word);
  }
  return outside;
}

/*
 * NOTE: pdftotext leaves out glyphs it cannot map to text (a row of .notdef boxes made no word at all), so
 * the ink is read too: each page at 72 dpi (a pixel a point), no dark pixel in either margin below the
 * coloured band at the top of the page, which runs the page's width.
 */
function inkInMargins(path: string, name: string): string[] {
  execFileSync('pdftoppm', ['-r', '72', '-gray', '-png', path, join(dir, name)]);
  const found: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.startsWith(`${name}-`) && f.endsWith('.png'))) {
    const page = PNG.sync.read(readFileSync(join(dir, file)));
    let dark = 0;
    for (let y = 12; y < Math.min(page.height, PAGE_HEIGHT_PT); y += 1)
      for (let x = 0; x < page.width; x += 1) {
        if (x >= MARGIN_PT - 2 && x <= PAGE_WIDTH_PT - MARGIN_PT + 2) continue;
        if ((page.data[(y * page.width + x) * 4] ?? 255) < 160) dark += 1;
      }
    if (dark > 0) found.push(`${file}: ${String(dark)} dark pixels in the margins`);
  }
  return found;
}

test('a name and address the font cannot print stay inside the margins, as replacement characters and letters', async () => {
  const { reference } = await make.policy(t.app, acme, {
    proposer: { last_names: SURNAME },
    policy: { address: { line_1: LIGATURES, line_2: LONG_WORD } },
  });
  const r = await t.app.inject({
    method: 'DELETE',
    url: `/policys/${reference}`,
    headers: acme.sandbox,
    payload: { reason: 'sold the car' },
  });
  assert.equal(r.statusCode, 200, r.body);
  await t.container.services.documents.runPending();
  const documents = await listDocuments(t, acme.sandbox, reference);
  const kinds = ['certificate', 'schedule', 'statement_of_fact', 'cancellation_notice'];
  for (const kind of kinds) {
    const document = documents.find((d) => d.kind === kind);
    assert.ok(document !== undefined, `a ${kind}`);
    const { bytes, text } = await fetchDocument(t, acme.sandbox, document);
    const path = join(dir, `${kind}.pdf`);
    writeFileSync(path, bytes);
    assert.deepEqual(wordsOutside(path), [], `${kind}: words outside the margins`);
    assert.deepEqual(inkInMargins(path, kind), [], `${kind}: ink outside the margins`);
    // A table's cell wraps beside its label, so the letters are counted, not found in one piece.
    const count = (character: string): number => text.split(character).length - 1;
    assert.ok(count(MISSING_GLYPH) >= 45, `${kind}: the surname as replacement characters`);
    assert.ok(!text.includes('🚗') && !text.includes('ﷺ'), `${kind}: a character the font lacks`);
    if (kind !== 'certificate') assert.ok(count('W') >= LONG_WORD.length, `${kind}: the long word`);
  }
});
