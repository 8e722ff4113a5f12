import {
  createMilepostClient,
  unwrap,
  type components,
  type MilepostClient,
} from '../../../sdk/src/index.ts';

/** A town or locality of the service's gazetteer (GET /places). */
export type MapPlace = components['schemas']['PlaceList']['places'][number];

/** A box in degrees (WGS84). */
export interface Bounds {
  readonly west: number;
  readonly south: number;
  readonly east: number;
  readonly north: number;
}

/** The places in (at least) a box, the most prominent first. */
export type PlacesSource = (bounds: Bounds) => Promise<{ readonly places: readonly MapPlace[] }>;

/** Degrees the box is rounded out to: the service learns the area of a route (some km), not the route. */
const GRID_DEGREES = 0.05;
/** Enough for the localities of a few kilometres of London; the map labels a handful of them. */
const LIMIT = 300;

const answers = new Map<string, Promise<{ readonly places: readonly MapPlace[] }>>();

let openClient: MilepostClient | undefined;
/** The service asked as no one in particular: no company, no login (the gazetteer is open data). */
const anonymous = (): MilepostClient =>
  (openClient ??= createMilepostClient({ baseUrl: window.location.origin }));

/**
 * The gazetteer's places around a box, from the service (GET /places, open data: no credentials are sent).
 * The box is rounded out to a 0.05° grid, which keeps where someone drove out of the request and lets maps
 * of nearby routes share one answer, kept for the page's life (and by the browser for a day).
 */
export const loadPlaces: PlacesSource = (bounds) => {
  const out = (value: number, round: (n: number) => number) =>
    Number((round(value / GRID_DEGREES) * GRID_DEGREES).toFixed(2));
  const query = {
    west: out(bounds.west, Math.floor),
    south: out(bounds.south, Math.floor),
    east: out(bounds.east, Math.ceil),
    north: out(bounds.north, Math.ceil),
    limit: LIMIT,
  };
  const key = JSON.stringify(query);
  let answer = answers.get(key);
  if (answer === undefined) {
    answer = unwrap(anonymous().GET('/places', { params: { query } }));
    // A failure is not kept: the next map asks again.
    void answer.catch(() => {
      answers.delete(key);
    });
    answers.set(key, answer);
  }
  return answer;
};
