/**
 * Whether an uploaded logo may go on a company's documents. Pure: bytes in, a verdict out.
 *
 * A PNG must carry the PNG signature and decode in full (every chunk's CRC, the image data inflated)
 * within a size a logo needs; an SVG must be well-formed XML whose root is `svg` and which holds
 * nothing that runs or reaches out: no script, no event handler attribute, no `foreignObject`, no
 * reference outside the file (`href`, `url(…)`, CSS `@import`), no DOCTYPE or entity declarations
 * (entity expansion), no processing instruction but the XML declaration.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { PNG } from 'pngjs';

export type LogoMediaType = 'image/png' | 'image/svg+xml';
export const LOGO_MEDIA_TYPES: readonly LogoMediaType[] = ['image/png', 'image/svg+xml'];

/** The largest logo file accepted: 256 KiB. */
export const LOGO_MAX_BYTES = 262_144;
/** The largest side of a PNG logo in pixels: a logo printed at 300 dpi across a whole A4 width. */
export const LOGO_MAX_SIDE_PX = 2_600;
/**
 * The largest side of an SVG logo in user units. An SVG scales to any size, but its size is stored as a
 * PostgreSQL integer: a viewBox of 1e308 failed the insert with a 500.
 */
export const SVG_MAX_SIDE_UNITS = 2_147_483_647;

export interface CheckedLogo {
  readonly mediaType: LogoMediaType;
  readonly bytes: Uint8Array;
  readonly widthPx: number;
  readonly heightPx: number;
}

export type LogoCheck =
  { readonly ok: true; readonly logo: CheckedLogo } | { readonly ok: false; readonly reason: string };

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Checks a logo's bytes against its declared media type; the reason names what is wrong. */
export function checkLogo(mediaType: LogoMediaType, bytes: Uint8Array): LogoCheck {
  if (bytes.length === 0) return { ok: false, reason: 'the logo is empty' };
  if (bytes.length > LOGO_MAX_BYTES)
    return {
      ok: false,
      reason: `the logo is ${String(bytes.length)} bytes; at most ${String(LOGO_MAX_BYTES)} (256 KiB) are accepted`,
    };
  return mediaType === 'image/png' ? checkPng(bytes) : checkSvg(bytes);
}

function checkPng(bytes: Uint8Array): LogoCheck {
  if (bytes.length < 33 || PNG_SIGNATURE.some((b, i) => bytes[i] !== b))
    return { ok: false, reason: 'the logo is not a PNG image (it does not start with the PNG signature)' };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const firstChunk = String.fromCharCode(...bytes.subarray(12, 16));
  if (firstChunk !== 'IHDR') return { ok: false, reason: 'the PNG image has no header chunk (IHDR) first' };
  const widthPx = view.getUint32(16);
  const heightPx = view.getUint32(20);
  // NOTE: checked before decoding, so a small file that inflates to a huge image is refused unread.
  if (widthPx === 0 || heightPx === 0 || widthPx > LOGO_MAX_SIDE_PX || heightPx > LOGO_MAX_SIDE_PX)
    return {
      ok: false,
      reason: `the PNG image is ${String(widthPx)}×${String(heightPx)} pixels; each side must be 1 to ${String(LOGO_MAX_SIDE_PX)}`,
    };
  try {
    const decoded = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    if (decoded.width !== widthPx || decoded.height !== heightPx)
      return { ok: false, reason: 'the PNG image cannot be decoded (its size disagrees with its header)' };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: `the PNG image cannot be decoded (${detail})` };
  }
  return { ok: true, logo: { mediaType: 'image/png', bytes, widthPx, heightPx } };
}

type XmlNode = Record<string, unknown>;

const ATTRIBUTES = ':@';
const TEXT = '#text';
const COMMENT = '#comment';
const CDATA = '#cdata';

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  allowBooleanAttributes: true,
  parseAttributeValue: false,
  parseTagValue: false,
  processEntities: false,
  trimValues: false,
  commentPropName: COMMENT,
  cdataPropName: CDATA,
});

const localName = (name: string): string =>
  (name.includes(':') ? name.slice(name.indexOf(':') + 1) : name).toLowerCase();

