import { useEffect, useMemo, useRef, useState } from 'react';
import { scaleBar } from './axis-ticks.ts';
import type { Bounds, MapPlace, PlacesSource } from './places.ts';
import { TileMap } from './tile-map.tsx';

export interface RouteMapProps {
  /** The route's points, latitude and longitude interleaved in degrees: `[lat0, lng0, lat1, lng1, …]`. */
  readonly points: ArrayLike<number>;
  readonly startName: string;
  readonly endName: string;
  /** A raster tile template (`config.map_tile_url`); null draws the route over the outline shipped in the app. */
  readonly tileUrl: string | null;
  /** The scale bar's unit (the policy's); miles when not given. */
  readonly unit?: 'mile' | 'km' | undefined;
  /** Where the places along the route come from (the service's gazetteer); none are drawn without it. */
  readonly places?: PlacesSource | undefined;
}

/** A journey's route: over tiles when the service names a tile server, else offline in SVG. */
export function RouteMap(props: RouteMapProps) {
  return props.tileUrl === null ? <OutlineMap {...props} /> : <TileMap {...props} tileUrl={props.tileUrl} />;
}

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

interface View {
  readonly minX: number;
  readonly maxY: number;
  /** Pixels per Mercator unit. */
  readonly scale: number;
  readonly width: number;
  readonly height: number;
}

