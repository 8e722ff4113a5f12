/**
 * The page every document shares: A4, the company's heading (colour, logo, name), tagged headings,
 * paragraphs, lists, label/value blocks and tables that break across pages, and a footer with page
 * numbers. Text goes through `printable` and `inFont`, so no caller can break a line or a layout with
 * what it prints, or print a character the font has no glyph for.
 */
import PDFDocument from 'pdfkit';
import SVGtoPDF from 'svg-to-pdfkit';
import type { Branding, BrandingLogo } from '../document-content.ts';
import { documentFonts } from './fonts.ts';
import { inFont, printable } from './text.ts';

export const PAGE_WIDTH_PT = 595.28;
export const PAGE_HEIGHT_PT = 841.89;
export const MARGIN_PT = 50;
const TOP_MARGIN_PT = 64;
const BOTTOM_MARGIN_PT = 64;
export const CONTENT_WIDTH_PT = PAGE_WIDTH_PT - 2 * MARGIN_PT;
const LOGO_BOX_PT: [number, number] = [130, 44];
const BODY_SIZE_PT = 9.5;
const INK = '#1a1a1a';
const MUTED = '#555555';
const RULE = '#c8c8c8';

/** What the PDF's information dictionary and every page's heading and footer say. */
export interface DocumentMeta {
  readonly title: string;
  /** Printed in each footer beside the title: the policy reference, or the product for an IPID. */
  readonly reference: string;
  readonly subject: string;
  /** The content's own instant: the PDF's creation date, so the same content gives the same bytes. */
  readonly issuedAt: Date;
}

export interface Layout {
  readonly doc: PDFKit.PDFDocument;
  readonly meta: DocumentMeta;
  readonly branding: Branding;
  readonly accent: string;
  /** The structure root every tagged element hangs from (a screen reader's reading order). */
  readonly root: PDFKit.PDFStructureElement;
  readonly bytes: Promise<Uint8Array>;
}

const HEX_COLOUR = /^#[0-9a-fA-F]{6}$/;

/** The two fonts text is drawn in, by the names they are registered under. */
type FontName = 'Body' | 'Bold';

/**
 * Text as it is drawn in `font`: `printable`, and every character the font has no glyph for in a form it has
 * (`inFont`). Each text a document draws goes through here, measured and drawn as the same string.
 */
function printed(text: string, font: FontName): string {
  const { regular, bold } = documentFonts();
  const face = font === 'Bold' ? bold : regular;
  return inFont(printable(text), (codePoint) => face.hasGlyphForCodePoint(codePoint));
}

/** Opens an A4 document with the company's heading on page 1; text continues below it. */
export function openLayout(meta: DocumentMeta, branding: Branding): Layout {
  const { regular, bold } = documentFonts();
  const doc = new PDFDocument({
    // NOTE: no default font: pdfkit would load Helvetica's metrics for every document, and none prints in it.
    font: null as unknown as string,
    size: 'A4',
    margins: { top: TOP_MARGIN_PT, bottom: BOTTOM_MARGIN_PT, left: MARGIN_PT, right: MARGIN_PT },
    bufferPages: true,
    tagged: true,
    lang: 'en-GB',
    displayTitle: true,
    pdfVersion: '1.7',
    info: {
      Title: printable(meta.title),
      Author: printable(branding.companyName),
      Subject: printable(meta.subject),
      Creator: 'Milepost',
      Producer: 'Milepost',
      CreationDate: meta.issuedAt,
      ModDate: meta.issuedAt,
    },
  });
  const chunks: Uint8Array[] = [];
  doc.on('data', (chunk: Uint8Array) => chunks.push(chunk));
  const bytes = new Promise<Uint8Array>((resolve, reject) => {
    doc.on('end', () => {
      resolve(Buffer.concat(chunks));
    });
    doc.on('error', reject);
  });
  // NOTE: pdfkit takes a parsed fontkit font as well as bytes (its factory accepts anything with
  // `layout`); its type only names bytes.
  doc.registerFont('Body', regular as unknown as PDFKit.Mixins.PDFFontSource);
  doc.registerFont('Bold', bold as unknown as PDFKit.Mixins.PDFFontSource);
  doc.font('Body').fontSize(BODY_SIZE_PT).fillColor(INK);
  const root = doc.struct('Document');
  doc.addStructure(root);
  const accent = HEX_COLOUR.test(branding.colourHex) ? branding.colourHex : '#1f4e79';
  const layout: Layout = { doc, meta, branding, accent, root, bytes };
  drawFirstHeading(layout);
  return layout;
}

