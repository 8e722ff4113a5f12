/**
 * The reverse-geocoder port: a point to the postcode and place name shown on a journey. The offline
 * implementation answers from open data shipped with the service; a hosted geocoder can replace it.
 */

export interface Place {
  /** A full live GB postcode in normal form ("SW1A 1AA"), or null where there is none near (abroad, at sea, Northern Ireland). */
  readonly postcode: string | null;
  /** The town, city or locality a person would name ("London", "Glasgow", "Belfast"), or null. */
  readonly name: string | null;
  /**
   * Where `name` is a town: the part of it the point is in ("Camden Town", "Westminster"), or null. A geocoder
   * that cannot tell leaves it out.
   */
  readonly locality?: string | null;
  /**
   * The largest town the point is part of ("London" for Camden Town as for Westminster), or null where it is
   * in none. A geocoder that cannot tell leaves it out.
   */
  readonly town?: string | null;
}

export interface ReverseGeocoder {
  /**
   * The place at a point (WGS84 degrees). Any point has an answer: a coordinate out of range gives nulls.
   * It fails only when the geocoder itself is unavailable (AppError UPSTREAM_UNAVAILABLE, retryable).
   */
  lookup(lat: number, lng: number): Promise<Place> | Place;
  /** Prepares whatever the geocoder needs (data, connections) ahead of the first lookup. */
  warm?(): Promise<void>;
}

export const UNKNOWN_PLACE: Place = Object.freeze({ postcode: null, name: null, locality: null, town: null });

/** A box in WGS84 degrees, west ≤ east and south ≤ north. */
export interface Box {
  readonly west: number;
  readonly south: number;
  readonly east: number;
  readonly north: number;
}

/** A named place, as a map labels it. */
export interface GazetteerPlace {
  readonly name: string;
  readonly lat: number;
  readonly lng: number;
  /** A town (a populated place) or a locality (a village, or a part of a town). */
  readonly kind: 'town' | 'locality';
}

/** The gazetteer port: the named places in an area, for drawing on maps. */
export interface Gazetteer {
  /**
   * At most `limit` places inside the box, in the order a map should label them (the most prominent first).
   * It fails only when the gazetteer itself is unavailable (AppError UPSTREAM_UNAVAILABLE, retryable).
   */
  placesWithin(box: Box, limit: number): Promise<GazetteerPlace[]> | GazetteerPlace[];
}
