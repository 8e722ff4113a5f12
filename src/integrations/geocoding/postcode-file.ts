/**
 * The compact postcode file (`data/uk-postcodes/gb-postcodes.kd`) that `build-data.ts` derives from
 * `gb-postcodes.csv.gz`, and its reader.
 *
 * The records are stored in the order of a finished KDBush index (node size 64) over their Float32 positions,
 * so loading needs no sort: the reader fills a KDBush buffer and opens it with `KDBush.from`. Inside each leaf
 * of that tree (a run that every search scans in full, so its order is free) records are sorted by postcode,
 * which makes neighbouring records similar and the file small.
 *
 * Layout:
 *   "MPPC" | u8 version (1) | u8 0 | u16 node size | u32 record count | u32 outward-code table length
 *   | outward codes, ASCII, "\n"-separated
 *   | four columns, each u32 byte length + zigzag varints of the difference from the previous record:
 *     latitude and longitude in 1e-5 degree units, outward-code number, inward-code number
 * An inward code "9ZZ" is numbered digit × 676 + letter × 26 + letter (0..6759).
 */
import KDBush from 'kdbush';

const MAGIC = 'MPPC';
const VERSION = 1;
export const POSTCODE_NODE_SIZE = 64;

/** Postcodes in a form that is cheap to hold: positions in 1e-5 degree units and two small code numbers. */
export interface PostcodeColumns {
  readonly count: number;
  readonly outwardCodes: readonly string[];
  readonly latUnits: Int32Array;
  readonly lngUnits: Int32Array;
  readonly outwardIndex: Uint16Array;
  readonly inwardCode: Uint16Array;
}

/** A loaded index: KDBush over [lng, lat] whose ids are the packed postcode (outward number << 16 | inward number). */
export interface PostcodeIndex {
  readonly index: KDBush;
  readonly outwardCodes: readonly string[];
}

export function inwardNumber(inward: string): number {
  return (inward.charCodeAt(0) - 48) * 676 + (inward.charCodeAt(1) - 65) * 26 + (inward.charCodeAt(2) - 65);
}

export function inwardText(code: number): string {
  const digit = Math.floor(code / 676);
  const letters = code % 676;
  return String.fromCharCode(48 + digit, 65 + Math.floor(letters / 26), 65 + (letters % 26));
}

/** The postcode for an id from the index, e.g. "SW1A 1AA". */
export function postcodeText(outwardCodes: readonly string[], packed: number): string {
  return `${outwardCodes[packed >>> 16] ?? '?'} ${inwardText(packed & 0xffff)}`;
}

/** The Float32 position the index stores, so the writer's tree and the reader's coordinates agree exactly. */
function float32Degrees(units: number): number {
  return Math.fround(units / 1e5);
}

/** Orders the records as a finished KDBush tree, sorted by input order within each leaf. */
export function kdOrder(columns: PostcodeColumns): Uint32Array {
  const tree = new KDBush(columns.count, POSTCODE_NODE_SIZE, Float32Array);
  for (let i = 0; i < columns.count; i++) {
    tree.add(float32Degrees(columns.lngUnits[i] ?? 0), float32Degrees(columns.latUnits[i] ?? 0));
  }
  tree.finish();
  const order = Uint32Array.from(tree.ids);
  const stack: [number, number][] = [[0, columns.count - 1]];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const [left, right] = node;
    if (right - left <= POSTCODE_NODE_SIZE) {
      order.subarray(left, right + 1).sort();
      continue;
    }
    const middle = (left + right) >> 1;
    stack.push([left, middle - 1], [middle + 1, right]);
  }
  return order;
}

class ByteWriter {
  private bytes = new Uint8Array(1 << 20);
  length = 0;