function drawFirstHeading(l: Layout): void {
  const { doc, branding, accent } = l;
  doc.markContent('Artifact', { type: 'Layout' });
  doc.rect(0, 0, PAGE_WIDTH_PT, 8).fill(accent);
  doc.endMarkedContent();
  let nameX = MARGIN_PT;
  if (branding.logo !== undefined) {
    const logo = branding.logo;
    l.root.add(
      doc.struct('Figure', { alt: `${printable(branding.companyName)} logo` }, () => {
        drawLogo(doc, logo, MARGIN_PT, 24);
      }),
    );
    nameX = MARGIN_PT + LOGO_BOX_PT[0] + 12;
  }
  const nameWidth = PAGE_WIDTH_PT - MARGIN_PT - nameX;
  const companyName = printed(branding.companyName, 'Bold');
  doc.font('Bold').fontSize(13).fillColor(accent);
  // NOTE: a long name takes at most two lines (then an ellipsis); the insurer's line goes below what it took.
  const nameHeight = Math.min(
    doc.heightOfString(companyName, { width: nameWidth }),
    2 * doc.currentLineHeight(true),
  );
  l.root.add(
    doc.struct('P', {}, () => {
      doc.text(companyName, nameX, 26, { width: nameWidth, height: nameHeight, ellipsis: true });
    }),
  );
  doc.font('Body').fontSize(8).fillColor(MUTED);
  const insurerY = 26 + nameHeight + 2;
  l.root.add(
    doc.struct('P', {}, () => {
      doc.text(printed(`Insurer: ${branding.insurerName}`, 'Body'), nameX, insurerY, {
        width: nameWidth,
        height: 11,
        ellipsis: true,
      });
    }),
  );
  const ruleY = Math.max(76, insurerY + 16);
  doc.markContent('Artifact', { type: 'Layout' });
  doc
    .moveTo(MARGIN_PT, ruleY)
    .lineTo(PAGE_WIDTH_PT - MARGIN_PT, ruleY)
    .lineWidth(0.75)
    .stroke(RULE);
  doc.endMarkedContent();
  doc.font('Bold').fontSize(17).fillColor(INK);
  l.root.add(
    doc.struct('H1', {}, () =>
      doc.text(printed(l.meta.title, 'Bold'), MARGIN_PT, ruleY + 12, { width: CONTENT_WIDTH_PT }),
    ),
  );
  doc.font('Body').fontSize(BODY_SIZE_PT).fillColor(INK);
  doc.moveDown(0.6);
}

/** Draws a logo fitted into the logo box at (x, y): PNG through pdfkit, SVG as vectors. Throws on bad bytes. */
export function drawLogo(doc: PDFKit.PDFDocument, logo: BrandingLogo, x: number, y: number): void {
  const [width, height] = LOGO_BOX_PT;
  if (logo.mediaType === 'image/png') {
    doc.image(Buffer.from(logo.bytes), x, y, { fit: [width, height], valign: 'center' });
    return;
  }
  const warnings: string[] = [];
  SVGtoPDF(doc, new TextDecoder().decode(logo.bytes), x, y, {
    width,
    height,
    preserveAspectRatio: 'xMinYMid meet',
    assumePt: true,
    // NOTE: by default an <image href> is opened by pdfkit, which reads local files and fetches nothing
    // useful: a logo may embed a raster only as a data: URI, never name a file on the server.
    imageCallback: (link: string) =>
      /^data:image\/(png|jpeg);base64,/i.test(link.trim()) ? link.trim() : '',
    // Every <text> in a logo is set in the document's own font, so no standard font is pulled in.
    fontCallback: (_family: string, isBold: boolean) => (isBold ? 'Bold' : 'Body'),
    warningCallback: (warning: string) => warnings.push(warning),
  });
}

