import type { Bounds } from './places.ts';

/*
 * The geometry of the offline route map: Web Mercator, the view fitted to a route, SVG paths of the route
 * and the outline, the overview inset and where the ends' names go. Pure: numbers in, numbers out.
 */

const EARTH_RADIUS_METRES = 6_371_008.8;
/** The least ground a map spans, so a short hop is not drawn at street scale over a blank coast. */
const MIN_SPAN_METRES = 3_000;
/** Room around the route, as a share of its extent on each side. */
const PADDING_SHARE = 0.12;
/** Points closer than this on screen are dropped: the eye cannot tell, and the DOM stays small. */
const MIN_STEP_PX = 0.75;

/** Web Mercator in radians: x east, y north (the same projection as every tiled map). */
const mercatorX = (lng: number): number => (lng * Math.PI) / 180;
const mercatorY = (lat: number): number => Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));

export interface View {
  readonly minX: number;
  readonly maxY: number;
  /** Pixels per Mercator unit. */
  readonly scale: number;
  readonly width: number;
  readonly height: number;
}

/** The view that holds the route with some padding, at least MIN_SPAN_METRES across, at the box's aspect. */
export function fitView(points: ArrayLike<number>, width: number, height: number): View {
  let minX = Infinity;
  let maxX = -Infinity;
  let minY = Infinity;
  let maxY = -Infinity;
  let sumLat = 0;
  for (let i = 0; i + 1 < points.length; i += 2) {
    const lat = points[i] ?? 0;
    const x = mercatorX(points[i + 1] ?? 0);
    const y = mercatorY(lat);
    sumLat += lat;
    minX = Math.min(minX, x);
    maxX = Math.max(maxX, x);
    minY = Math.min(minY, y);
    maxY = Math.max(maxY, y);
  }
  const meanLat = sumLat / Math.max(1, points.length / 2);
  // NOTE: a Mercator unit covers R·cos(latitude) metres of ground, so the least span depends on where we are.
  const minSpan = MIN_SPAN_METRES / (EARTH_RADIUS_METRES * Math.cos((meanLat * Math.PI) / 180));
  let spanX = Math.max(maxX - minX, minSpan) * (1 + 2 * PADDING_SHARE);
  let spanY = Math.max(maxY - minY, minSpan) * (1 + 2 * PADDING_SHARE);
  // Widen whichever side is short of the box's aspect, keeping the route centred.
  if (spanX / spanY < width / height) spanX = (spanY * width) / height;
  else spanY = (spanX * height) / width;
  const centreX = (minX + maxX) / 2;
  const centreY = (minY + maxY) / 2;
  return { minX: centreX - spanX / 2, maxY: centreY + spanY / 2, scale: width / spanX, width, height };
}

/** Degrees from Web Mercator radians. */
const lngOf = (x: number): number => (x * 180) / Math.PI;
const latOf = (y: number): number => ((2 * Math.atan(Math.exp(y)) - Math.PI / 2) * 180) / Math.PI;

/** The view's box in degrees. */
export const boundsOf = (view: View): Bounds => ({
  west: lngOf(view.minX),
  east: lngOf(view.minX + view.width / view.scale),
  north: latOf(view.maxY),
  south: latOf(view.maxY - view.height / view.scale),
});

/** Ground metres a pixel covers at the view's centre (a Mercator unit is R·cos(latitude) metres there). */
export function metresPerPx(view: View): number {
  const centreLat = latOf(view.maxY - view.height / view.scale / 2);
  return (EARTH_RADIUS_METRES * Math.cos((centreLat * Math.PI) / 180)) / view.scale;
}

export const toPx = (view: View, lat: number, lng: number): [number, number] => [
  (mercatorX(lng) - view.minX) * view.scale,
  (view.maxY - mercatorY(lat)) * view.scale,
];

/** The point under a pixel of the view, as `[lat, lng]` in degrees (the inverse of `toPx`). */
export const fromPx = (view: View, x: number, y: number): [number, number] => [
  latOf(view.maxY - y / view.scale),
  lngOf(view.minX + x / view.scale),
];

/** A view of the box's size centred on a point, `spanMetres` of ground across at that latitude. */
export function viewAround(
  lat: number,
  lng: number,
  spanMetres: number,
  width: number,
  height: number,
): View {
  const spanX = spanMetres / (EARTH_RADIUS_METRES * Math.cos((lat * Math.PI) / 180));
  const scale = width / spanX;
  return {
    minX: mercatorX(lng) - spanX / 2,
    maxY: mercatorY(lat) + height / scale / 2,
    scale,
    width,
    height,
  };
}

export const round = (n: number): number => Math.round(n * 10) / 10;

