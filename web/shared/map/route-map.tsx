import { useEffect, useMemo, useRef, useState, type RefObject } from 'react';
import { scaleBar, type ScaleBar } from '../axis-ticks.ts';
import {
  boundsOf,
  fitView,
  labelAt,
  metresPerPx,
  outlinePath,
  overview,
  pathOf,
  round,
  toPx,
  type Rect,
  type View,
} from './outline-view.ts';
import { endLabelRect, labelPlaces, type PlaceLabel } from './place-labels.ts';
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
  /** Points marked on the route (a trip's driving events), each a button that `onMarker` is told of. */
  readonly markers?: readonly MapMarker[] | undefined;
  readonly onMarker?: ((key: string) => void) | undefined;
  /** A point of the route to mark on it (a crash's impact), with its name. */
  readonly mark?: RouteMark | undefined;
}

/** A marked point of a route (a crash's impact): degrees WGS84 and what it is ("Impact"). */
export interface RouteMark {
  readonly lat: number;
  readonly lon: number;
  readonly name: string;
}

/** A marked point: `label` is drawn on the map (a number), `name` is what a screen reader hears. */
export interface MapMarker {
  readonly key: string;
  readonly lat: number;
  readonly lng: number;
  readonly label: string;
  readonly name: string;
}

/** A journey's route: over tiles when the service names a tile server, else offline in SVG. */
export function RouteMap(props: RouteMapProps) {
  return props.tileUrl === null ? <OutlineMap {...props} /> : <TileMap {...props} tileUrl={props.tileUrl} />;
}

export type Outline = ReadonlyArray<ReadonlyArray<number>>;

/** The box's width in whole pixels, followed as the page is laid out again (0 until measured). */
export function useWidthPx(box: RefObject<HTMLDivElement | null>): number {
  const [widthPx, setWidthPx] = useState(0);
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
  }, [box]);
  return widthPx;
}

/** The coast's outline: undefined until loaded (and for good where it cannot be). */
export function useOutline(): Outline | undefined {
  const [outline, setOutline] = useState<Outline>();
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
  return outline;
}

/** The places around the view, asked for again only when the view moves to other ground. */
function useNearby(places: PlacesSource | undefined, view: View | undefined): readonly MapPlace[] {
  const [nearby, setNearby] = useState<readonly MapPlace[]>([]);
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
  return nearby;
}

/** What the map draws, in the box's pixels. */
interface Drawing {
  readonly route: string;
  readonly land: string;
  readonly overview: ReturnType<typeof overview> | undefined;
  readonly start: [number, number];
  readonly end: [number, number];
  readonly startLabel: ReturnType<typeof labelAt>;
  readonly endLabel: ReturnType<typeof labelAt>;
  readonly scale: ScaleBar;
  readonly near: readonly PlaceLabel[];
}

/** The route, its ends and their names, the coast, the inset, the scale and the places named beside it. */
function drawRoute(
  {
    points,
    startName,
    endName,
    unit = 'mile',
  }: Pick<RouteMapProps, 'points' | 'startName' | 'endName' | 'unit'>,
  view: View,
  outline: Outline | undefined,
  nearby: readonly MapPlace[],
): Drawing {
  const { width: widthPx, height: heightPx } = view;
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
}

/**
 * The route over the outline of Great Britain and Ireland (Natural Earth), in Web Mercator, zoomed to
 * the route, with the places it passes near (from the service's gazetteer) and a scale bar. Drawn at the
 * box's own pixel size, so lines and names stay legible at 360 px and on a desktop.
 */
function OutlineMap(props: RouteMapProps) {
  const { points, startName, endName, unit, places, markers = [], onMarker, mark } = props;
  const box = useRef<HTMLDivElement>(null);
  const widthPx = useWidthPx(box);
  const outline = useOutline();
  const heightPx = Math.min(420, Math.round((widthPx * 2) / 3));
  const view = useMemo(
    () => (widthPx === 0 || points.length < 4 ? undefined : fitView(points, widthPx, heightPx)),
    [points, widthPx, heightPx],
  );
  const nearby = useNearby(places, view);
  const drawing = useMemo(
    () =>
      view === undefined ? undefined : drawRoute({ points, startName, endName, unit }, view, outline, nearby),
    [view, points, outline, nearby, startName, endName, unit],
  );
  const passing = drawing?.near.map((label) => label.name) ?? [];
  const description =
    `Route from ${startName} to ${endName}` +
    (passing.length === 0
      ? ''
      : `, passing ${passing.length === 1 ? (passing[0] ?? '') : `${passing.slice(0, -1).join(', ')} and ${passing.at(-1) ?? ''}`}`) +
    (markers.length === 0
      ? ''
      : `, with ${markers.length === 1 ? 'one point' : `${markers.length} points`} marked`) +
    (mark === undefined ? '' : `, with the ${mark.name.toLowerCase()} marked`);
  const markPx = mark === undefined || view === undefined ? undefined : toPx(view, mark.lat, mark.lon);
  return (
    <div ref={box} className="route-map">
      {drawing === undefined || view === undefined ? null : (
        <RouteSvg
          drawing={drawing}
          view={view}
          description={description}
          startName={startName}
          endName={endName}
          mark={markPx === undefined || mark === undefined ? undefined : { at: markPx, name: mark.name }}
        />
      )}
      {view === undefined
        ? null
        : markers.map((marker) => {
            // HTML over the drawing, named, where an SVG image's parts are not; a button (in the tab order)
            // where pressing one does something.
            const [x, y] = toPx(view, marker.lat, marker.lng);
            const style = { left: `${round(x)}px`, top: `${round(y)}px` };
            return onMarker === undefined ? (
              <span key={marker.key} className="map-marker" style={style} role="img" aria-label={marker.name}>
                {marker.label}
              </span>
            ) : (
              <button
                key={marker.key}
                type="button"
                className="map-marker"
                style={style}
                aria-label={marker.name}
                title={marker.name}
                onClick={() => {
                  onMarker(marker.key);
                }}
              >
                {marker.label}
              </button>
            );
          })}
      <p className="map-note">
        <span className="key-start" aria-hidden="true" /> Start{' '}
        <span className="key-end" aria-hidden="true" /> End
        {markers.length === 0 ? '' : ' · Numbered: the points listed with the map'}
        {mark === undefined ? null : (
          <>
            {' '}
            <span className="key-mark" aria-hidden="true" /> {mark.name}
          </>
        )}{' '}
        · Outline: Natural Earth
        {drawing !== undefined && drawing.near.length > 0 ? ' · Place names: GeoNames (CC BY 4.0)' : ''}
      </p>
    </div>
  );
}

function RouteSvg(props: {
  drawing: Drawing;
  view: View;
  description: string;
  startName: string;
  endName: string;
  mark: { readonly at: [number, number]; readonly name: string } | undefined;
}) {
  const { drawing, description, startName, endName, mark } = props;
  const { width: widthPx, height: heightPx } = props.view;
  return (
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
      {mark === undefined ? null : (
        <rect
          className="marker-mark"
          data-testid="route-mark"
          x={round(mark.at[0]) - 7}
          y={round(mark.at[1]) - 7}
          width={14}
          height={14}
          transform={`rotate(45 ${round(mark.at[0])} ${round(mark.at[1])})`}
        />
      )}
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
  );
}
