/**
 * The reverse-geocoder port: a point to the postcode and place name shown on a journey. The offline
 * implementation answers from open data shipped with the service; a hosted geocoder can replace it.
 */

export interface Place {
  /** A full live GB postcode in normal form ("SW1A 1AA"), or null where there is none near (abroad, at sea, Northern Ireland). */
  readonly postcode: string | null;
  /** The town, city or locality a person would name ("London", "Glasgow", "Belfast"), or null. */
  readonly name: string | null;
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

export const UNKNOWN_PLACE: Place = Object.freeze({ postcode: null, name: null });
