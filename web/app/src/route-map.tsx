import { useEffect, useMemo, useRef, useState } from 'react';
import { TileMap } from './tile-map.tsx';

export interface RouteMapProps {
  /** The route's points, latitude and longitude interleaved in degrees: `[lat0, lng0, lat1, lng1, …]`. */
  readonly points: ArrayLike<number>;
  readonly startName: string;
  readonly endName: string;
  /** A raster tile template (`config.map_tile_url`); null draws the route over the outline shipped in the app. */
  readonly tileUrl: string | null;
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

/**
 * The route over the outline of Great Britain and Ireland (Natural Earth), in Web Mercator, zoomed to
 * the route. Drawn at the box's own pixel size, so lines and names stay legible at 360 px and on a desktop.
 */
function OutlineMap({ points, startName, endName }: RouteMapProps) {
  const box = useRef<HTMLDivElement>(null);
  const [widthPx, setWidthPx] = useState(0);
  const [outline, setOutline] = useState<ReadonlyArray<ReadonlyArray<number>>>();
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
  const drawing = useMemo(() => {
    if (widthPx === 0 || points.length < 4) return undefined;
    const view = fitView(points, widthPx, heightPx);
    const count = points.length / 2;
    const start = toPx(view, points[0] ?? 0, points[1] ?? 0);
    const end = toPx(view, points[points.length - 2] ?? 0, points[points.length - 1] ?? 0);
    return {
      route: pathOf(count, (i) => toPx(view, points[2 * i] ?? 0, points[2 * i + 1] ?? 0), false),
      land: outline === undefined ? '' : outlinePath(outline, view),
      overview: outline === undefined || widthPx < 240 ? undefined : overview(outline, view, widthPx),
      start,
      end,
      startLabel: labelAt(start, end, 'below', widthPx, heightPx),
      endLabel: labelAt(end, start, 'above', widthPx, heightPx),
    };
  }, [points, outline, widthPx, heightPx]);

  return (
    <div ref={box} className="route-map">
      {drawing === undefined ? null : (
        <svg
          role="img"
          aria-label={`Route from ${startName} to ${endName}`}
          width={widthPx}
          height={heightPx}
          viewBox={`0 0 ${widthPx} ${heightPx}`}
        >
          <rect className="sea" width={widthPx} height={heightPx} />
          {drawing.land === '' ? null : <path className="land" d={drawing.land} fillRule="evenodd" />}
          <path className="route-casing" d={drawing.route} />
          <path className="route-line" d={drawing.route} data-testid="route-path" />
          {drawing.overview === undefined ? null : (
            <g className="overview" transform={`translate(${drawing.overview.x} 8)`}>
              <rect className="sea" width={drawing.overview.width} height={drawing.overview.height} />
              <path className="land" d={drawing.overview.land} fillRule="evenodd" />
              <rect className="overview-mark" {...drawing.overview.mark} />
            </g>
          )}
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
      </p>
    </div>
  );
}
