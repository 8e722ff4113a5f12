/**
 * The outline of the United Kingdom and Ireland that the web app's maps draw (web/gb-outline.ts): Natural
 * Earth 1:50m from the world-atlas package, cut to the two countries, read from disk once per process and
 * kept in memory that render threads share.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { GeometryCollection, Topology } from 'topojson-specification';

const require = createRequire(import.meta.url);
// NOTE: topojson-client ships a UMD bundle whose exports Node's ESM loader cannot name; require reads it.
const { feature } = require('topojson-client') as typeof import('topojson-client');

/** Natural Earth's United Kingdom and Ireland (ISO 3166 numeric), as the web app's outline. */
const COUNTRY_IDS = new Set(['826', '372']);

/** A ring as `[lng0, lat0, lng1, lat1, …]` in degrees, with its bounding box. */
export interface OutlineRing {
  readonly points: Float64Array;
  /** The same points in Web Mercator radians `[x0, y0, x1, y1, …]`, projected once. */
  readonly mercator: Float64Array;
  readonly west: number;
  readonly east: number;
  readonly south: number;
  readonly north: number;
}

/** Numbers before a packed outline's rings: their count. */
const HEADER = 1;
/** Numbers a ring's entry takes in the packed index: its point count, west, east, south, north. */
const ENTRY = 5;

/*
 * NOTE: the packed outline is one Float64Array on a SharedArrayBuffer: `[ringCount, then per ring its point
 * count, west, east, south, north, then per ring its points and its Mercator points]`. The world's
 * topology (750 kB of JSON) is parsed once, by the process that starts the render threads; each thread is
 * handed the packed outline (43 kB, shared, not copied) instead of parsing the world into its own heap,
 * which grew each thread's heap by about 8 MB for the 1,301 points it keeps.
 */
let packed: Float64Array | undefined;
let rings: readonly OutlineRing[] | undefined;

/** The countries' rings as `[lng, lat]` lists, from world-atlas's topology. */
function readRings(): Array<ReadonlyArray<readonly number[]>> {
  const path = require.resolve('world-atlas/countries-50m.json');
  const topology = JSON.parse(readFileSync(path, 'utf8')) as Topology;
  const countries = topology.objects['countries'] as GeometryCollection | undefined;
  if (countries?.type !== 'GeometryCollection') throw new Error(`${path} has no countries collection`);
  const found: Array<ReadonlyArray<readonly number[]>> = [];
  for (const geometry of countries.geometries) {
    if (!COUNTRY_IDS.has(String(geometry.id))) continue;
    const found1 = feature(topology, geometry);
    const shape = 'geometry' in found1 ? found1.geometry : null;
    const polygons =
      shape?.type === 'Polygon'
        ? [shape.coordinates]
        : shape?.type === 'MultiPolygon'
          ? shape.coordinates
          : [];
    found.push(...polygons.flat());
  }
  if (found.length === 0) throw new Error(`${path} has none of the countries ${[...COUNTRY_IDS].join(', ')}`);
  return found;
}

function pack(found: ReadonlyArray<ReadonlyArray<readonly number[]>>): Float64Array {
  const pointCount = found.reduce((sum, ring) => sum + ring.length, 0);
  const length = HEADER + ENTRY * found.length + 4 * pointCount;
  const out = new Float64Array(new SharedArrayBuffer(length * Float64Array.BYTES_PER_ELEMENT));
  out[0] = found.length;
  let at = HEADER + ENTRY * found.length;
  found.forEach((ring, r) => {
    let west = Infinity;
    let east = -Infinity;
    let south = Infinity;
    let north = -Infinity;
    const mercatorAt = at + 2 * ring.length;
    ring.forEach(([lng = 0, lat = 0], i) => {
      out[at + 2 * i] = lng;
      out[at + 2 * i + 1] = lat;
      out[mercatorAt + 2 * i] = (lng * Math.PI) / 180;
      out[mercatorAt + 2 * i + 1] = Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
      west = Math.min(west, lng);
      east = Math.max(east, lng);
      south = Math.min(south, lat);
      north = Math.max(north, lat);
    });
    out.set([ring.length, west, east, south, north], HEADER + ENTRY * r);
    at += 4 * ring.length;
  });
  return out;
}

/** The rings of a packed outline, as views on it (nothing copied). */
function unpack(data: Float64Array): OutlineRing[] {
  const count = data[0] ?? 0;
  const out: OutlineRing[] = [];
  let at = HEADER + ENTRY * count;
  for (let r = 0; r < count; r += 1) {
    const [points = 0, west = 0, east = 0, south = 0, north = 0] = data.subarray(
      HEADER + ENTRY * r,
      HEADER + ENTRY * (r + 1),
    );
    out.push({
      points: data.subarray(at, at + 2 * points),
      mercator: data.subarray(at + 2 * points, at + 4 * points),
      west,
      east,
      south,
      north,
    });
    at += 4 * points;
  }
  return out;
}

/** The outline packed in shared memory, for a render thread's `useUkOutline`; read on first use. */
export function packedUkOutline(): Float64Array {
  packed ??= pack(readRings());
  return packed;
}

/** Has this thread draw from an outline another thread packed, instead of reading its own. */
export function useUkOutline(shared: Float64Array): void {
  if (packed !== undefined) return;
  packed = shared;
}

/** The rings of the United Kingdom and Ireland, loaded on first use. */
export function ukOutline(): readonly OutlineRing[] {
  rings ??= unpack(packedUkOutline());
  return rings;
}
