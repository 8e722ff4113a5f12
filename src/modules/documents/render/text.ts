/** Text as documents print it: cleaned of what breaks a layout, and money, dates and distances in words. */
import type { UsageUnit } from '../document-content.ts';

/*
 * Bidirectional formatting characters (LRM, RLM, ALM, the embeddings, overrides and isolates) and the C0/C1
 * controls. A PDF has no bidi algorithm of its own: left in, an override would reorder nothing but its
 * glyphs would print as boxes, and a control character can end a line or a string early. Printed text is
 * what a reader sees, so they are dropped; letters of every script are kept.
 */
const INVISIBLE =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/gu;
const LINE_BREAKS = /[\t\r\n\u2028\u2029]+/gu;

/** Text safe to print on one line: NFC, bidi and control characters removed, breaks made spaces, trimmed. */
export function printable(text: string): string {
  return text.normalize('NFC').replace(INVISIBLE, '').replace(LINE_BREAKS, ' ').replace(/ {2,}/g, ' ').trim();
}

/** What a document prints for a character its font has no glyph for: U+FFFD, the replacement character. */
export const MISSING_GLYPH = '\ufffd';

/** Text of printable ASCII, which every document font covers: no character needs looking up. */
const ASCII = /^[\x20-\x7e]*$/;
/** Combining marks (variation selectors among them) and format characters (ZWJ, ZWNJ): dropped last. */
const MARKS_AND_FORMATS = /[\p{M}\p{Cf}]/gu;
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });

const covered = (text: string, hasGlyph: (codePoint: number) => boolean): boolean => {
  for (const character of text) if (!hasGlyph(character.codePointAt(0) ?? 0)) return false;
  return true;
};

/*
 * NOTE: a character the font lacks would print as the font's .notdef box, which says nothing and which
 * pdfkit measures at a width other than the one it draws (a row of them ran past the margin). Each
 * character as a reader sees it (a grapheme: an emoji with its modifiers and joiners, a letter with its
 * marks) is printed in the first form the font has: as it is; its compatibility form (NFKC: a ligature ﬁ
 * as f i, full-width Ａ as A, a presentation form as its letters); its letters without the marks the font
 * lacks; else one MISSING_GLYPH, so a name keeps its length and a reader sees that something is there.
 */
/** Text with every character the font (`hasGlyph`) cannot print replaced by a form it can, else MISSING_GLYPH. */
export function inFont(text: string, hasGlyph: (codePoint: number) => boolean): string {
  if (ASCII.test(text) || covered(text, hasGlyph)) return text;
  let out = '';
  for (const { segment } of GRAPHEMES.segment(text)) {
    if (covered(segment, hasGlyph)) {
      out += segment;
      continue;
    }
    const compatible = segment.normalize('NFKC');
    const bare = segment.normalize('NFD').replace(MARKS_AND_FORMATS, '').normalize('NFC');
    if (compatible !== '' && covered(compatible, hasGlyph)) out += compatible;
    else if (bare !== '' && covered(bare, hasGlyph)) out += bare;
    else out += MISSING_GLYPH;
  }
  return out;
}

const groupThousands = (digits: string): string => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** Integer pence → `£1,234.56` (a minus sign before the pound sign when negative), by integer arithmetic. */
export function money(pence: number): string {
  if (!Number.isSafeInteger(pence)) throw new RangeError(`${String(pence)} is not a whole number of pence`);
  const magnitude = Math.abs(pence);
  const pounds = Math.floor(magnitude / 100);
  const rest = magnitude % 100;
  return `${pence < 0 ? '−' : ''}£${groupThousands(String(pounds))}.${String(rest).padStart(2, '0')}`;
}

/** A rate in pence per unit, exact decimal text → `4.5p per mile`. */
export function ratePerUnit(pencePerUnit: string, unit: UsageUnit): string {
  return `${pencePerUnit}p per ${unit === 'km' ? 'kilometre' : 'mile'}`;
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

/** A London date `YYYY-MM-DD` → `1 June 2025`. */
export function longDate(date: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (match === null) throw new RangeError(`${date} is not a YYYY-MM-DD date`);
  const [, year = '', month = '', day = ''] = match;
  return `${String(Number(day))} ${MONTHS[Number(month) - 1] ?? month} ${year}`;
}

/** `YYYY-MM-DD` → `01/06/2025`, for tables. */
export function shortDate(date: string): string {
  const [year = '', month = '', day = ''] = date.split('-');
  return `${day}/${month}/${year}`;
}

const LONDON_PARTS = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** An instant in Europe/London: the date `YYYY-MM-DD` and the time `HH:MM`. */
export function londonParts(at: Date): { date: string; time: string } {
  const part = (type: Intl.DateTimeFormatPartTypes): string =>
    LONDON_PARTS.formatToParts(at).find((p) => p.type === type)?.value ?? '';
  return {
    date: `${part('year')}-${part('month')}-${part('day')}`,
    time: `${part('hour')}:${part('minute')}`,
  };
}

/** An instant → `00:00 on 1 June 2025` in Europe/London (the time the law reads on a certificate). */
export function londonDateTime(at: Date): string {
  const { date, time } = londonParts(at);
  return `${time} on ${longDate(date)}`;
}

/** An instant → its London calendar day `1 June 2025`. */
export function londonLongDate(at: Date): string {
  return longDate(londonParts(at).date);
}

const METRES_PER_MILE = 1609.344;

/** Metres → distance in the unit with one decimal: `12.3 miles`, `4.0 km`. */
export function distance(metres: number, unit: UsageUnit): string {
  const tenths = Math.round((unit === 'km' ? metres / 1000 : metres / METRES_PER_MILE) * 10);
  const text = `${groupThousands(String(Math.floor(tenths / 10)))}.${String(tenths % 10)}`;
  return `${text} ${unit === 'km' ? 'km' : 'miles'}`;
}

/** A distance in the unit (a rule's figure) → `100 miles`, `1 mile`, `50 km`. */
export function unitDistance(value: number, unit: UsageUnit): string {
  if (unit === 'km') return `${String(value)} km`;
  return `${String(value)} ${value === 1 ? 'mile' : 'miles'}`;
}

/** An interface code (`sdp_commuting`) → words (`sdp commuting`); a code is shown as sent, only spaced. */
export function codeWords(code: string): string {
  return printable(code.replace(/_/g, ' '));
}

/** A boolean answer → `Yes` / `No`. */
export const yesNo = (value: boolean): string => (value ? 'Yes' : 'No');

/** 1 → `1st`, 22 → `22nd`, 13 → `13th`. */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${String(n)}${suffix}`;
}
