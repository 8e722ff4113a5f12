/**
 * A TrueType font's subset for pdfkit to embed: the glyphs a document uses, copied from the font file's
 * bytes. The same tables, in the same order and with the same bytes, as fontkit's `TTFSubset` writes.
 */

/** A font file read once: where its tables are, its glyphs' places and metrics, its composite glyphs' parts. */
export interface SubsetSource {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  readonly tables: ReadonlyMap<string, { readonly offset: number; readonly length: number }>;
  /** `head.indexToLocFormat`: 0 for offsets in 16-bit words, 1 for 32-bit byte offsets. */
  readonly locaFormat: number;
  readonly glyfOffset: number;
  readonly hmtxOffset: number;
  readonly numberOfHMetrics: number;
  readonly numGlyphs: number;
  /** Per composite glyph: where each component's glyph id sits in the glyph's bytes, and that id. */
  readonly components: Map<number, ReadonlyArray<readonly [number, number]>>;
}

const COMPOSITE_FLAGS = {
  argsAreWords: 0x0001,
  scale: 0x0008,
  moreComponents: 0x0020,
  xAndYScale: 0x0040,
  twoByTwo: 0x0080,
};

/** The tables a subset carries (the PDF specification's for an embedded TrueType font), in fontkit's order. */
const SUBSET_TABLES = ['head', 'hhea', 'loca', 'maxp', 'cvt ', 'prep', 'glyf', 'hmtx', 'fpgm'] as const;

/**
 * Reads a TrueType file's table directory and the fields a subset needs; undefined for a font this subset
 * does not copy as fontkit would (CFF outlines, or variations, whose glyphs fontkit re-encodes).
 */
export function subsetSource(bytes: Uint8Array): SubsetSource | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tables = new Map<string, { offset: number; length: number }>();
  const count = view.getUint16(4);
  for (let i = 0; i < count; i += 1) {
    const at = 12 + 16 * i;
    const tag = String.fromCharCode(
      bytes[at] ?? 0,
      bytes[at + 1] ?? 0,
      bytes[at + 2] ?? 0,
      bytes[at + 3] ?? 0,
    );
    tables.set(tag, { offset: view.getUint32(at + 8), length: view.getUint32(at + 12) });
  }
  if (['head', 'hhea', 'loca', 'maxp', 'glyf', 'hmtx'].some((tag) => !tables.has(tag))) return undefined;
  if (tables.has('fvar') || tables.has('CFF ') || tables.has('CFF2')) return undefined;
  const table = (tag: string): { offset: number; length: number } =>
    tables.get(tag) ?? { offset: 0, length: 0 };
  return {
    bytes,
    view,
    tables,
    locaFormat: view.getInt16(table('head').offset + 50),
    glyfOffset: table('glyf').offset,
    hmtxOffset: table('hmtx').offset,
    numberOfHMetrics: view.getUint16(table('hhea').offset + 34),
    numGlyphs: view.getUint16(table('maxp').offset + 4),
    components: new Map(),
  };
}

/** A glyph's bytes' place in the `glyf` table. */
function glyphRange(source: SubsetSource, gid: number): [number, number] {
  const loca = source.tables.get('loca')?.offset ?? 0;
  if (source.locaFormat === 0)
    return [2 * source.view.getUint16(loca + 2 * gid), 2 * source.view.getUint16(loca + 2 * gid + 2)];
  return [source.view.getUint32(loca + 4 * gid), source.view.getUint32(loca + 4 * gid + 4)];
}

/** A composite glyph's components (where each one's id sits in the glyph, and the id); none for a simple one. */
function componentsOf(
  source: SubsetSource,
  gid: number,
  start: number,
  end: number,
): ReadonlyArray<readonly [number, number]> {
  const known = source.components.get(gid);
  if (known !== undefined) return known;
  const found: Array<[number, number]> = [];
  if (end > start && source.view.getInt16(source.glyfOffset + start) < 0) {
    let at = 10;
    let flags = COMPOSITE_FLAGS.moreComponents;
    while ((flags & COMPOSITE_FLAGS.moreComponents) !== 0) {
      flags = source.view.getUint16(source.glyfOffset + start + at);
      found.push([at + 2, source.view.getUint16(source.glyfOffset + start + at + 2)]);
      at += 4 + ((flags & COMPOSITE_FLAGS.argsAreWords) !== 0 ? 4 : 2);
      if ((flags & COMPOSITE_FLAGS.scale) !== 0) at += 2;
      else if ((flags & COMPOSITE_FLAGS.xAndYScale) !== 0) at += 4;
      else if ((flags & COMPOSITE_FLAGS.twoByTwo) !== 0) at += 8;
    }
  }
  source.components.set(gid, found);
  return found;
}

/** A glyph's advance and left side bearing, from `hmtx`. */
function metricsOf(source: SubsetSource, gid: number): [number, number] {
  const { view, hmtxOffset, numberOfHMetrics } = source;
  if (gid < numberOfHMetrics)
    return [view.getUint16(hmtxOffset + 4 * gid), view.getInt16(hmtxOffset + 4 * gid + 2)];
  const advance = numberOfHMetrics > 0 ? view.getUint16(hmtxOffset + 4 * (numberOfHMetrics - 1)) : 0;
  const bearingAt = hmtxOffset + 4 * numberOfHMetrics + 2 * (gid - numberOfHMetrics);
  const hmtxEnd = hmtxOffset + (source.tables.get('hmtx')?.length ?? 0);
  return [advance, bearingAt + 2 <= hmtxEnd ? view.getInt16(bearingAt) : 0];
}

