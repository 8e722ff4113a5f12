import { useEffect, useRef, useState } from 'react';
import type * as Leaflet from 'leaflet';
import type { MapMarker, RouteMark } from './route-map.tsx';

export interface TileMapProps {
  /** Latitude and longitude interleaved in degrees: `[lat0, lng0, lat1, lng1, …]`. */
  readonly points: ArrayLike<number>;
  readonly startName: string;
  readonly endName: string;
  /** A raster tile template with {z}, {x} and {y} (MAP_TILE_URL). */
  readonly tileUrl: string;
  /** The scale bar's unit (the policy's); miles when not given. */
  readonly unit?: 'mile' | 'km' | undefined;
  readonly markers?: readonly MapMarker[] | undefined;
  readonly onMarker?: ((key: string) => void) | undefined;
  /** A point of the route to mark on it (a crash's impact), with its name. */
  readonly mark?: RouteMark | undefined;
}

/** Leaflet and its stylesheet, loaded the first time a tiled map opens: the default bundle carries neither. */
async function loadLeaflet(): Promise<typeof Leaflet> {
  const [module] = await Promise.all([import('leaflet'), import('leaflet/dist/leaflet.css')]);
  // Leaflet 1.9 is a CommonJS bundle: the namespace is its `default` once bundled.
  return (module as { default?: typeof Leaflet }).default ?? module;
}

/** The route over the tile server's base map (Leaflet), fitted to the route, with named start and end and a scale. */
export function TileMap(props: TileMapProps) {
  const { points, startName, endName, tileUrl, unit = 'mile', markers, onMarker, mark } = props;
  const box = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    let map: Leaflet.Map | undefined;
    loadLeaflet().then(
      (L) => {
        const element = box.current;
        if (!live || element === null) return;
        const route: Leaflet.LatLngTuple[] = [];
        for (let i = 0; i + 1 < points.length; i += 2) route.push([points[i] ?? 0, points[i + 1] ?? 0]);
        const first = route[0];
        const last = route.at(-1);
        if (first === undefined || last === undefined) return;
        // NOTE: no scroll-wheel zoom, so scrolling the list past a map keeps scrolling the page.
        map = L.map(element, { scrollWheelZoom: false });
        L.tileLayer(tileUrl, { maxZoom: 19 }).addTo(map);
        L.control
          .scale({ imperial: unit === 'mile', metric: unit === 'km', position: 'bottomleft' })
          .addTo(map);
        const line = L.polyline(route, { color: '#ffffff', weight: 7, opacity: 0.9 }).addTo(map);
        L.polyline(route, { color: '#1d4f91', weight: 4 }).addTo(map);
        const place = (at: Leaflet.LatLngTuple, name: string, colour: string, direction: 'top' | 'bottom') =>
          L.circleMarker(at, { radius: 7, color: '#ffffff', weight: 2, fillColor: colour, fillOpacity: 1 })
            .bindTooltip(name, { permanent: true, direction, offset: [0, direction === 'top' ? -8 : 8] })
            .addTo(map as Leaflet.Map);
        place(first, startName, '#157f3b', 'bottom');
        place(last, endName, '#b42318', 'top');
        for (const marker of markers ?? []) {
          // Leaflet makes a keyboard marker's icon a focusable button; its text names it for screen readers.
          const html = document.createElement('span');
          html.setAttribute('aria-label', marker.name);
          html.textContent = marker.label;
          L.marker([marker.lat, marker.lng], {
            icon: L.divIcon({ className: 'map-marker', html, iconSize: [26, 26] }),
            title: marker.name,
            keyboard: onMarker !== undefined,
          })
            .on('click', () => onMarker?.(marker.key))
            .addTo(map);
        }
        if (mark !== undefined) place([mark.lat, mark.lon], mark.name, '#6d28d9', 'top');
        map.fitBounds(line.getBounds(), { padding: [32, 32], maxZoom: 15 });
      },
      () => {
        if (live) setFailed(true);
      },
    );
    return () => {
      live = false;
      map?.remove();
    };
  }, [points, startName, endName, tileUrl, unit, markers, onMarker, mark]);

  if (failed)
    return (
      <p className="message error" role="alert">
        The map could not be loaded. Please reload the page and try again.
      </p>
    );
  return (
    <div className="route-map">
      <div
        ref={box}
        className="tile-map"
        role="region"
        aria-label={`Map of the route from ${startName} to ${endName}`}
      />
    </div>
  );
}