/** Moves to a new page unless `heightPt` still fits above the footer. */
export function ensureSpace(l: Layout, heightPt: number): void {
  const { doc } = l;
  if (doc.y + heightPt > doc.page.height - doc.page.margins.bottom) doc.addPage();
  doc.x = MARGIN_PT;
}

/** A section heading (H2) in the company's colour, kept with at least a few lines after it. */
export function heading(l: Layout, text: string): void {
  const { doc } = l;
  ensureSpace(l, 60);
  doc.moveDown(0.5);
  doc.font('Bold').fontSize(11.5).fillColor(l.accent);
  doc.text(printed(text, 'Bold'), MARGIN_PT, doc.y, {
    width: CONTENT_WIDTH_PT,
    structParent: l.root,
    structType: 'H2',
  });
  doc.moveDown(0.25);
  doc.font('Body').fontSize(BODY_SIZE_PT).fillColor(INK);
}

/** A paragraph across the text width; `bold` for a statement the reader must not miss. */
export function paragraph(l: Layout, text: string, options: { bold?: boolean; sizePt?: number } = {}): void {
  const { doc } = l;
  const font = options.bold === true ? 'Bold' : 'Body';
  doc.font(font).fontSize(options.sizePt ?? BODY_SIZE_PT);
  ensureSpace(l, doc.currentLineHeight(true) * 2);
  doc.fillColor(INK).text(printed(text, font), MARGIN_PT, doc.y, {
    width: CONTENT_WIDTH_PT,
    structParent: l.root,
    structType: 'P',
    paragraphGap: 3,
  });
  doc.font('Body').fontSize(BODY_SIZE_PT);
}

/** A bulleted list, tagged as a list. */
export function bullets(l: Layout, items: readonly string[]): void {
  const { doc } = l;
  if (items.length === 0) return;
  const list = doc.struct('L');
  l.root.add(list);
  for (const item of items) {
    const text = printed(item, 'Body');
    ensureSpace(l, doc.heightOfString(text, { width: CONTENT_WIDTH_PT - 14 }) + 2);
    const y = doc.y;
    list.add(
      doc.struct('LI', {}, [
        doc.struct('Lbl', {}, () => {
          doc.fillColor(l.accent).text('•', MARGIN_PT + 2, y, { width: 10, lineBreak: false });
        }),
        doc.struct('LBody', {}, () => {
          doc.fillColor(INK).text(text, MARGIN_PT + 14, y, { width: CONTENT_WIDTH_PT - 14, paragraphGap: 2 });
        }),
      ]),
    );
  }
  list.end();
  doc.x = MARGIN_PT;
}

export interface Column {
  readonly header: string;
  /** A share of the text width; the columns' shares add up to 1. */
  readonly share: number;
  readonly align?: 'left' | 'right';
}

const CELL_PAD_PT = 3.5;

/** What can make pdfkit break a line other than running out of width. */
const LINE_BREAKING = /[\n\r\t\u00ad\u2028\u2029]/;

/** A cell's text and, when it fits on one line, its width (drawn as one line, not wrapped). */
interface Cell {
  readonly text: string;
  readonly lineWidthPt: number | undefined;
}

interface MeasuredRow {
  readonly cells: readonly Cell[];
  readonly heightPt: number;
}

/*
 * NOTE: most cells (dates, amounts, labels) fit on one line, and a line is a line high: a cell's width is
 * measured once, in the font it is drawn in, and such a cell is drawn as one line at its place (pdfkit's
 * `lineBreak: false`, no width), which skips pdfkit's line wrapper and its second and third measures of the
 * same text. A cell near its width, or with anything that may break a line, is wrapped in its width.
 */
