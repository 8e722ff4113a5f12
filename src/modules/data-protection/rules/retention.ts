import {
  decodePolyline,
  encodePolyline,
  firstPoint,
  lastPoint,
  type PolylinePrecision,
} from '../../../platform/geo/index.ts';

/** A point in degrees, as journeys store their start and end. */
export interface Point {
  readonly lat: number;
  readonly lng: number;
}

/** What the route retention needs of a journey. */
export interface RouteToCoarsen {
  readonly route: string;
  readonly precision: PolylinePrecision;
  readonly start: Point | undefined;
  readonly end: Point | undefined;
}

/**
 * A route kept past ROUTE_RETENTION_DAYS: the 2-point line from its start to its end, at the route's
 * own precision. The journey's stored start and end are the route's first and last points, decoded
 * exactly (units over 10^precision), so encoding them again gives those very points; without them the
 * route is decoded. Undefined for a route that cannot be read (nothing to coarsen). Idempotent: a
 * 2-point line coarsens to itself.
 */
export function coarsenedRoute(journey: RouteToCoarsen): string | undefined {
  let start = journey.start;
  let end = journey.end;
  if (start === undefined || end === undefined) {
    const decoded = decodePolyline(journey.route, journey.precision, { maxPoints: Number.MAX_SAFE_INTEGER });
    if (!decoded.ok) return undefined;
    start = firstPoint(decoded.points, decoded.count);
    end = lastPoint(decoded.points, decoded.count);
    if (start === undefined || end === undefined) return undefined;
  }
  return encodePolyline([start.lat, start.lng, end.lat, end.lng], journey.precision);
}

/** The instant before which a statement's journeys lose their detailed routes. */
export const routeRetentionCutoff = (now: Date, retentionDays: number): Date =>
  new Date(now.getTime() - retentionDays * 86_400_000);
