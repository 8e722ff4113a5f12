/**
 * The outline of the United Kingdom and Ireland that the web app's maps draw (web/gb-outline.ts): Natural
 * Earth 1:50m from the world-atlas package, cut to the two countries, read from disk once per process.
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

let rings: readonly OutlineRing[] | undefined;

function ringOf(coordinates: ReadonlyArray<readonly number[]>): OutlineRing {
  const points = new Float64Array(coordinates.length * 2);
  const mercator = new Float64Array(coordinates.length * 2);
  let west = Infinity;
  let east = -Infinity;
  let south = Infinity;
  let north = -Infinity;
  coordinates.forEach(([lng = 0, lat = 0], i) => {
    points[2 * i] = lng;
    points[2 * i + 1] = lat;
    mercator[2 * i] = (lng * Math.PI) / 180;
    mercator[2 * i + 1] = Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
    west = Math.min(west, lng);
    east = Math.max(east, lng);
    south = Math.min(south, lat);
    north = Math.max(north, lat);
  });
  return { points, mercator, west, east, south, north };
}

/** The rings of the United Kingdom and Ireland, loaded on first use. */
export function ukOutline(): readonly OutlineRing[] {
  if (rings !== undefined) return rings;
  const path = require.resolve('world-atlas/countries-50m.json');
  const topology = JSON.parse(readFileSync(path, 'utf8')) as Topology;
  const countries = topology.objects['countries'] as GeometryCollection | undefined;
  if (countries?.type !== 'GeometryCollection') throw new Error(`${path} has no countries collection`);
  const found: OutlineRing[] = [];
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
    for (const ring of polygons.flat()) found.push(ringOf(ring));
  }
  if (found.length === 0) throw new Error(`${path} has none of the countries ${[...COUNTRY_IDS].join(', ')}`);
  rings = found;
  return rings;
}