/** An SVG path through points given by `at(i)` for i < count, dropping points too close to draw apart. */
export function pathOf(count: number, at: (i: number) => [number, number], closed: boolean): string {
  const parts: string[] = [];
  let lastX = NaN;
  let lastY = NaN;
  for (let i = 0; i < count; i++) {
    const [x, y] = at(i);
    if (i > 0 && i < count - 1 && Math.hypot(x - lastX, y - lastY) < MIN_STEP_PX) continue;
    parts.push(`${parts.length === 0 ? 'M' : 'L'}${round(x)} ${round(y)}`);
    lastX = x;
    lastY = y;
  }
  return parts.join('') + (closed ? 'Z' : '');
}

/** The outline's rings that reach into the view, as one path (rings wholly outside are left out). */
export function outlinePath(rings: ReadonlyArray<ReadonlyArray<number>>, view: View): string {
  const parts: string[] = [];
  for (const ring of rings) {
    const count = ring.length / 2;
    const at = (i: number) => toPx(view, ring[2 * i + 1] ?? 0, ring[2 * i] ?? 0);
    let minX = Infinity;
    let maxX = -Infinity;
    let minY = Infinity;
    let maxY = -Infinity;
    for (let i = 0; i < count; i++) {
      const [x, y] = at(i);
      minX = Math.min(minX, x);
      maxX = Math.max(maxX, x);
      minY = Math.min(minY, y);
      maxY = Math.max(maxY, y);
    }
    if (maxX < 0 || minX > view.width || maxY < 0 || minY > view.height) continue;
    parts.push(pathOf(count, at, true));
  }
  return parts.join('');
}

/** The outline's extent, `[minLat, minLng, maxLat, maxLng]` (as a two-point route for fitView). */
function extentOf(rings: ReadonlyArray<ReadonlyArray<number>>): number[] {
  let minLng = Infinity;
  let maxLng = -Infinity;
  let minLat = Infinity;
  let maxLat = -Infinity;
  for (const ring of rings)
    for (let i = 0; i + 1 < ring.length; i += 2) {
      minLng = Math.min(minLng, ring[i] ?? 0);
      maxLng = Math.max(maxLng, ring[i] ?? 0);
      minLat = Math.min(minLat, ring[i + 1] ?? 0);
      maxLat = Math.max(maxLat, ring[i + 1] ?? 0);
    }
  return [minLat, minLng, maxLat, maxLng];
}

/**
 * A small map of the whole outline with the main view marked on it, so a route wholly inland (all land
 * at its zoom) still shows where in Britain it was.
 */
export function overview(rings: ReadonlyArray<ReadonlyArray<number>>, view: View, widthPx: number) {
  const width = Math.round(Math.min(96, widthPx * 0.2));
  const height = Math.round(width * 1.5);
  const whole = fitView(extentOf(rings), width, height);
  const corner = (x: number, y: number) => [(x - whole.minX) * whole.scale, (whole.maxY - y) * whole.scale];
  const [left = 0, top = 0] = corner(view.minX, view.maxY);
  const [right = 0, bottom = 0] = corner(
    view.minX + view.width / view.scale,
    view.maxY - view.height / view.scale,
  );
  // At least a few pixels, so a town-sized view still shows as a mark.
  const size = (a: number, b: number) => Math.max(4, b - a);
  return {
    x: widthPx - width - 8,
    width,
    height,
    land: outlinePath(rings, whole),
    mark: {
      x: round(left),
      y: round(top),
      width: round(size(left, right)),
      height: round(size(top, bottom)),
    },
  };
}

/**
 * Where a place's name goes beside its marker: on the side away from the other marker (start below and
 * end above when they nearly meet, as on a round trip), kept inside the box.
 */
export function labelAt(
  [x, y]: [number, number],
  other: [number, number],
  near: 'above' | 'below',
  width: number,
  height: number,
): { x: number; y: number; anchor: 'start' | 'middle' | 'end' } {
  const anchor = x < width * 0.25 ? 'start' : x > width * 0.75 ? 'end' : 'middle';
  let side = Math.hypot(x - other[0], y - other[1]) < 40 ? near : y < other[1] ? 'above' : 'below';
  if (side === 'above' && y < 28) side = 'below';
  else if (side === 'below' && y > height - 28) side = 'above';
  return {
    x: anchor === 'start' ? x - 4 : anchor === 'end' ? x + 4 : x,
    y: side === 'below' ? y + 24 : y - 13,
    anchor,
  };
}

/** A rectangle on the map, in pixels. */
export interface Rect {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

export const overlaps = (a: Rect, b: Rect): boolean =>
  a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
