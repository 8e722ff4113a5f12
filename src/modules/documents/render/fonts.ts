/** The fonts every document embeds: DejaVu Sans (Latin, Greek, Cyrillic, Welsh ŵ ŷ, Polish ą ł ż, …). */
import * as fontkit from 'fontkit';
import { BoundedCache } from '../../../platform/bounded-cache.ts';
import { documentFontBytes } from './font-bytes.ts';
import { subsetSource, TrueTypeSubset } from './font-subset.ts';

/** Shaped words kept per font: the words of statements and letters repeat (dates, amounts, labels). */
const LAYOUT_CACHE_WORDS = 20_000;

interface Position {
  xAdvance: number;
  yAdvance: number;
  xOffset: number;
  yOffset: number;
  [key: string]: number;
}

interface Run {
  readonly glyphs: readonly fontkit.Glyph[];
  readonly positions: readonly Position[];
}

/*
 * NOTE: a font for pdfkit whose `layout` (OpenType shaping of a word) is remembered across documents.
 * pdfkit keeps such a cache only per document, and shaping was a sixth of a statement's time. pdfkit
 * scales the positions it gets in place, so each call hands out fresh copies; the glyphs are only read.
 * Its subsets (`createSubset`, one per document) copy glyphs from the file's bytes (font-subset.ts).
 */
function withSharedLayout(font: fontkit.Font, data: Uint8Array): fontkit.Font {
  const source = subsetSource(data);
  const createSubset = (): unknown =>
    source === undefined ? font.createSubset() : new TrueTypeSubset(source);
  const cache = new BoundedCache<string, Run>(LAYOUT_CACHE_WORDS);
  const layout = (text: string, features?: unknown): unknown => {
    const key = features === undefined ? text : `${JSON.stringify(features)}\u0000${text}`;
    let run = cache.get(key);
    if (run === undefined) {
      const shaped = font.layout(text, features as string[] | undefined);
      run = { glyphs: shaped.glyphs, positions: shaped.positions.map((p) => ({ ...p })) };
      cache.set(key, run);
    }
    const positions = run.positions.map((p) => ({ ...p }));
    return {
      glyphs: run.glyphs,
      positions,
      // pdfkit reads the advance after it scaled the positions, as fontkit's GlyphRun computes it.
      get advanceWidth(): number {
        return positions.reduce((sum, p) => sum + p.xAdvance, 0);
      },
    };
  };
  return new Proxy(font, {
    get: (target, property) =>
      property === 'layout'
        ? layout
        : property === 'createSubset'
          ? createSubset
          : (Reflect.get(target, property, target) as unknown),
  });
}

const parse = (name: string, data: Uint8Array): fontkit.Font => {
  const font = fontkit.create(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  if (!('layout' in font)) throw new Error(`${name} is a font collection, not a font`);
  return withSharedLayout(font, data);
};

/*
 * NOTE: parsed once per thread and handed to pdfkit as fontkit fonts (its font factory takes any object
 * with `layout`), not as bytes: parsing the 700 kB TTF for each document took four fifths of a
 * statement's rendering time. pdfkit still subsets and embeds only the glyphs each document uses.
 */
let fonts: { regular: fontkit.Font; bold: fontkit.Font } | undefined;

/** DejaVu Sans and DejaVu Sans Bold, parsed on first use. */
export function documentFonts(): { regular: fontkit.Font; bold: fontkit.Font } {
  if (fonts !== undefined) return fonts;
  const { regular, bold } = documentFontBytes();
  fonts = { regular: parse('DejaVuSans.ttf', regular), bold: parse('DejaVuSans-Bold.ttf', bold) };
  return fonts;
}
