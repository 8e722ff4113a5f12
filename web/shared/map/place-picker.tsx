import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent, type MouseEvent } from 'react';
import {
  boundsOf,
  fromPx,
  outlinePath,
  overlaps,
  round,
  toPx,
  viewAround,
  type Rect,
  type View,
} from './outline-view.ts';
import type { MapPlace, PlacesSource } from './places.ts';
import { useOutline, useWidthPx } from './route-map.tsx';

/** A point in degrees (WGS84). */
export interface PickedPoint {
  readonly lat: number;
  readonly lon: number;
}

/** Ground the map spans across at each zoom, from the whole of Great Britain to a few streets. */
const SPANS_METRES = [1_100_000, 300_000, 80_000, 20_000, 5_000] as const;
/** Where the whole-country view is centred (the middle of Great Britain). */
const GB_CENTRE: PickedPoint = { lat: 54.4, lon: -3.2 };
/** How far an arrow key moves the marker, in pixels of the map as drawn (with Shift: five times as far). */
const STEP_PX = 8;
/** Towns named on the map at each zoom (none on the whole country: the outline says where). */
const NAMED_AT: readonly number[] = [0, 6, 8, 10, 12];

/** The nearest of the places to a point, by ground distance (equirectangular: fine over a few kilometres). */
function nearest(places: readonly MapPlace[], point: PickedPoint): MapPlace | undefined {
  const cos = Math.cos((point.lat * Math.PI) / 180);
  let best: MapPlace | undefined;
  let bestDistance = Infinity;
  for (const place of places) {
    const distance = Math.hypot(place.lat - point.lat, (place.lng - point.lon) * cos);
    if (distance < bestDistance) {
      best = place;
      bestDistance = distance;
    }
  }
  return best;
}

/** A point as words: 51.5355° N, 0.9018° W. */
export const describePoint = (point: PickedPoint): string =>
  `${Math.abs(point.lat).toFixed(4)}° ${point.lat >= 0 ? 'N' : 'S'}, ${Math.abs(point.lon).toFixed(4)}° ${point.lon >= 0 ? 'E' : 'W'}`;

/** The towns to name in the view, the most prominent first, none over another's name or the marker. */
function townLabels(
  places: readonly MapPlace[],
  view: View,
  most: number,
  marker: [number, number] | undefined,
) {
  const taken: Rect[] =
    marker === undefined
      ? []
      : [{ left: marker[0] - 10, top: marker[1] - 24, right: marker[0] + 10, bottom: marker[1] + 4 }];
  const out: Array<{ name: string; x: number; y: number }> = [];
  for (const place of places) {
    if (out.length >= most || place.kind !== 'town') continue;
    const [x, y] = toPx(view, place.lat, place.lng);
    const rect = { left: x - 4, top: y - 14, right: x + 8 + place.name.length * 8.5, bottom: y + 4 };
    if (rect.left < 0 || rect.right > view.width || rect.top < 0 || rect.bottom > view.height) continue;
    if (taken.some((other) => overlaps(rect, other))) continue;
    taken.push(rect);
    out.push({ name: place.name, x, y });
  }
  return out;
}

/** The gazetteer's places in the view (none on the whole country) and the one nearest the marker. */
function usePlaces(
  places: PlacesSource | undefined,
  view: View | undefined,
  named: boolean,
  value: PickedPoint | undefined,
) {
  const [inView, setInView] = useState<readonly MapPlace[]>([]);
  const [near, setNear] = useState<MapPlace | undefined>();
  const viewKey = view === undefined || !named ? '' : JSON.stringify(boundsOf(view));
  useEffect(() => {
    if (places === undefined || viewKey === '') return;
    let live = true;
    places(JSON.parse(viewKey) as ReturnType<typeof boundsOf>).then(
      (answer) => {
        if (live) setInView(answer.places);
      },
      () => {
        // The map stands without names.
      },
    );
    return () => {
      live = false;
    };
  }, [places, viewKey]);
  useEffect(() => {
    if (places === undefined || value === undefined) return;
    let live = true;
    // About 7 km each way: the name said is a place the policyholder would know the point by.
    const box = {
      west: value.lon - 0.1,
      south: value.lat - 0.07,
      east: value.lon + 0.1,
      north: value.lat + 0.07,
    };
    places(box).then(
      (answer) => {
        if (live) setNear(nearest(answer.places, value));
      },
      () => {
        if (live) setNear(undefined);
      },
    );
    return () => {
      live = false;
    };
  }, [places, value]);
  return { inView: named ? inView : [], near: value === undefined ? undefined : near };
}

