/**
 * A statement's routes as a render thread is handed them: every point's longitude and latitude in one
 * `Float64Array`, each route's point count in a `Uint32Array`.
 *
 * NOTE: a task reaches its thread by the structured clone, which writes and reads each of a month's
 * 2,000-odd `[lng, lat]` arrays as an object of its own: 1–2 ms of the pool's thread to write and 3–5 ms of
 * the render thread's to read for every statement, on the same cores that render. Two typed arrays are two
 * copies of their bytes.
 */
import type { DocumentInput, LonLat } from '../document-content.ts';

export interface PackedRoutes {
  readonly points: Float64Array;
  readonly lengths: Uint32Array;
}

/** A document as a thread is handed it: a statement's routes packed, the rest as it is. */
export interface PackedDocument {
  readonly input: DocumentInput;
  readonly routes?: PackedRoutes;
}

export function packRoutes(routes: ReadonlyArray<readonly LonLat[]>): PackedRoutes {
  const lengths = new Uint32Array(routes.length);
  let count = 0;
  routes.forEach((route, r) => {
    lengths[r] = route.length;
    count += route.length;
  });
  const points = new Float64Array(2 * count);
  let at = 0;
  for (const route of routes)
    for (const point of route) {
      // Anything not a number (which the map leaves out, as it leaves out NaN) is packed as NaN.
      points[at] = typeof point[0] === 'number' ? point[0] : NaN;
      points[at + 1] = typeof point[1] === 'number' ? point[1] : NaN;
      at += 2;
    }
  return { points, lengths };
}

export function unpackRoutes(packed: PackedRoutes): LonLat[][] {
  const routes: LonLat[][] = [];
  let at = 0;
  for (const length of packed.lengths) {
    const route: LonLat[] = [];
    for (let i = 0; i < length; i += 1, at += 2)
      route.push([packed.points[at] ?? NaN, packed.points[at + 1] ?? NaN]);
    routes.push(route);
  }
  return routes;
}

/** The document with a statement's routes taken out and packed. */
export function packDocument(input: DocumentInput): PackedDocument {
  if (input.kind !== 'statement') return { input };
  return {
    input: { kind: 'statement', content: { ...input.content, routes: [] } },
    routes: packRoutes(input.content.routes),
  };
}

/** The document as it was before `packDocument`. */
export function unpackDocument(packed: PackedDocument): DocumentInput {
  const { input, routes } = packed;
  if (input.kind !== 'statement' || routes === undefined) return input;
  return { kind: 'statement', content: { ...input.content, routes: unpackRoutes(routes) } };
}