/*
 * NOTE: fontkit's own subset decodes every glyph it copies (its points, for a composite its parts) and
 * encodes the tables it copies unchanged (`cvt `, `prep`, `fpgm`, a few kB of DejaVu's) number by number,
 * for every document: an eighth of a statement's CPU. This one copies a glyph's bytes and, for a composite,
 * renumbers its parts (read once per process), and copies the unchanged tables' bytes.
 */
/** What pdfkit's embedded font asks of a fontkit subset: `includeGlyph` while it writes text, `encode` at the end. */
export class TrueTypeSubset {
  readonly glyphs: number[] = [];
  readonly #mapping = new Map<number, number>();
  readonly #source: SubsetSource;

  constructor(source: SubsetSource) {
    this.#source = source;
    // The missing glyph is always glyph 0.
    this.includeGlyph(0);
  }

  /** The glyph's id in the subset, added if it is new. */
  includeGlyph(glyph: number | { readonly id: number }): number {
    const gid = typeof glyph === 'number' ? glyph : glyph.id;
    let mapped = this.#mapping.get(gid);
    if (mapped === undefined) {
      mapped = this.glyphs.length;
      this.glyphs.push(gid);
      this.#mapping.set(gid, mapped);
    }
    return mapped;
  }

  /** The subset as a TrueType file. */
  encode(): Uint8Array {
    const source = this.#source;
    const glyfParts: Uint8Array[] = [];
    const offsets: number[] = [];
    const metrics: Array<[number, number]> = [];
    let offset = 0;
    // NOTE: a composite glyph adds its parts to `glyphs` as it is copied; they are copied after it.
    for (let i = 0; i < this.glyphs.length; i += 1) {
      const gid = this.glyphs[i] ?? 0;
      const [start, end] = glyphRange(source, gid);
      let part = source.bytes.subarray(source.glyfOffset + start, source.glyfOffset + end);
      const components = componentsOf(source, gid, start, end);
      if (components.length > 0) {
        part = new Uint8Array(part);
        const view = new DataView(part.buffer);
        for (const [at, componentGid] of components) view.setUint16(at, this.includeGlyph(componentGid));
      }
      glyfParts.push(part);
      offsets.push(offset);
      metrics.push(metricsOf(source, gid));
      offset += part.length;
    }
    offsets.push(offset);
    const raw = (tag: string): Uint8Array | undefined => {
      const found = source.tables.get(tag);
      return found === undefined
        ? undefined
        : source.bytes.subarray(found.offset, found.offset + found.length);
    };
    const patched = (tag: string, patch: (view: DataView) => void): Uint8Array | undefined => {
      const found = raw(tag);
      if (found === undefined) return undefined;
      const copy = new Uint8Array(found);
      patch(new DataView(copy.buffer));
      return copy;
    };
    const loca = new Uint8Array(offsets.length * (source.locaFormat === 0 ? 2 : 4));
    const locaView = new DataView(loca.buffer);
    offsets.forEach((value, i) => {
      if (source.locaFormat === 0) locaView.setUint16(2 * i, value >>> 1);
      else locaView.setUint32(4 * i, value);
    });
    const hmtx = new Uint8Array(4 * metrics.length);
    const hmtxView = new DataView(hmtx.buffer);
    metrics.forEach(([advance, bearing], i) => {
      hmtxView.setUint16(4 * i, advance);
      hmtxView.setInt16(4 * i + 2, bearing);
    });
    const glyf = new Uint8Array(offset);
    let at = 0;
    for (const part of glyfParts) {
      glyf.set(part, at);
      at += part.length;
    }
    const contents: Record<(typeof SUBSET_TABLES)[number], Uint8Array | undefined> = {
      head: patched('head', (view) => {
        view.setInt16(50, source.locaFormat);
      }),
      hhea: patched('hhea', (view) => {
        view.setUint16(34, metrics.length);
      }),
      loca,
      maxp: patched('maxp', (view) => {
        view.setUint16(4, metrics.length);
      }),
      'cvt ': raw('cvt '),
      prep: raw('prep'),
      glyf,
      hmtx,
      fpgm: raw('fpgm'),
    };
    const present = SUBSET_TABLES.filter((tag) => contents[tag] !== undefined);
    return directory(present.map((tag) => [tag, contents[tag] ?? new Uint8Array(0)]));
  }
}

/** The tables behind a table directory (tag `true`, checksums 0, as fontkit writes them). */
function directory(tables: ReadonlyArray<readonly [string, Uint8Array]>): Uint8Array {
  const headerLength = 12 + 16 * tables.length;
  const total = tables.reduce((sum, [, bytes]) => sum + bytes.length, headerLength);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  const tag = (at: number, text: string): void => {
    for (let i = 0; i < 4; i += 1) out[at + i] = text.charCodeAt(i);
  };
  const power = 2 ** Math.floor(Math.log2(tables.length));
  tag(0, 'true');
  view.setUint16(4, tables.length);
  view.setUint16(6, power * 16);
  view.setUint16(8, Math.log2(power));
  view.setUint16(10, tables.length * 16 - power * 16);
  let offset = headerLength;
  tables.forEach(([name, bytes], i) => {
    const at = 12 + 16 * i;
    tag(at, name);
    view.setUint32(at + 4, 0);
    view.setUint32(at + 8, offset);
    view.setUint32(at + 12, bytes.length);
    out.set(bytes, offset);
    offset += bytes.length;
  });
  return out;
}
