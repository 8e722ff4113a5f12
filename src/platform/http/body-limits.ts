import type { FastifyRequest } from 'fastify';
import type { FieldError } from '../errors.ts';

/**
 * What a JSON body may hold besides its bytes. A body's cost in memory is set by its shape, not its
 * size: 12 MB of `{"k0":0,"k1":0,…}` is a million keys, and parsing, checking and validating them takes
 * an API process past its 256 MB heap. Each is checked on the raw bytes before anything is parsed.
 */
export interface JsonBodyLimits {
  /** Objects and arrays inside one another; the outermost counts 1. */
  readonly depth: number;
  readonly keysPerObject: number;
  readonly itemsPerArray: number;
  /** Characters of one string or key (an escape sequence counts as one). */
  readonly stringCharacters: number;
  /** Values (objects, arrays, strings, numbers, literals) and keys in the whole body. */
  readonly tokens: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Where a route's JSON body legitimately holds more than `DEFAULT_JSON_BODY_LIMITS` allow (a batch):
     * the limits it needs instead; those left out keep the default.
     */
    jsonBodyLimits?: Partial<JsonBodyLimits>;
  }
}

/**
 * Every route's limits unless it declares its own: a few times what the largest body of those routes
 * holds (a policy: 5 levels deep, 50 items in an array, fields of at most 2,048 characters, about
 * 11,000 tokens with every list full), so that a body near the schema's bounds still reaches validation
 * and is answered field by field.
 */
export const DEFAULT_JSON_BODY_LIMITS: JsonBodyLimits = {
  depth: 16,
  keysPerObject: 128,
  itemsPerArray: 256,
  stringCharacters: 65_536,
  tokens: 50_000,
};