/** The map's zoom and centre, and what a click and the keys do to them and to the marker. */
function usePickerControls(
  value: PickedPoint | undefined,
  onChange: (point: PickedPoint) => void,
  widthPx: number,
) {
  const heightPx = Math.min(420, widthPx);
  const [level, setLevel] = useState(0);
  const [centre, setCentre] = useState<PickedPoint>(value ?? GB_CENTRE);
  const spanMetres = SPANS_METRES[level] ?? SPANS_METRES[0];
  const view = useMemo(
    () => (widthPx === 0 ? undefined : viewAround(centre.lat, centre.lon, spanMetres, widthPx, heightPx)),
    [centre, spanMetres, widthPx, heightPx],
  );
  /** Moves the marker, bringing the view along when it would leave it. */
  const moveTo = (point: PickedPoint) => {
    const lat = Math.max(-85, Math.min(85, point.lat));
    const lon = Math.max(-180, Math.min(180, point.lon));
    onChange({ lat, lon });
    if (view === undefined) return;
    const [x, y] = toPx(view, lat, lon);
    if (x < 12 || y < 12 || x > view.width - 12 || y > view.height - 12) setCentre({ lat, lon });
  };
  const zoom = (by: 1 | -1) => {
    const next = Math.max(0, Math.min(SPANS_METRES.length - 1, level + by));
    if (next === level) return;
    // Zooming in keeps the marker in sight; zooming out to the whole country shows the whole country.
    setCentre(next === 0 ? GB_CENTRE : (value ?? centre));
    setLevel(next);
  };
  const onClick = (event: MouseEvent<SVGSVGElement>) => {
    if (view === undefined) return;
    const rect = event.currentTarget.getBoundingClientRect();
    const [lat, lon] = fromPx(view, event.clientX - rect.left, event.clientY - rect.top);
    onChange({ lat, lon });
    if (level < 2) {
      setCentre({ lat, lon });
      setLevel(level + 1);
    }
  };
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (view === undefined) return;
    const step = STEP_PX * (event.shiftKey ? 5 : 1);
    const moves: Record<string, [number, number]> = {
      ArrowUp: [0, -step],
      ArrowDown: [0, step],
      ArrowLeft: [-step, 0],
      ArrowRight: [step, 0],
    };
    const move = moves[event.key];
    if (move !== undefined) {
      event.preventDefault();
      // The first arrow puts the marker in the middle of the map; later ones move it.
      const [x, y] =
        value === undefined ? [view.width / 2, view.height / 2] : toPx(view, value.lat, value.lon);
      const [lat, lon] = value === undefined ? fromPx(view, x, y) : fromPx(view, x + move[0], y + move[1]);
      moveTo({ lat, lon });
    } else if (event.key === '+' || event.key === '=') {
      event.preventDefault();
      zoom(1);
    } else if (event.key === '-' || event.key === '_') {
      event.preventDefault();
      zoom(-1);
    }
  };
  return { view, level, zoom, onClick, onKeyDown };
}

