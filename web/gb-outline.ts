import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { feature } from 'topojson-client';
import type { Plugin } from 'vite';

type Topology = Parameters<typeof feature>[0];

/** The module the app imports; Vite's convention marks the resolved id with \0 so no other plugin touches it. */
const VIRTUAL_ID = 'virtual:gb-outline';
const RESOLVED_ID = `\0${VIRTUAL_ID}`;

/** Natural Earth's United Kingdom and Ireland (ISO 3166 numeric): the coasts a route in GB can be near. */
const COUNTRY_IDS = new Set(['826', '372']);
/** 1e-4° is about 11 m: far finer than the 1:50m coastline itself, and a quarter of the digits. */
const DECIMALS = 4;

/**
 * `virtual:gb-outline`: the outline of the United Kingdom and Ireland from world-atlas (Natural Earth
 * 1:50m), cut out of the world at build time, so the app ships about 20 kB of rings instead of the
 * 750 kB world. The default export is a list of rings, each `[lng0, lat0, lng1, lat1, …]` in degrees.
 */
export function gbOutline(): Plugin {
  return {
    name: 'milepost:gb-outline',
    resolveId(id) {
      return id === VIRTUAL_ID ? RESOLVED_ID : undefined;
    },
    async load(id) {
      if (id !== RESOLVED_ID) return undefined;
      const path = createRequire(import.meta.url).resolve('world-atlas/countries-50m.json');
      this.addWatchFile(path);
      const topology = JSON.parse(await readFile(path, 'utf8')) as Topology;
      const countries = topology.objects['countries'];
      if (countries?.type !== 'GeometryCollection') throw new Error(`${path} has no countries collection`);
      const scale = 10 ** DECIMALS;
      const rings: number[][] = [];
      for (const geometry of countries.geometries) {
        if (!COUNTRY_IDS.has(String(geometry.id))) continue;
        const polygons =
          geometry.type === 'Polygon'
            ? [feature(topology, geometry).geometry.coordinates]
            : geometry.type === 'MultiPolygon'
              ? feature(topology, geometry).geometry.coordinates
              : [];
        for (const ring of polygons.flat())
          rings.push(
            ring.flatMap(([lng = 0, lat = 0]) => [
              Math.round(lng * scale) / scale,
              Math.round(lat * scale) / scale,
            ]),
          );
      }
      if (rings.length === 0)
        throw new Error(`${path} has none of the countries ${[...COUNTRY_IDS].join(', ')}`);
      return `export default ${JSON.stringify(rings)};\n`;
    },
  };
}