function measureRow(
  doc: PDFKit.PDFDocument,
  texts: readonly string[],
  widths: readonly number[],
): MeasuredRow {
  let tallest = 0;
  const cells = texts.map((text, i): Cell => {
    const width = (widths[i] ?? 0) - 2 * CELL_PAD_PT;
    const lineWidthPt = text !== '' && !LINE_BREAKING.test(text) ? doc.widthOfString(text) : undefined;
    const fits = lineWidthPt !== undefined && lineWidthPt < width - 1;
    tallest = Math.max(tallest, fits ? doc.currentLineHeight(true) : doc.heightOfString(text, { width }));
    return { text, lineWidthPt: fits ? lineWidthPt : undefined };
  });
  return { cells, heightPt: tallest + 2 * CELL_PAD_PT };
}

/** Draws a cell's text in its box: one line placed by its measured width, or wrapped in the width. */
function drawCell(
  doc: PDFKit.PDFDocument,
  cell: Cell,
  x: number,
  y: number,
  width: number,
  align: 'left' | 'right',
): void {
  if (cell.lineWidthPt === undefined) {
    doc.text(cell.text, x, y, { width, align });
    return;
  }
  doc.text(cell.text, align === 'right' ? x + width - cell.lineWidthPt : x, y, { lineBreak: false });
}

function drawRow(
  l: Layout,
  table: PDFKit.PDFStructureElement,
  row: MeasuredRow,
  widths: readonly number[],
  style: { header: boolean; rowHeader: boolean; columns: readonly Column[]; shaded: boolean; bold?: boolean },
): void {
  const { doc } = l;
  doc.font(style.header || style.bold === true ? 'Bold' : 'Body').fontSize(style.header ? 8.5 : BODY_SIZE_PT);
  const height = row.heightPt;
  const top = doc.y;
  if (style.header || style.shaded) {
    doc.markContent('Artifact', { type: 'Layout' });
    doc.rect(MARGIN_PT, top, CONTENT_WIDTH_PT, height).fill(style.header ? l.accent : '#f2f4f7');
    doc.endMarkedContent();
  }
  const tr = doc.struct('TR');
  table.add(tr);
  let x = MARGIN_PT;
  /*
   * NOTE: the text's colour is set when it changes along the row, not for every cell: nothing between two
   * cells changes it (marked content leaves the graphics state alone, and pdfkit draws each text inside its
   * own save and restore), and each setting is a line of content pdfkit builds and deflates.
   */
  let current: string | undefined;
  row.cells.forEach((cell, i) => {
    const width = widths[i] ?? 0;
    const cellX = x;
    const isRowHeader = style.rowHeader && i === 0;
    const colour = style.header ? '#ffffff' : isRowHeader ? MUTED : INK;
    const setColour = colour !== current;
    current = colour;
    tr.add(
      doc.struct(style.header || isRowHeader ? 'TH' : 'TD', {}, () => {
        if (setColour) doc.fillColor(colour);
        drawCell(
          doc,
          cell,
          cellX + CELL_PAD_PT,
          top + CELL_PAD_PT,
          width - 2 * CELL_PAD_PT,
          style.columns[i]?.align ?? 'left',
        );
      }),
    );
    x += width;
  });
  tr.end();
  doc.x = MARGIN_PT;
  doc.y = top + height;
}

