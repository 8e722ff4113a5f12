import type { MapPlace } from './places.ts';
import { overlaps, toPx, type Rect, type View } from './outline-view.ts';

/** A place drawn beside the route: its dot and its name. */
export interface PlaceLabel {
  readonly name: string;
  readonly kind: MapPlace['kind'];
  readonly dot: [number, number];
  readonly x: number;
  readonly y: number;
  readonly anchor: 'start' | 'middle' | 'end';
}

/** How near the route (in pixels) a place must be, at least, to count as one it passes. */
const NEAR_ROUTE_PX = 28;
/** Town names are drawn at 13 px, localities at 12 px (styles.css: .route-map .near-town, .near-locality). */
const NAME_PX: Readonly<Record<MapPlace['kind'], number>> = { town: 13, locality: 12 };

let measuring: CanvasRenderingContext2D | null | undefined;
/** A name's width in pixels at a font size: measured where the browser can, else estimated. */
function textWidth(text: string, sizePx: number, weight: number): number {
  measuring ??= document.createElement('canvas').getContext('2d');
  if (measuring === null) return text.length * sizePx * 0.6;
  measuring.font = `${weight} ${sizePx}px ${getComputedStyle(document.body).fontFamily}`;
  return measuring.measureText(text).width;
}

/** The smallest distance in pixels from a point to a path given as points. */
function distanceToPath(x: number, y: number, path: ReadonlyArray<[number, number]>): number {
  let best = Infinity;
  for (let i = 0; i + 1 < path.length; i++) {
    const [ax, ay] = path[i] ?? [0, 0];
    const [bx, by] = path[i + 1] ?? [0, 0];
    const dx = bx - ax;
    const dy = by - ay;
    const length2 = dx * dx + dy * dy;
    const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / length2));
    best = Math.min(best, Math.hypot(x - (ax + t * dx), y - (ay + t * dy)));
  }
  return path.length === 1 ? Math.hypot(x - (path[0]?.[0] ?? 0), y - (path[0]?.[1] ?? 0)) : best;
}

/** Whether a segment crosses or lies in a rectangle (Liang–Barsky clipping). */
function segmentMeets([ax, ay]: [number, number], [bx, by]: [number, number], rect: Rect): boolean {
  let t0 = 0;
  let t1 = 1;
  const dx = bx - ax;
  const dy = by - ay;
  for (const [p, q] of [
    [-dx, ax - rect.left],
    [dx, rect.right - ax],
    [-dy, ay - rect.top],
    [dy, rect.bottom - ay],
  ] as const) {
    if (p === 0) {
      if (q < 0) return false;
    } else {
      const t = q / p;
      if (p < 0) t0 = Math.max(t0, t);
      else t1 = Math.min(t1, t);
      if (t0 > t1) return false;
    }
  }
  return true;
}

const pathMeets = (path: ReadonlyArray<[number, number]>, rect: Rect): boolean =>
  path.some((point, i) => {
    const next = path[i + 1];
    return next === undefined ? i === 0 && segmentMeets(point, point, rect) : segmentMeets(point, next, rect);
  });

/**
 * The places the route passes near, named where their names fit: in the gazetteer's order (largest towns
 * first), each within a quarter of the map's height of the route (at least NEAR_ROUTE_PX), named beside its
 * dot (right, left, above or below) where the name stays inside the box and clear of the route, of what is
 * drawn already (the ends and their names, the inset, the scale bar) and of other names; at most `most` of
 * them. The ends' own names are not repeated.
 */
export function labelPlaces(
  places: readonly MapPlace[],
  view: View,
  route: ReadonlyArray<[number, number]>,
  taken: Rect[],
  skip: ReadonlySet<string>,
  most: number,
): PlaceLabel[] {
  const labels: PlaceLabel[] = [];
  const inset = 4;
  const nearPx = Math.max(NEAR_ROUTE_PX, Math.min(view.width, view.height) / 4);
  for (const place of places) {
    if (labels.length >= most) break;
    if (skip.has(place.name.toLowerCase())) continue;
    const [x, y] = toPx(view, place.lat, place.lng);
    if (x < inset || y < inset || x > view.width - inset || y > view.height - inset) continue;
    if (distanceToPath(x, y, route) > nearPx) continue;
    const dot: Rect = { left: x - 4, top: y - 4, right: x + 4, bottom: y + 4 };
    if (taken.some((rect) => overlaps(rect, dot))) continue;
    const size = NAME_PX[place.kind];
    const width = textWidth(place.name, size, place.kind === 'town' ? 600 : 400) + 4;
    const half = size / 2 + 2;
    const sides: Array<{ rect: Rect; x: number; y: number; anchor: PlaceLabel['anchor'] }> = [
      {
        rect: { left: x + 5, top: y - half, right: x + 5 + width, bottom: y + half },
        x: x + 6,
        y: y + size * 0.35,
        anchor: 'start',
      },
      {
        rect: { left: x - 5 - width, top: y - half, right: x - 5, bottom: y + half },
        x: x - 6,
        y: y + size * 0.35,
        anchor: 'end',
      },
      {
        rect: { left: x - width / 2, top: y - 5 - 2 * half, right: x + width / 2, bottom: y - 5 },
        x,
        y: y - 5 - half + size * 0.35,
        anchor: 'middle',
      },
      {
        rect: { left: x - width / 2, top: y + 5, right: x + width / 2, bottom: y + 5 + 2 * half },
        x,
        y: y + 5 + half + size * 0.35,
        anchor: 'middle',
      },
    ];
    const side = sides.find(
      ({ rect }) =>
        rect.left >= inset &&
        rect.right <= view.width - inset &&
        rect.top >= inset &&
        rect.bottom <= view.height - inset &&
        !taken.some((other) => overlaps(other, rect)) &&
        !pathMeets(route, rect),
    );
    if (side === undefined) continue;
    taken.push(dot, side.rect);
    labels.push({
      name: place.name,
      kind: place.kind,
      dot: [x, y],
      x: side.x,
      y: side.y,
      anchor: side.anchor,
    });
  }
  return labels;
}

/** The rectangle an end's name takes (14 px semibold, as .route-map .place), from where labelAt puts it. */
export function endLabelRect(
  label: { x: number; y: number; anchor: 'start' | 'middle' | 'end' },
  name: string,
): Rect {
  const width = textWidth(name, 14, 600) + 8;
  const left =
    label.anchor === 'start' ? label.x : label.anchor === 'end' ? label.x - width : label.x - width / 2;
  return { left: left - 4, top: label.y - 14, right: left + width, bottom: label.y + 5 };
}
