/**
 * Which parts of the map have any postcode at all, on a grid of 0.05° cells built from the postcode
 * positions. It answers "could a postcode lie within this distance?" with no false negatives, so the
 * nearest-postcode search is skipped where it could only come back empty: Northern Ireland, France, the
 * open sea. Without it such a search expands much of the tree (~150 µs instead of ~1 µs).
 */
const CELL_DEGREES = 0.05;
/**
 * Fewer metres than a degree of latitude, or of longitude at the equator, has on the sphere geokdbush measures
 * with (111,195 m) or on the ellipsoid (110,574 m and more): so the window never falls short of the circle.
 */
const METRES_PER_DEGREE = 110_000;

export interface Coverage {
  /** False only if no point of the set lies within `metres` of (lat, lng). */
  mayHaveWithin(lat: number, lng: number, metres: number): boolean;
}

/** Builds the grid from positions interleaved as [lng, lat] (KDBush's order). */
export function createCoverage(lngLat: ArrayLike<number>): Coverage {
  let minLat = Infinity;
  let maxLat = -Infinity;
  let minLng = Infinity;
  let maxLng = -Infinity;
  for (let k = 0; k + 1 < lngLat.length; k += 2) {
    const lng = lngLat[k] ?? NaN;
    const lat = lngLat[k + 1] ?? NaN;
    if (lat < minLat) minLat = lat;
    if (lat > maxLat) maxLat = lat;
    if (lng < minLng) minLng = lng;
    if (lng > maxLng) maxLng = lng;
  }
  if (!(minLat <= maxLat && minLng <= maxLng)) return { mayHaveWithin: () => false };
  const rows = Math.floor((maxLat - minLat) / CELL_DEGREES) + 1;
  const columns = Math.floor((maxLng - minLng) / CELL_DEGREES) + 1;
  const occupied = new Uint8Array(rows * columns);
  for (let k = 0; k + 1 < lngLat.length; k += 2) {
    const row = Math.floor(((lngLat[k + 1] ?? minLat) - minLat) / CELL_DEGREES);
    const column = Math.floor(((lngLat[k] ?? minLng) - minLng) / CELL_DEGREES);
    occupied[row * columns + column] = 1;
  }

  return {
    mayHaveWithin(lat, lng, metres) {
      const dLat = metres / METRES_PER_DEGREE;
      // Longitude degrees shrink towards the poles: take the window's poleward edge, so the box still
      // holds the whole circle.
      const polewardCos = Math.cos((Math.min(90, Math.abs(lat) + dLat) * Math.PI) / 180);
      const dLng = polewardCos <= 0.01 ? 360 : metres / (METRES_PER_DEGREE * polewardCos);
      const firstRow = Math.max(0, Math.floor((lat - dLat - minLat) / CELL_DEGREES));
      const lastRow = Math.min(rows - 1, Math.floor((lat + dLat - minLat) / CELL_DEGREES));
      const firstColumn = Math.max(0, Math.floor((lng - dLng - minLng) / CELL_DEGREES));
      const lastColumn = Math.min(columns - 1, Math.floor((lng + dLng - minLng) / CELL_DEGREES));
      for (let row = firstRow; row <= lastRow; row++) {
        for (let column = firstColumn; column <= lastColumn; column++) {
          if (occupied[row * columns + column] === 1) return true;
        }
      }
      return false;
    },
  };
}