/** The JSON body limits of the route a request is for. */
export function jsonBodyLimitsOf(request: FastifyRequest): JsonBodyLimits {
  const declared = request.routeOptions.config.jsonBodyLimits;
  return declared === undefined ? DEFAULT_JSON_BODY_LIMITS : { ...DEFAULT_JSON_BODY_LIMITS, ...declared };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const LETTER_U = 0x75;

// What each byte is to the scanner.
const SCALAR = 0; // starts or continues a number or literal (or bytes the parser will refuse)
const STRING = 1;
const OPEN_OBJECT = 2;
const OPEN_ARRAY = 3;
const CLOSE = 4;
const COMMA = 5;
const SKIP = 6; // white space and colons
const KIND = new Uint8Array(256);
KIND[QUOTE] = STRING;
KIND[0x7b] = OPEN_OBJECT;
KIND[OPEN_BRACKET] = OPEN_ARRAY;
KIND[0x7d] = CLOSE;
KIND[0x5d] = CLOSE;
KIND[0x2c] = COMMA;
for (const c of ' \t\r\n:') KIND[c.charCodeAt(0)] = SKIP;

/** Bytes of a string read one by one before the rest is searched with `indexOf`: most keys and values are short. */
const SHORT_STRING_BYTES = 32;

const count = (n: number): string => n.toLocaleString('en-GB');
/** JSON-pointer escaping of one path segment (RFC 6901). */
const pointer = (segment: string): string => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * The index of the quote closing the string opened at `open`, or -1 when it is not closed. The first
 * bytes are read one by one (escapes skipped); past them, `indexOf` finds candidate quotes, and an odd
 * run of backslashes before one escapes it (each run is walked once, by the quote right after it).
 */
function closingQuote(bytes: Buffer, open: number): number {
  const n = bytes.length;
  const shortEnd = Math.min(n, open + 1 + SHORT_STRING_BYTES);
  let k = open + 1;
  while (k < shortEnd) {
    const b = bytes[k];
    if (b === QUOTE) return k;
    k += b === BACKSLASH ? 2 : 1;
  }
  if (k >= n) return -1;
  let at = bytes.indexOf(QUOTE, k);
  while (at !== -1) {
    let backslashes = 0;
    for (let j = at - 1; j > open && bytes[j] === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return at;
    at = bytes.indexOf(QUOTE, at + 1);
  }
  return -1;
}

/** Whether the string between `from` and `to` (its quotes excluded) has more than `limit` characters. */
function longerThan(bytes: Buffer, from: number, to: number, limit: number): boolean {
  // A character is at least one byte: most strings are settled by their length alone.
  if (to - from <= limit) return false;
  let characters = 0;
  for (let k = from; k < to;) {
    const b = bytes[k] ?? 0;
    if (b === BACKSLASH) k += bytes[k + 1] === LETTER_U ? 6 : 2;
    else {
      k++;
      // A UTF-8 continuation byte belongs to the character before it.
      if ((b & 0xc0) === 0x80) continue;
    }
    if (++characters > limit) return true;
  }
  return false;
}

/** Where the scanner stands: per open container (by depth, 1 = outermost), what is needed to name it. */
interface Containers {
  readonly isObject: Uint8Array;
  readonly members: Uint32Array;
  readonly keyStart: Int32Array;
  readonly keyEnd: Int32Array;
}

/** The JSON pointer of the container open at `depth`, or with `member`, of its current key or item. */
function pathTo(bytes: Buffer, at: Containers, root: string, depth: number, member: boolean): string {
  let path = root;
  const last = member ? depth : depth - 1;
  for (let d = 1; d <= last; d++) {
    if (at.isObject[d] === 1) {
      const text = bytes.toString('utf8', at.keyStart[d], at.keyEnd[d]);
      let key: string;
      try {
        key = JSON.parse(text) as string;
      } catch {
        key = text.slice(1, -1);
      }
      path += `/${pointer(key)}`;
    } else path += `/${String((at.members[d] ?? 1) - 1)}`;
  }
  return path;
}

/**
 * The first place where a JSON body goes beyond `limits`, as a field error rooted at `root`; undefined
 * when it stays within them. One pass over the bytes with no allocation per token (long strings are
 * skipped with `indexOf`), stopping at the first limit passed. It checks limits, not syntax: malformed
 * JSON is left for the parser to report.
 */
export function findJsonLimitBreach(
  bytes: Buffer,
  limits: JsonBodyLimits,
  root = '/body',
): FieldError | undefined {
  const n = bytes.length;
  const slots = limits.depth + 1;
  const at: Containers = {
    isObject: new Uint8Array(slots),
    members: new Uint32Array(slots),
    keyStart: new Int32Array(slots),
    keyEnd: new Int32Array(slots),
  };
  const { isObject, members, keyStart, keyEnd } = at;
  const tooMany = (): FieldError => ({
    path: root,
    message: `holds more than ${count(limits.tokens)} values and keys`,
  });
  const tooManyItems = (): FieldError => ({
    path: pathTo(bytes, at, root, depth, false),
    message: `has more than ${count(limits.itemsPerArray)} items`,
  });
  let depth = 0;
  let inObject = false;
  let expectingKey = false;
  let tokens = 0;

  let i = n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < n) {
    const kind = KIND[bytes[i] ?? 0];
    if (kind === SKIP) {
      i++;
      continue;
    }
    if (kind === COMMA) {
      expectingKey = inObject;
      i++;
      continue;
    }
    if (kind === CLOSE) {
      if (depth > 0) depth--;
      inObject = isObject[depth] === 1;
      expectingKey = false;
      i++;
      continue;
    }
    // A key or a value begins.
    if (++tokens > limits.tokens) return tooMany();
    if (expectingKey && kind === STRING) {
      expectingKey = false;
      const end = closingQuote(bytes, i);
      if (end === -1) return undefined;
      const keys = (members[depth] ?? 0) + 1;
      members[depth] = keys;
      keyStart[depth] = i;
      keyEnd[depth] = end + 1;
      if (keys > limits.keysPerObject)
        return {
          path: pathTo(bytes, at, root, depth, false),
          message: `has more than ${count(limits.keysPerObject)} keys`,
        };
      if (longerThan(bytes, i + 1, end, limits.stringCharacters))
        return {
          path: pathTo(bytes, at, root, depth, false),
          message: `names a field longer than ${count(limits.stringCharacters)} characters`,
        };
      i = end + 1;
      continue;
    }
    if (depth > 0 && !inObject) {
      const items = (members[depth] ?? 0) + 1;
      members[depth] = items;
      if (items > limits.itemsPerArray) return tooManyItems();
    }
    if (kind === STRING) {
      const end = closingQuote(bytes, i);
      if (end === -1) return undefined;
      if (longerThan(bytes, i + 1, end, limits.stringCharacters))
        return {
          path: pathTo(bytes, at, root, depth, true),
          message: `is longer than ${count(limits.stringCharacters)} characters`,
        };
      i = end + 1;
    } else if (kind === OPEN_OBJECT || kind === OPEN_ARRAY) {
      if (depth === limits.depth)
        return {
          path: pathTo(bytes, at, root, depth, true),
          message: `nests objects and arrays more than ${count(limits.depth)} deep`,
        };
      depth++;
      inObject = kind === OPEN_OBJECT;
      isObject[depth] = inObject ? 1 : 0;
      members[depth] = 0;
      expectingKey = inObject;
      i++;
    } else {
      // A number or a literal (true, false, null), or bytes the parser will refuse.
      i++;
      while (i < n && KIND[bytes[i] ?? 0] === SCALAR) i++;
    }
  }
  return undefined;
}

/** What a form body (`application/x-www-form-urlencoded`) may hold besides its bytes. */
export interface FormBodyLimits {
  readonly fields: number;
  /** Brackets in one field's name (`a[b][c]` has 2), for parsers that nest them. */
  readonly brackets: number;
}

/**
 * The first way a form body goes beyond `limits`, checked on its text before it is split into fields:
 * one pass, counting `&`-separated fields and the brackets (`[`, or `%5B` encoded) of each name.
 */
export function findFormLimitBreach(text: string, limits: FormBodyLimits): FieldError | undefined {
  let fields = 0;
  let brackets = 0;
  let inName = true;
  let empty = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x26 /* & */) {
      inName = true;
      empty = true;
      brackets = 0;
      continue;
    }
    if (empty) {
      empty = false;
      if (++fields > limits.fields)
        return { path: '/body', message: `has more than ${count(limits.fields)} fields` };
    }
    if (!inName) continue;
    if (c === 0x3d /* = */) inName = false;
    else if (
      c === OPEN_BRACKET ||
      (c === 0x25 /* % */ && text.charCodeAt(i + 1) === 0x35 && (text.charCodeAt(i + 2) | 0x20) === 0x62)
    ) {
      if (++brackets > limits.brackets)
        return {
          path: '/body',
          message: `has a field name with more than ${count(limits.brackets)} brackets`,
        };
    }
  }
  return undefined;
}