  private reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + extra));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  u8(value: number): void {
    this.reserve(1);
    this.bytes[this.length++] = value;
  }

  u16(value: number): void {
    this.u8(value & 0xff);
    this.u8(value >>> 8);
  }

  u32(value: number): void {
    this.u16(value & 0xffff);
    this.u16(value >>> 16);
  }

  ascii(text: string): void {
    for (let i = 0; i < text.length; i++) this.u8(text.charCodeAt(i));
  }

  varint(value: number): void {
    let rest = value;
    while (rest >= 128) {
      this.u8((rest & 127) | 128);
      rest = Math.floor(rest / 128);
    }
    this.u8(rest);
  }

  patchU32(at: number, value: number): void {
    this.bytes[at] = value & 0xff;
    this.bytes[at + 1] = (value >>> 8) & 0xff;
    this.bytes[at + 2] = (value >>> 16) & 0xff;
    this.bytes[at + 3] = value >>> 24;
  }

  result(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

const zigzag = (value: number) => (value < 0 ? -2 * value - 1 : 2 * value);

/** Serialises postcodes in KDBush order (uncompressed; the caller compresses). */
export function encodePostcodeFile(columns: PostcodeColumns): Uint8Array {
  const order = kdOrder(columns);
  const out = new ByteWriter();
  out.ascii(MAGIC);
  out.u8(VERSION);
  out.u8(0);
  out.u16(POSTCODE_NODE_SIZE);
  out.u32(columns.count);
  const table = columns.outwardCodes.join('\n');
  out.u32(table.length);
  out.ascii(table);
  const sources: ArrayLike<number>[] = [
    columns.latUnits,
    columns.lngUnits,
    columns.outwardIndex,
    columns.inwardCode,
  ];
  for (const source of sources) {
    const lengthAt = out.length;
    out.u32(0);
    let previous = 0;
    for (const i of order) {
      const value = source[i] ?? 0;
      out.varint(zigzag(value - previous));
      previous = value;
    }
    out.patchU32(lengthAt, out.length - lengthAt - 4);
  }
  return out.result();
}

/**
 * Reads a postcode file pushed in chunks of any size (as they are read from disk, so the whole file is never
 * in memory) into a ready KDBush index. `finish` throws on a file that is not one
 * (wrong magic, version or length): the data ships with the code, so that is a packaging bug.
 */
export class PostcodeFileReader {
  private header = new Uint8Array(16);
  private headerLength = 0;
  private table: Uint8Array | undefined;
  private tableLength = 0;
  private ids: Uint32Array | undefined;
  private coords: Float32Array | undefined;
  private data: ArrayBufferLike | undefined;
  private count = 0;
  private column = 0;
  private inColumn = false; // false while the column's u32 byte length is read
  private columnLength = 0;
  private lengthBytes = 0;
  private columnBytesLeft = 0;
  private record = 0;
  private value = 0;
  private raw = 0;
  private scale = 1;

  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.table === undefined) at = this.readHeader(chunk, at);
      else if (this.tableLength < this.table.length) {
        const take = Math.min(this.table.length - this.tableLength, chunk.length - at);
        this.table.set(chunk.subarray(at, at + take), this.tableLength);
        this.tableLength += take;
        at += take;
      } else at = this.readColumns(chunk, at);
    }
  }

  private readHeader(chunk: Uint8Array, start: number): number {
    const take = Math.min(16 - this.headerLength, chunk.length - start);
    this.header.set(chunk.subarray(start, start + take), this.headerLength);
    this.headerLength += take;
    if (this.headerLength === 16) {
      const view = new DataView(this.header.buffer);
      if (String.fromCharCode(...this.header.subarray(0, 4)) !== MAGIC || this.header[4] !== VERSION) {
        throw new Error('not a Milepost postcode file (version 1)');
      }
      this.count = view.getUint32(8, true);
      // KDBush writes its own header; the arrays are filled in place and the finished index opened over them.
      const blank = new KDBush(this.count, view.getUint16(6, true), Float32Array);
      if (!(blank.ids instanceof Uint32Array) || !(blank.coords instanceof Float32Array)) {
        throw new Error('a postcode file needs at least 65,536 records');
      }
      this.ids = blank.ids;
      this.coords = blank.coords;
      this.data = blank.data;
      this.table = new Uint8Array(view.getUint32(12, true));
    }
    return start + take;
  }

  private readColumns(chunk: Uint8Array, start: number): number {
    const ids = this.ids;
    const coords = this.coords;
    if (ids === undefined || coords === undefined || this.column === 4)
      throw new Error('postcode file has trailing bytes');
    let at = start;
    if (!this.inColumn) {
      this.columnLength += (chunk[at++] ?? 0) * 2 ** (8 * this.lengthBytes);
      this.lengthBytes++;
      if (this.lengthBytes === 4) {
        this.inColumn = true;
        this.columnBytesLeft = this.columnLength;
        this.columnLength = 0;
        this.lengthBytes = 0;
        this.record = 0;
        this.value = 0;
      }
      return at;
    }
    // The hot loop: zigzag varints of differences, written straight into the index arrays.
    const end = Math.min(chunk.length, at + this.columnBytesLeft);
    const column = this.column;
    let { record, value, raw, scale } = this;
    while (at < end) {
      const byte = chunk[at++] ?? 0;
      raw += (byte & 127) * scale;
      if (byte >= 128) {
        scale *= 128;
        continue;
      }
      value += raw % 2 === 1 ? -(raw + 1) / 2 : raw / 2;
      raw = 0;
      scale = 1;
      if (column === 0)
        coords[2 * record + 1] = value / 1e5; // latitude; Float32 storage rounds as the writer did
      else if (column === 1)
        coords[2 * record] = value / 1e5; // longitude
      else if (column === 2)
        ids[record] = value * 65536; // outward-code number
      else ids[record] = (ids[record] ?? 0) + value; // inward-code number
      record++;
    }
    this.columnBytesLeft -= at - start;
    this.record = record;
    this.value = value;
    this.raw = raw;
    this.scale = scale;
    if (this.columnBytesLeft === 0) {
      if (record !== this.count || raw !== 0) throw new Error('postcode file column has the wrong length');
      this.column++;
      this.inColumn = false;
    }
    return at;
  }

  finish(): PostcodeIndex {
    if (this.column !== 4 || this.data === undefined || this.table === undefined) {
      throw new Error('postcode file is truncated');
    }
    const outwardCodes = new TextDecoder('ascii').decode(this.table).split('\n');
    return { index: KDBush.from(this.data), outwardCodes };
  }
}

/** Reads a whole uncompressed postcode file (see PostcodeFileReader). */
export function readPostcodeFile(bytes: Uint8Array): PostcodeIndex {
  const reader = new PostcodeFileReader();
  reader.push(bytes);
  return reader.finish();
}
