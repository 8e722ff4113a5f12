import { useMemo } from 'react';
import { decodePolyline, type PolylinePrecision } from '../../../src/platform/geo/polyline.ts';

/**
 * A journey's route (an encoded polyline) as the points RouteMap draws; undefined when it has none or it
 * does not decode. Decoded once per route.
 */
export function useRoutePoints(route: string, precision: PolylinePrecision): ArrayLike<number> | undefined {
  return useMemo(() => {
    if (route === '') return undefined;
    const decoded = decodePolyline(route, precision);
    return decoded.ok ? decoded.points : undefined;
  }, [route, precision]);
}
