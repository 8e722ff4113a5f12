/** The fonts every document embeds: DejaVu Sans (Latin, Greek, Cyrillic, Welsh ŵ ŷ, Polish ą ł ż, …). */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as fontkit from 'fontkit';

const require = createRequire(import.meta.url);

const load = (file: string): fontkit.Font => {
  const font = fontkit.create(readFileSync(require.resolve(`dejavu-fonts-ttf/ttf/${file}`)));
  if (!('layout' in font)) throw new Error(`${file} is a font collection, not a font`);
  return font;
};

/*
 * NOTE: parsed once per process and handed to pdfkit as fontkit fonts (its font factory takes any object
 * with `layout`), not as bytes: parsing the 700 kB TTF for each document took four fifths of a
 * statement's rendering time. pdfkit still subsets and embeds only the glyphs each document uses.
 */
let fonts: { regular: fontkit.Font; bold: fontkit.Font } | undefined;

/** DejaVu Sans and DejaVu Sans Bold, parsed on first use. */
export function documentFonts(): { regular: fontkit.Font; bold: fontkit.Font } {
  fonts ??= { regular: load('DejaVuSans.ttf'), bold: load('DejaVuSans-Bold.ttf') };
  return fonts;
}