/** A `url(…)` that is not a fragment of this file (`url(#gradient)`), or an `@import`. */
const OUTSIDE_CSS = /@import|url\(\s*(?!['"]?\s*#)/i;
const SCRIPT_URL = /^\s*(javascript|vbscript|data)\s*:/i;
const ANIMATING = new Set(['set', 'animate', 'animatemotion', 'animatetransform']);

/** What in one element makes the SVG unsafe, or undefined. */
function unsafeElement(tag: string, attributes: Readonly<Record<string, string>>): string | undefined {
  const name = localName(tag);
  if (name === 'script') return 'the SVG holds a script element';
  if (name === 'foreignobject') return 'the SVG holds a foreignObject element';
  for (const [attribute, value] of Object.entries(attributes)) {
    const attributeName = localName(attribute);
    if (attributeName.startsWith('on'))
      return `the SVG has an event handler attribute (${attribute} on <${tag}>)`;
    if (attributeName === 'href' && !value.trim().startsWith('#'))
      return `the SVG refers to something outside the file (${attribute}="${value.slice(0, 60)}" on <${tag}>)`;
    if (SCRIPT_URL.test(value)) return `the SVG has a script address (${attribute} on <${tag}>)`;
    if (OUTSIDE_CSS.test(value))
      return `the SVG refers to something outside the file (${attribute} on <${tag}> uses url() or @import)`;
    if (ANIMATING.has(name) && attributeName === 'attributename') {
      const target = localName(value.trim());
      if (target === 'href' || target.startsWith('on'))
        return `the SVG animates a link or event handler (${value} on <${tag}>)`;
    }
  }
  return undefined;
}

/** The first unsafe thing in the tree, depth first, or undefined. */
function unsafeIn(nodes: readonly XmlNode[], parentTag: string): string | undefined {
  for (const node of nodes) {
    const attributes = (node[ATTRIBUTES] ?? {}) as Record<string, string>;
    for (const [key, value] of Object.entries(node)) {
      if (key === ATTRIBUTES || key === COMMENT) continue;
      if (key === TEXT || key === CDATA) {
        const text = Array.isArray(value) ? JSON.stringify(value) : String(value);
        if (localName(parentTag) === 'style' && OUTSIDE_CSS.test(text))
          return 'the SVG refers to something outside the file (a style sheet uses url() or @import)';
        continue;
      }
      if (key.startsWith('?')) {
        if (key !== '?xml') return `the SVG holds a processing instruction (<${key}>)`;
        continue;
      }
      const reason = unsafeElement(key, attributes) ?? unsafeIn(value as XmlNode[], key);
      if (reason !== undefined) return reason;
    }
  }
  return undefined;
}

/**
 * How many elements a logo may draw once each `<use>` is replaced by the element it names: a few
 * hundred bytes of nested `<use>` can name a hundred million shapes, which the renderer's thread
 * expands until it runs out of memory, stalling every company's documents.
 */
const MAX_DRAWN_ELEMENTS = 20_000;

/** The elements (tag, attributes, children) of a parsed level, text and comments aside. */
function elementsOf(nodes: readonly XmlNode[]) {
  const elements: Array<{
    node: XmlNode;
    tag: string;
    attributes: Record<string, string>;
    children: XmlNode[];
  }> = [];
  for (const node of nodes)
    for (const [key, value] of Object.entries(node))
      if (key !== ATTRIBUTES && key !== COMMENT && key !== TEXT && key !== CDATA && !key.startsWith('?'))
        elements.push({
          node,
          tag: key,
          attributes: (node[ATTRIBUTES] ?? {}) as Record<string, string>,
          children: value as XmlNode[],
        });
  return elements;
}

/**
 * The elements the drawing holds with every `<use>` followed (counted once more each time it is used),
 * stopping as soon as the count passes the limit. A `<use>` that leads back to itself adds nothing: the
 * renderer draws none of it.
 */
function drawnElements(nodes: readonly XmlNode[]): number {
  const byId = new Map<string, readonly XmlNode[]>();
  const index = (level: readonly XmlNode[]): void => {
    for (const element of elementsOf(level)) {
      const id = element.attributes['id'];
      if (id !== undefined && !byId.has(id)) byId.set(id, [element.node]);
      index(element.children);
    }
  };
  index(nodes);
  const counted = new Map<readonly XmlNode[], number>();
  const following = new Set<readonly XmlNode[]>();
  const count = (level: readonly XmlNode[]): number => {
    const known = counted.get(level);
    if (known !== undefined) return known;
    let total = 0;
    for (const element of elementsOf(level)) {
      total += 1 + count(element.children);
      if (localName(element.tag) === 'use') {
        const href = Object.entries(element.attributes).find(([name]) => localName(name) === 'href')?.[1];
        const target = href === undefined ? undefined : byId.get(href.trim().slice(1));
        if (target !== undefined && !following.has(target)) {
          following.add(target);
          total += count(target);
          following.delete(target);
        }
      }
      if (total > MAX_DRAWN_ELEMENTS) break;
    }
    counted.set(level, total);
    return total;
  };
  return count(nodes);
}

/** The drawing's size in user units from `viewBox`, else from `width` and `height`. */
function svgSize(
  attributes: Readonly<Record<string, string>>,
): { widthPx: number; heightPx: number } | undefined {
  const box = attributes['viewBox']
    ?.trim()
    .split(/[\s,]+/)
    .map(Number);
  if (box?.length === 4 && box.every(Number.isFinite)) {
    const [, , width = 0, height = 0] = box;
    if (width > 0 && height > 0) return { widthPx: Math.ceil(width), heightPx: Math.ceil(height) };
  }
  const width = Number.parseFloat(attributes['width'] ?? '');
  const height = Number.parseFloat(attributes['height'] ?? '');
  if (width > 0 && height > 0 && Number.isFinite(width) && Number.isFinite(height))
    return { widthPx: Math.ceil(width), heightPx: Math.ceil(height) };
  return undefined;
}

function checkSvg(bytes: Uint8Array): LogoCheck {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, reason: 'the SVG is not UTF-8 text' };
  }
  // NOTE: a DOCTYPE can declare entities that expand without bound; a logo needs none.
  if (/<!DOCTYPE|<!ENTITY/i.test(text))
    return { ok: false, reason: 'the SVG declares a DOCTYPE or entities' };
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: false });
  if (valid !== true)
    return {
      ok: false,
      reason: `the SVG is not well-formed XML (line ${String(valid.err.line)}: ${valid.err.msg})`,
    };
  let nodes: XmlNode[];
  try {
    nodes = parser.parse(text) as XmlNode[];
  } catch (error) {
    // fast-xml-parser refuses elements nested past 100 levels, which a logo never needs.
    const detail = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: `the SVG cannot be read (${detail})` };
  }
  const elements = nodes.filter((node) =>
    Object.keys(node).some(
      (key) => key !== ATTRIBUTES && key !== COMMENT && key !== TEXT && !key.startsWith('?'),
    ),
  );
  const root = elements[0];
  const rootTag = root === undefined ? undefined : Object.keys(root).find((key) => key !== ATTRIBUTES);
  if (root === undefined || rootTag === undefined || elements.length !== 1 || localName(rootTag) !== 'svg')
    return { ok: false, reason: 'the file is not an SVG image (its root element is not <svg>)' };
  const reason = unsafeIn(nodes, '');
  if (reason !== undefined) return { ok: false, reason };
  if (drawnElements(nodes) > MAX_DRAWN_ELEMENTS)
    return {
      ok: false,
      reason: `the SVG draws more than ${String(MAX_DRAWN_ELEMENTS)} elements once its <use> references are followed`,
    };
  const size = svgSize((root[ATTRIBUTES] ?? {}) as Record<string, string>);
  if (size === undefined)
    return { ok: false, reason: 'the SVG has no size (give it a viewBox, or a width and height)' };
  if (size.widthPx > SVG_MAX_SIDE_UNITS || size.heightPx > SVG_MAX_SIDE_UNITS)
    return {
      ok: false,
      reason: `the SVG is ${String(size.widthPx)}×${String(size.heightPx)} units; each side must be at most ${String(SVG_MAX_SIDE_UNITS)}`,
    };
  return { ok: true, logo: { mediaType: 'image/svg+xml', bytes, ...size } };
}