/** A table whose header row repeats on each page it runs onto; cells wrap, rows never split. */
export function table(
  l: Layout,
  columns: readonly Column[],
  rows: ReadonlyArray<readonly string[]>,
  options: { totals?: readonly string[]; headerRow?: boolean; rowHeaders?: boolean } = {},
): void {
  const { doc } = l;
  const widths = columns.map((c) => c.share * CONTENT_WIDTH_PT);
  const headers = columns.map((c) => printed(c.header, 'Bold'));
  const withHeader = options.headerRow ?? true;
  const rowHeader = options.rowHeaders ?? false;
  const tableStruct = doc.struct('Table');
  l.root.add(tableStruct);
  const bottom = (): number => doc.page.height - doc.page.margins.bottom;
  doc.font('Bold').fontSize(8.5);
  const headerRow = measureRow(doc, headers, widths);
  const header = (): void => {
    if (withHeader)
      drawRow(l, tableStruct, headerRow, widths, { header: true, rowHeader, columns, shaded: false });
  };
  ensureSpace(l, (withHeader ? headerRow.heightPt : 0) + 3 * BODY_SIZE_PT);
  header();
  const all = options.totals === undefined ? rows : [...rows, options.totals];
  all.forEach((raw, index) => {
    const isTotal = options.totals !== undefined && index === rows.length;
    const font = isTotal ? 'Bold' : 'Body';
    doc.font(font).fontSize(BODY_SIZE_PT);
    const row = measureRow(
      doc,
      raw.map((text) => printed(text, font)),
      widths,
    );
    if (doc.y + row.heightPt > bottom()) {
      doc.addPage();
      header();
      doc.font(font).fontSize(BODY_SIZE_PT);
    }
    drawRow(l, tableStruct, row, widths, {
      header: false,
      rowHeader,
      columns,
      shaded: index % 2 === 1,
      bold: isTotal,
    });
  });
  tableStruct.end();
  doc.markContent('Artifact', { type: 'Layout' });
  doc
    .moveTo(MARGIN_PT, doc.y)
    .lineTo(PAGE_WIDTH_PT - MARGIN_PT, doc.y)
    .lineWidth(0.5)
    .stroke(RULE);
  doc.endMarkedContent();
  doc.font('Body').fontSize(BODY_SIZE_PT);
  doc.moveDown(0.6);
}

/** Labels beside their values, a two-column table (e.g. the vehicle, the term). */
export function facts(l: Layout, rows: ReadonlyArray<readonly [string, string]>): void {
  table(
    l,
    [
      { header: 'Item', share: 0.34 },
      { header: 'Detail', share: 0.66 },
    ],
    rows,
    { headerRow: false, rowHeaders: true },
  );
}

/** Draws each page's heading (after the first) and footer with `Page n of N`, then ends the document. */
export function finish(l: Layout): Promise<Uint8Array> {
  const { doc, branding, meta } = l;
  const range = doc.bufferedPageRange();
  const footer = printed(`${branding.companyName} · ${meta.title} · ${meta.reference}`, 'Body');
  for (let i = range.start; i < range.start + range.count; i += 1) {
    doc.switchToPage(i);
    const page = doc.page;
    const savedBottom = page.margins.bottom;
    // NOTE: text below the bottom margin would start a new page; the footer lives there, so lift it.
    page.margins.bottom = 0;
    doc.markContent('Artifact', { type: 'Pagination' });
    if (i > range.start) {
      doc.rect(0, 0, PAGE_WIDTH_PT, 4).fill(l.accent);
      doc.font('Bold').fontSize(8).fillColor(MUTED);
      doc.text(printed(`${branding.companyName} · ${meta.title}`, 'Bold'), MARGIN_PT, 26, {
        width: CONTENT_WIDTH_PT,
        height: 12,
        ellipsis: true,
        lineBreak: false,
      });
    }
    const lineY = PAGE_HEIGHT_PT - 44;
    doc
      .moveTo(MARGIN_PT, lineY)
      .lineTo(PAGE_WIDTH_PT - MARGIN_PT, lineY)
      .lineWidth(0.5)
      .stroke(RULE);
    doc.font('Body').fontSize(7.5).fillColor(MUTED);
    doc.text(footer, MARGIN_PT, lineY + 8, {
      width: CONTENT_WIDTH_PT - 80,
      height: 10,
      ellipsis: true,
      lineBreak: false,
    });
    doc.text(
      `Page ${String(i - range.start + 1)} of ${String(range.count)}`,
      PAGE_WIDTH_PT - MARGIN_PT - 80,
      lineY + 8,
      {
        width: 80,
        align: 'right',
        lineBreak: false,
      },
    );
    doc.endMarkedContent();
    page.margins.bottom = savedBottom;
  }
  l.root.end();
  doc.end();
  return l.bytes;
}
