import assert from 'node:assert/strict';
import { test } from 'node:test';
import { documentFonts } from './fonts.ts';
import { inFont, MISSING_GLYPH } from './text.ts';

/** A font of printable ASCII, the heart (U+2764) and the combining acute accent, and nothing else. */
const asciiFont = (codePoint: number): boolean =>
  (codePoint >= 0x20 && codePoint <= 0x7e) || codePoint === 0x2764 || codePoint === 0x301;

test('text the font covers is kept as it is', () => {
  assert.equal(inFont('Ann Smith <b>', asciiFont), 'Ann Smith <b>');
  assert.equal(inFont('', asciiFont), '');
  assert.equal(inFont('e\u0301', asciiFont), 'e\u0301');
});

test('a character the font lacks: its compatibility form (NFKC) when the font has that', () => {
  assert.equal(inFont('ﬁnch', asciiFont), 'finch');
  assert.equal(inFont('Ａｎｎ', asciiFont), 'Ann');
  assert.equal(inFont('Flat ①', asciiFont), 'Flat 1');
});

test('else its letter without the marks (and variation selectors) the font lacks', () => {
  assert.equal(inFont('Siân', asciiFont), 'Sian');
  assert.equal(inFont('I ❤️ cars', asciiFont), 'I ❤ cars');
});

test('else one replacement character for each character as a reader sees it', () => {
  assert.equal(inFont('Ann 🚗🚗', asciiFont), `Ann ${MISSING_GLYPH}${MISSING_GLYPH}`);
  // A family joined by ZWJs and a flag of two regional indicators are one character each.
  assert.equal(inFont('👨‍👩‍👧 🇬🇧', asciiFont), `${MISSING_GLYPH} ${MISSING_GLYPH}`);
  // Ł is a letter of its own, not L with a mark: it has no form in this font.
  assert.equal(inFont('Łódź', asciiFont), `${MISSING_GLYPH}odz`);
});

test('with DejaVu Sans: Welsh, Polish and Greek kept; ﷺ as its letters; emoji replaced', () => {
  const { regular, bold } = documentFonts();
  for (const font of [regular, bold]) {
    const has = (codePoint: number): boolean => font.hasGlyphForCodePoint(codePoint);
    assert.equal(inFont('Ŵyn Łódź Ωμέγα', has), 'Ŵyn Łódź Ωμέγα');
    assert.equal(inFont('ﷺ', has), 'ﷺ'.normalize('NFKC'));
    assert.equal(inFont('Ann 🚗', has), `Ann ${MISSING_GLYPH}`);
    assert.ok(has(MISSING_GLYPH.codePointAt(0) ?? 0), 'the replacement character is in the font');
  }
});