/** The drawing: sea, land, the towns named and the marker. */
function PickerSvg(props: {
  view: View;
  land: string;
  labels: ReadonlyArray<{ name: string; x: number; y: number }>;
  marker: [number, number] | undefined;
  onClick: (event: MouseEvent<SVGSVGElement>) => void;
}) {
  const { view, land, labels, marker } = props;
  return (
    <svg
      width={view.width}
      height={view.height}
      viewBox={`0 0 ${view.width} ${view.height}`}
      aria-hidden="true"
      onClick={props.onClick}
    >
      <rect className="sea" width={view.width} height={view.height} />
      {land === '' ? null : <path className="land" d={land} fillRule="evenodd" />}
      {labels.map((label) => (
        <g key={label.name} className="near near-town">
          <circle cx={round(label.x)} cy={round(label.y)} r={3} />
          <text x={round(label.x + 6)} y={round(label.y - 4)}>
            {label.name}
          </text>
        </g>
      ))}
      {marker === undefined ? null : (
        <circle
          className="marker-end"
          cx={round(marker[0])}
          cy={round(marker[1])}
          r={8}
          data-testid="picked-marker"
        />
      )}
    </svg>
  );
}

/**
 * Where something happened, picked on the offline outline of Great Britain: a click or tap puts the marker
 * there (and zooms in while the map is wider than a county); with the keyboard, the focused map takes the
 * arrow keys to move the marker (Shift for bigger steps) and + and − to zoom, and says where the marker is.
 */
export function PlacePicker(props: {
  value: PickedPoint | undefined;
  onChange: (point: PickedPoint) => void;
  places?: PlacesSource | undefined;
  label: string;
  invalid?: boolean;
  describedBy?: string | undefined;
}) {
  const { value } = props;
  const id = useId();
  const box = useRef<HTMLDivElement>(null);
  const outline = useOutline();
  const { view, level, zoom, onClick, onKeyDown } = usePickerControls(value, props.onChange, useWidthPx(box));
  const named = (NAMED_AT[level] ?? 0) > 0;
  const { inView, near } = usePlaces(props.places, view, named, value);
  const land = useMemo(
    () => (outline === undefined || view === undefined ? '' : outlinePath(outline, view)),
    [outline, view],
  );
  const marker = value === undefined || view === undefined ? undefined : toPx(view, value.lat, value.lon);
  const labels = view === undefined ? [] : townLabels(inView, view, NAMED_AT[level] ?? 0, marker);
  const said =
    value === undefined
      ? 'No place marked yet.'
      : `Marked${near === undefined ? '' : ` near ${near.name}`}: ${describePoint(value)}.`;
  return (
    <div className="place-picker">
      <div
        ref={box}
        className="place-picker-map"
        role="application"
        aria-roledescription="map"
        aria-label={props.label}
        aria-describedby={`${id}-help ${id}-said${props.describedBy === undefined ? '' : ` ${props.describedBy}`}`}
        aria-invalid={props.invalid === true ? true : undefined}
        tabIndex={0}
        onKeyDown={onKeyDown}
        data-testid="place-picker"
      >
        {view === undefined ? null : (
          <PickerSvg view={view} land={land} labels={labels} marker={marker} onClick={onClick} />
        )}
      </div>
      <p className="hint" id={`${id}-help`}>
        Click or tap the map where it happened. With a keyboard: arrow keys move the marker (Shift for bigger
        steps), + and − zoom.
      </p>
      <div className="place-picker-zoom">
        <button
          type="button"
          className="secondary"
          onClick={() => {
            zoom(1);
          }}
          disabled={level === SPANS_METRES.length - 1}
        >
          Zoom in
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            zoom(-1);
          }}
          disabled={level === 0}
        >
          Zoom out
        </button>
      </div>
      <p id={`${id}-said`} role="status" data-testid="picked-place">
        {said}
      </p>
      <p className="map-note">
        Outline: Natural Earth{named && labels.length > 0 ? ' · Place names: GeoNames (CC BY 4.0)' : ''}
      </p>
    </div>
  );
}