/** The view that holds the route with some padding, at least MIN_SPAN_METRES across, at the box's aspect. */
function fitView(points: ArrayLike<number>, width: number, height: number): View {
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
const boundsOf = (view: View): Bounds => ({
  west: lngOf(view.minX),
  east: lngOf(view.minX + view.width / view.scale),
  north: latOf(view.maxY),
  south: latOf(view.maxY - view.height / view.scale),
});

/** Ground metres a pixel covers at the view's centre (a Mercator unit is R·cos(latitude) metres there). */
function metresPerPx(view: View): number {
  const centreLat = latOf(view.maxY - view.height / view.scale / 2);
  return (EARTH_RADIUS_METRES * Math.cos((centreLat * Math.PI) / 180)) / view.scale;
}

const toPx = (view: View, lat: number, lng: number): [number, number] => [
  (mercatorX(lng) - view.minX) * view.scale,
  (view.maxY - mercatorY(lat)) * view.scale,
];

const round = (n: number): number => Math.round(n * 10) / 10;

/** An SVG path through points given by `at(i)` for i < count, dropping points too close to draw apart. */
function pathOf(count: number, at: (i: number) => [number, number], closed: boolean): string {
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
function outlinePath(rings: ReadonlyArray<ReadonlyArray<number>>, view: View): string {
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
function overview(rings: ReadonlyArray<ReadonlyArray<number>>, view: View, widthPx: number) {
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
function labelAt(
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
interface Rect {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

const overlaps = (a: Rect, b: Rect): boolean =>
  a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

/** A place drawn beside the route: its dot and its name. */
interface PlaceLabel {
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
function labelPlaces(
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
function endLabelRect(
  label: { x: number; y: number; anchor: 'start' | 'middle' | 'end' },
  name: string,
): Rect {
  const width = textWidth(name, 14, 600) + 8;
  const left =
    label.anchor === 'start' ? label.x : label.anchor === 'end' ? label.x - width : label.x - width / 2;
  return { left: left - 4, top: label.y - 14, right: left + width, bottom: label.y + 5 };
}

/**
 * The route over the outline of Great Britain and Ireland (Natural Earth), in Web Mercator, zoomed to
 * the route, with the places it passes near (from the service's gazetteer) and a scale bar. Drawn at the
 * box's own pixel size, so lines and names stay legible at 360 px and on a desktop.
 */
function OutlineMap({ points, startName, endName, unit = 'mile', places }: RouteMapProps) {
  const box = useRef<HTMLDivElement>(null);
  const [widthPx, setWidthPx] = useState(0);
  const [outline, setOutline] = useState<ReadonlyArray<ReadonlyArray<number>>>();
  const [nearby, setNearby] = useState<readonly MapPlace[]>([]);
  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const observer = new ResizeObserver(() => {
      setWidthPx(Math.round(element.clientWidth));
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
    };
  }, []);
  useEffect(() => {
    let live = true;
    // A chunk of its own (about 8 kB gzipped), fetched from this origin the first time a map opens.
    void import('virtual:gb-outline').then(
      (module) => {
        if (live) setOutline(module.default);
      },
      () => {
        // The route is still drawn; only the coast is missing (an app updated under an open page).
      },
    );
    return () => {
      live = false;
    };
  }, []);

  const heightPx = Math.min(420, Math.round((widthPx * 2) / 3));
  const view = useMemo(
    () => (widthPx === 0 || points.length < 4 ? undefined : fitView(points, widthPx, heightPx)),
    [points, widthPx, heightPx],
  );
  // The places around the view, asked for again only when the view moves to other ground.
  const boundsKey =
    view === undefined
      ? ''
      : JSON.stringify(boundsOf(view), (_k, v: unknown) =>
          typeof v === 'number' ? Number(v.toFixed(3)) : v,
        );
  useEffect(() => {
    if (places === undefined || boundsKey === '') return;
    let live = true;
    places(JSON.parse(boundsKey) as Bounds).then(
      (answer) => {
        if (live) setNearby(answer.places);
      },
      () => {
        // The map stands without them: the route, its ends and the scale are drawn all the same.
      },
    );
    return () => {
      live = false;
    };
  }, [places, boundsKey]);

  const drawing = useMemo(() => {
    if (view === undefined) return undefined;
    const count = points.length / 2;
    const start = toPx(view, points[0] ?? 0, points[1] ?? 0);
    const end = toPx(view, points[points.length - 2] ?? 0, points[points.length - 1] ?? 0);
    const startLabel = labelAt(start, end, 'below', widthPx, heightPx);
    const endLabel = labelAt(end, start, 'above', widthPx, heightPx);
    const inset = outline === undefined || widthPx < 240 ? undefined : overview(outline, view, widthPx);
    const scale = scaleBar(metresPerPx(view), Math.min(120, widthPx * 0.3), unit);
    // The route as the eye sees it, for telling which places it passes near.
    const path: Array<[number, number]> = [];
    for (let i = 0; i < count; i++) {
      const at = toPx(view, points[2 * i] ?? 0, points[2 * i + 1] ?? 0);
      const last = path.at(-1);
      if (last === undefined || i === count - 1 || Math.hypot(at[0] - last[0], at[1] - last[1]) >= 4)
        path.push(at);
    }
    const marker = ([x, y]: [number, number]): Rect => ({
      left: x - 9,
      top: y - 9,
      right: x + 9,
      bottom: y + 9,
    });
    const taken: Rect[] = [
      marker(start),
      marker(end),
      endLabelRect(startLabel, startName),
      endLabelRect(endLabel, endName),
      { left: 0, top: heightPx - 34, right: 16 + scale.px + 8, bottom: heightPx },
      ...(inset === undefined
        ? []
        : [{ left: inset.x - 4, top: 0, right: widthPx, bottom: 8 + inset.height + 4 }]),
    ];
    const skip = new Set([startName.toLowerCase(), endName.toLowerCase()]);
    return {
      route: pathOf(count, (i) => toPx(view, points[2 * i] ?? 0, points[2 * i + 1] ?? 0), false),
      land: outline === undefined ? '' : outlinePath(outline, view),
      overview: inset,
      start,
      end,
      startLabel,
      endLabel,
      scale,
      near: labelPlaces(nearby, view, path, taken, skip, widthPx < 480 ? 5 : 8),
    };
  }, [view, points, outline, nearby, widthPx, heightPx, startName, endName, unit]);

  const passing = drawing?.near.map((label) => label.name) ?? [];
  const description =
    `Route from ${startName} to ${endName}` +
    (passing.length === 0
      ? ''
      : `, passing ${passing.length === 1 ? (passing[0] ?? '') : `${passing.slice(0, -1).join(', ')} and ${passing.at(-1) ?? ''}`}`);
  return (
    <div ref={box} className="route-map">
      {drawing === undefined ? null : (
        <svg
          role="img"
          aria-label={description}
          width={widthPx}
          height={heightPx}
          viewBox={`0 0 ${widthPx} ${heightPx}`}
        >
          <rect className="sea" width={widthPx} height={heightPx} />
          {drawing.land === '' ? null : <path className="land" d={drawing.land} fillRule="evenodd" />}
          <path className="route-casing" d={drawing.route} />
          <path className="route-line" d={drawing.route} data-testid="route-path" />
          {drawing.near.map((label, index) => (
            <g key={`${label.name}-${index}`} className={`near near-${label.kind}`} data-testid="near-place">
              <circle cx={round(label.dot[0])} cy={round(label.dot[1])} r={3} />
              <text x={round(label.x)} y={round(label.y)} textAnchor={label.anchor}>
                {label.name}
              </text>
            </g>
          ))}
          {drawing.overview === undefined ? null : (
            <g className="overview" transform={`translate(${drawing.overview.x} 8)`}>
              <rect className="sea" width={drawing.overview.width} height={drawing.overview.height} />
              <path className="land" d={drawing.overview.land} fillRule="evenodd" />
              <rect className="overview-mark" {...drawing.overview.mark} />
            </g>
          )}
          <g className="scale-bar" data-testid="scale-bar" transform={`translate(12 ${heightPx - 12})`}>
            <path d={`M0 -5V0H${round(drawing.scale.px)}V-5`} />
            <text x={0} y={-8}>
              {drawing.scale.label}
            </text>
          </g>
          <circle className="marker-start" cx={round(drawing.start[0])} cy={round(drawing.start[1])} r={7} />
          <circle className="marker-end" cx={round(drawing.end[0])} cy={round(drawing.end[1])} r={7} />
          <text
            className="place"
            x={round(drawing.startLabel.x)}
            y={round(drawing.startLabel.y)}
            textAnchor={drawing.startLabel.anchor}
          >
            {startName}
          </text>
          <text
            className="place"
            x={round(drawing.endLabel.x)}
            y={round(drawing.endLabel.y)}
            textAnchor={drawing.endLabel.anchor}
          >
            {endName}
          </text>
        </svg>
      )}
      <p className="map-note">
        <span className="key-start" aria-hidden="true" /> Start{' '}
        <span className="key-end" aria-hidden="true" /> End · Outline: Natural Earth
        {drawing !== undefined && drawing.near.length > 0 ? ' · Place names: GeoNames (CC BY 4.0)' : ''}
      </p>
    </div>
  );
}
