import { decodePolyline, type PolylinePrecision } from '../../../platform/geo/index.ts';

/** What a journey's GeoJSON feature is made of: its stored route and the fields shown beside it. */
export interface RoutedJourney {
  readonly journey_reference: string;
  readonly policy_reference: string;
  readonly route: string;
  readonly route_precision: number;
  readonly start_at: Date;
  readonly end_at: Date;
  readonly distance_metres: number;
  readonly source: string;
  readonly is_void: boolean;
}

export interface LineStringFeature {
  readonly type: 'Feature';
  readonly geometry: { readonly type: 'LineString'; readonly coordinates: Array<[number, number]> };
  readonly properties: Record<string, unknown>;
}

/**
 * A journey's route as a GeoJSON LineString feature (RFC 7946: `[longitude, latitude]`, WGS84), decoded
 * at the journey's own precision; undefined for a journey without a route (an estimate, an odometer
 * reconciliation) or whose stored route does not decode. Pure.
 */
export function journeyFeature(journey: RoutedJourney): LineStringFeature | undefined {
  if (journey.route === '') return undefined;
  const precision: PolylinePrecision = journey.route_precision === 6 ? 6 : 5;
  // NOTE: no point limit: a stored route was accepted once, and an export must show all of it.
  const decoded = decodePolyline(journey.route, precision, { maxPoints: Number.MAX_SAFE_INTEGER });
  if (!decoded.ok) return undefined;
  const coordinates: Array<[number, number]> = [];
  for (let i = 0; i < decoded.count; i++)
    coordinates.push([decoded.points[2 * i + 1] ?? 0, decoded.points[2 * i] ?? 0]);
  return {
    type: 'Feature',
    geometry: { type: 'LineString', coordinates },
    properties: {
      journey_reference: journey.journey_reference,
      policy_reference: journey.policy_reference,
      start_at: journey.start_at.toISOString(),
      end_at: journey.end_at.toISOString(),
      distance_metres: journey.distance_metres,
      source: journey.source,
      is_void: journey.is_void,
    },
  };
}
