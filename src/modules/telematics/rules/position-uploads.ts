/**
 * GPX 1.1 and GeoJSON track uploads → the positions a JSON batch would carry, so that both go through the
 * same per-position checks. Pure: no I/O; expected failures are results, not exceptions.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** A track point as a position: what GPX and GeoJSON carry (an ISO time, WGS84 degrees). */
export interface TrackPosition {
  readonly time: string;
  /** NaN when the document's value is not a number: refused as `out_of_range`. */
  readonly lat: number;
  readonly lon: number;
}

export type UploadResult =
  | { readonly ok: true; readonly positions: TrackPosition[] }
  | {
      readonly ok: false;
      /** `MALFORMED_BODY` when the document cannot be read at all, else `VALIDATION_FAILED`. */
      readonly kind: 'malformed' | 'invalid';
      /** JSON pointer into the request (`/body`, `/body/features/0/properties/coordTimes`). */
      readonly path: string;
      readonly message: string;
    };

const invalid = (path: string, message: string): UploadResult => ({
  ok: false,
  kind: 'invalid',
  path,
  message,
});
const malformed = (message: string): UploadResult => ({
  ok: false,
  kind: 'malformed',
  path: '/body',
  message,
});

// NOTE: a DOCTYPE is how XML declares entities (the billion-laughs expansion, external entities that read
// files or URLs). GPX needs none, so any declaration refuses the document before a parser sees it.
const DECLARATION = /<!\s*(?:DOCTYPE|ENTITY|ELEMENT|ATTLIST|NOTATION)/i;
const XSD_DECIMAL = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*$/;

const gpxParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  isArray: (name) => name === 'trk' || name === 'trkseg' || name === 'trkpt',
});

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const arrayOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** An element's text: the string itself, or `#text` when the element also has attributes. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim();
  if (isRecord(value) && typeof value['#text'] === 'string') return value['#text'].trim();
  return undefined;
}

/** An `xsd:decimal` attribute as a number; NaN when absent or not a decimal (refused as out of range). */
function decimal(value: unknown): number {
  return typeof value === 'string' && XSD_DECIMAL.test(value) ? Number(value) : Number.NaN;
}

/**
 * The positions of a GPX 1.0/1.1 document: every `trkpt` of every `trk` and `trkseg`, in document order,
 * with `lat`, `lon` and `time` (routes, waypoints, elevation and extensions are ignored). A point without
 * a time or with an unreadable coordinate is kept, for the per-position checks to refuse by its index.
 * Refuses a document with a DOCTYPE, one that is not well-formed XML, one whose root is not `<gpx>`, and
 * one with no track point or more than `maxPositions`.
 */
export function positionsFromGpx(text: string, maxPositions: number): UploadResult {
  if (DECLARATION.test(text))
    return malformed('The GPX document must not contain a DOCTYPE or entity declarations');
  // NOTE: the parser alone reads a truncated or mismatched document without complaint, and a partial
  // track must not be stored as whole.
  const valid = XMLValidator.validate(text);
  if (valid !== true)
    return malformed(`The body is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  let document: unknown;
  try {
    document = gpxParser.parse(text);
  } catch (error) {
    return malformed(
      `The body is not readable XML: ${error instanceof Error ? error.message : 'parse error'}`,
    );
  }
  const root = isRecord(document) ? Object.keys(document)[0] : undefined;
  if (root !== 'gpx')
    return invalid(
      '/body',
      `is not a GPX document: the root element is ${root === undefined ? 'missing' : `<${root}>`}, not <gpx>`,
    );
  const gpx = isRecord(document) && isRecord(document['gpx']) ? document['gpx'] : {};
  const version = gpx['@_version'];
  if (version !== undefined && version !== '1.1' && version !== '1.0')
    return invalid('/body', `is GPX version ${JSON.stringify(version)}; 1.1 (or 1.0) is accepted`);
  const positions: TrackPosition[] = [];
  for (const trk of arrayOf(gpx['trk']))
    for (const seg of isRecord(trk) ? arrayOf(trk['trkseg']) : [])
      for (const point of isRecord(seg) ? arrayOf(seg['trkpt']) : []) {
        if (positions.length === maxPositions)
          return invalid('/body', `holds more than ${maxPositions.toLocaleString('en-GB')} track points`);
        const p = isRecord(point) ? point : {};
        positions.push({ time: textOf(p['time']) ?? '', lat: decimal(p['@_lat']), lon: decimal(p['@_lon']) });
      }
  if (positions.length === 0) return invalid('/body', 'has no track point (<trk><trkseg><trkpt>)');
  return { ok: true, positions };
}

/** A GeoJSON LineString Feature with one time per coordinate in `properties.coordTimes`. */
export interface TrackFeature {
  readonly type: 'Feature';
  readonly geometry: { readonly type: 'LineString'; readonly coordinates: ReadonlyArray<readonly number[]> };
  readonly properties: { readonly coordTimes: readonly string[] };
}
export type TrackGeoJson =
  TrackFeature | { readonly type: 'FeatureCollection'; readonly features: readonly TrackFeature[] };

/**
 * The positions of a GeoJSON Feature (LineString, `[lon, lat(, ele)]`, with `properties.coordTimes`, the
 * togeojson convention) or of a FeatureCollection of them, concatenated in order. Refuses a Feature whose
 * coordinates and times differ in number, and more than `maxPositions` in all.
 */
export function positionsFromGeoJson(document: TrackGeoJson, maxPositions: number): UploadResult {
  const features = document.type === 'Feature' ? [document] : document.features;
  const positions: TrackPosition[] = [];
  for (const [i, feature] of features.entries()) {
    const at = document.type === 'Feature' ? '/body' : `/body/features/${i}`;
    const { coordinates } = feature.geometry;
    const times = feature.properties.coordTimes;
    if (coordinates.length !== times.length)
      return invalid(
        `${at}/properties/coordTimes`,
        `must hold one time per coordinate (${coordinates.length} coordinates, ${times.length} times)`,
      );
    if (positions.length + coordinates.length > maxPositions)
      return invalid(at, `makes more than ${maxPositions.toLocaleString('en-GB')} positions`);
    coordinates.forEach((c, j) => {
      positions.push({ time: times[j] ?? '', lat: c[1] ?? Number.NaN, lon: c[0] ?? Number.NaN });
    });
  }
  if (positions.length === 0) return invalid('/body', 'has no coordinates');
  return { ok: true, positions };
}
