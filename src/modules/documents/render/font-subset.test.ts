import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as fontkit from 'fontkit';
import { documentFontBytes } from './font-bytes.ts';
import { subsetSource, TrueTypeSubset } from './font-subset.ts';

/** Glyph ids from a fixed pseudo-random sequence, so a failure repeats. */
function glyphSets(numGlyphs: number): number[][] {
  let seed = 1;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const sets = [Array.from({ length: numGlyphs }, (_, i) => i), []];
  for (let k = 0; k < 60; k += 1)
    sets.push(Array.from({ length: 1 + Math.floor(next() * 120) }, () => Math.floor(next() * numGlyphs)));
  return sets;
}

test("a subset has fontkit's bytes and glyph numbers for the same glyphs, composites and all", () => {
  const { regular, bold } = documentFontBytes();
  for (const bytes of [regular, bold]) {
    const font = fontkit.create(Buffer.from(bytes)) as fontkit.Font;
    const source = subsetSource(bytes);
    if (source === undefined) throw new Error('DejaVu Sans is TrueType without variations');
    // Letters with accents are composites in DejaVu Sans: their parts are renumbered and copied after them.
    const accented = [0x175, 0x177, 0x105, 0x142, 0x17c, 0xe9, 0xc5, 0xa3, 0x2212, 0x2019].map(
      (codePoint) => font.glyphForCodePoint(codePoint).id,
    );
    for (const ids of [accented, ...glyphSets(font.numGlyphs)]) {
      const theirs = font.createSubset();
      const ours: TrueTypeSubset = new TrueTypeSubset(source);
      for (const id of ids) assert.equal(ours.includeGlyph(id), theirs.includeGlyph(font.getGlyph(id)));
      assert.deepEqual(Buffer.from(ours.encode()), Buffer.from(theirs.encode()));
    }
  }
});
