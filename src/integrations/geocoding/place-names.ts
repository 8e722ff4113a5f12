/**
 * Names a point the way a person would name where a journey started or ended: the town or city it is in,
 * else the village or locality it is at, else the town it is near.
 *
 * The places come from GeoNames (CC BY 4.0), selected at build time (build-data.ts → data/geonames/gb-towns.csv
 * and gb-localities.csv) so that the service parses only what it uses.
 *
 * 1. Town: every populated place in gb-places.csv (GeoNames, population ≥ 1,000 or an administrative seat;
 *    "sections of a populated place" — PPLX, e.g. Chelsea, Canary Wharf — left out, as they are parts of a
 *    town, not towns) gets an extent radius of 9 m × √population (the radius of a disc holding its people at
 *    ~3,900 a km², a UK urban density; population counted as at least 1,000): London 24.7 km, Glasgow 6.9 km,
 *    a town of 10,000 900 m. The point takes the place with the smallest distance ÷ radius, if that is ≤ 1:
 *    it lies inside that place's extent, and where extents overlap the place it is relatively closest to wins.
 *    So central London is "London" (not "City of Westminster", 0.5 km away but a 4.5 km extent), the centre
 *    of Salford or Gateshead is itself, and a point between towns belongs to neither.
 * 2. Locality: otherwise the nearest place within 3 km from gb-postal-places.csv whose position GeoNames took
 *    from the place itself (accuracy 4: 14,907 villages, suburbs and towns, Northern Ireland included). Rows
 *    with estimated positions are left out: they sit on their outward code's centre.
 * 3. Near a town: otherwise the place with the smallest distance ÷ radius among those within 15 km, else the
 *    nearest locality within 15 km.
 * 4. Otherwise null: at sea, abroad (Calais and Dublin are beyond 15 km of any place listed), or in the
 *    emptiest uplands. The postal places include the Isle of Man and the Channel Islands, so
 *    Douglas or St Helier are named although they have no GB postcode.
 *
 * A point named by rule 1 also gets a finer name, its locality: the nearest locality within 3 km that is
 * nearer the point than the town's centre, lies inside the town's extent, and is not called as the town
 * itself (in London: "Camden Town", "Westminster", "Soho"; near a town's centre, or in a small town without
 * localities of its own, none, rather than a suburb or a village beyond it). Two ends of a journey in one
 * town are told apart by it. A point named by rules 2–4 has none: its name is already the finest there is.
 *
 * The same places answer "which places are in this box" for maps (`placesWithin`): towns, largest first,
 * then localities, nearest the box's centre first, each name once in its neighbourhood.
 */
import KDBush from 'kdbush';
import { around } from 'geokdbush';
import { eachCsvRecord, parseCsvRecords } from './csv.ts';
import type { Box, GazetteerPlace } from './geocoder.ts';

const METRES_PER_ROOT_PERSON = 9;
const MINIMUM_POPULATION = 1000;
const LOCALITY_KILOMETRES = 3;
const NEAR_METRES = 15_000;
/** Places with a smaller extent than this (population ≤ 111,000) are searched in a box this size. */
const SMALL_TOWN_METRES = 3000;
/**
 * A name met again within this distance of a place already listed in a box is the same place (GeoNames
 * lists "London" at a dozen City postcodes, "Hackney" both as a town and as a locality).
 */
const SAME_PLACE_METRES = 5000;

/** A point's names: the one a person would give, and where that is a town, the locality within it. */
export interface PlaceNames {
  /** The town, city or locality (rules 1–4), or null where no place is near. */
  readonly name: string | null;
  /**
   * Inside a town's extent: the nearest locality within 3 km that is nearer than the town's centre, lies
   * inside that extent and is not called as the town; otherwise null.
   */
  readonly locality: string | null;
  /**
   * Inside a town's extent: the largest town whose extent holds the point, the town it is part of ("London"
   * for Camden Town as for Westminster); otherwise null.
   */
  readonly town: string | null;
}

export interface PlaceNamer {
  /** The human name for a point (degrees), or null where no place is near. */
  nameAt(lat: number, lng: number): string | null;
  /** The name and, inside a town, the locality of a point (degrees). */
  namesAt(lat: number, lng: number): PlaceNames;
  /**
   * At most `limit` places inside the box, in the order a map should label them: towns by size (population),
   * largest first, then localities nearest the box's centre first; a name is listed once within 5 km.
   */
  placesWithin(box: Box, limit: number): GazetteerPlace[];
  readonly townCount: number;
  readonly localityCount: number;
}

/** A town for naming, as `gb-towns.csv` holds it. */
export interface TownRow {
  readonly name: string;
  readonly lat: string;
  readonly lon: string;
  readonly population: string;
}

/** A locality for naming, as `gb-localities.csv` holds it. */
export interface LocalityRow {
  readonly name: string;
  readonly lat: string;
  readonly lon: string;
}

/**
 * Build time: the rows of GeoNames' gb-places.csv that count as towns (all but PPLX, sections of a town),
 * with their coordinates and population as GeoNames gives them.
 */
export function selectTowns(placesCsv: string): TownRow[] {
  return parseCsvRecords(placesCsv, ['name', 'lat', 'lon', 'feature_code', 'population'])
    .filter((row) => row.feature_code !== 'PPLX' && row.name !== '')
    .map(({ name, lat, lon, population }) => ({ name, lat, lon, population }));
}

/**
 * Build time: the distinct places of GeoNames' gb-postal-places.csv whose position came from the place itself
 * (accuracy 4); a name listed under several outward codes at one position appears once.
 */
export function selectLocalities(postalPlacesCsv: string): LocalityRow[] {
  const seen = new Set<string>();
  const localities: LocalityRow[] = [];
  const positioned = (line: string) => line.endsWith(',4'); // accuracy is the last column
  for (const row of parseCsvRecords(postalPlacesCsv, ['place_name', 'lat', 'lon', 'accuracy'], positioned)) {
    const key = `${row.place_name}|${row.lat}|${row.lon}`;
    if (row.accuracy !== '4' || row.place_name === '' || seen.has(key)) continue;
    seen.add(key);
    localities.push({ name: row.place_name, lat: row.lat, lon: row.lon });
  }
  return localities;
}

/**
 * Places as columns, place i at position i of each (the ids KDBush returns): a few typed arrays and one
 * string of names instead of an object, three boxed numbers and a string a place. The names are copied out
 * of the file's text (a name taken from it by `split` would keep the whole text alive).
 */
interface PlaceSet {
  readonly index: KDBush;
  readonly lat: Float64Array;
  readonly lng: Float64Array;
  /** A town's extent radius; zero for a locality. */
  readonly radiusMetres: Float64Array;
  readonly count: number;
  name(id: number): string;
}

class PlaceSetBuilder {
  private readonly names: string[] = [];
  private readonly lat: number[] = [];
  private readonly lng: number[] = [];
  private readonly radiusMetres: number[] = [];

  add(name: string, lat: number, lng: number, radiusMetres = 0): void {
    if (!Number.isFinite(lat) || !Number.isFinite(lng)) return;
    this.names.push(name);
    this.lat.push(lat);
    this.lng.push(lng);
    this.radiusMetres.push(radiusMetres);
  }

  build(): PlaceSet {
    const count = this.names.length;
    const index = new KDBush(count, 16, Float64Array);
    for (let i = 0; i < count; i++) index.add(this.lng[i] ?? NaN, this.lat[i] ?? NaN);
    index.finish();
    const text = this.names.join('');
    const ends = new Uint32Array(count);
    let end = 0;
    this.names.forEach((name, i) => {
      end += name.length;
      ends[i] = end;
    });
    return {
      index,
      lat: Float64Array.from(this.lat),
      lng: Float64Array.from(this.lng),
      radiusMetres: Float64Array.from(this.radiusMetres),
      count,
      name: (id) => text.slice(id === 0 ? 0 : ends[id - 1], ends[id]),
    };
  }
}

/**
 * What a namer searches. Most places are small, so the places whose extent could hold a point are found
 * with two box searches: small places within SMALL_TOWN_METRES, and the few large ones (London's extent
 * is 24.7 km) within the largest extent, `largeMetres`.
 */
interface Places {
  readonly small: PlaceSet;
  readonly large: PlaceSet;
  readonly largeMetres: number;
  readonly localities: PlaceSet;
}

/** Builds the namer from the text of gb-towns.csv and gb-localities.csv (written by build-data.ts). */
export function createPlaceNamer(townsCsv: string, localitiesCsv: string): PlaceNamer {
  const places = loadPlaces(townsCsv, localitiesCsv);
  const namesAt = (lat: number, lng: number): PlaceNames => namePoint(places, lat, lng);
  return {
    townCount: places.small.count + places.large.count,
    localityCount: places.localities.count,
    nameAt: (lat, lng) => namesAt(lat, lng).name,
    namesAt,
    placesWithin: (box, limit) => placesWithin(places, box, limit),
  };
}

function loadPlaces(townsCsv: string, localitiesCsv: string): Places {
  const smallTowns = new PlaceSetBuilder();
  const largeTowns = new PlaceSetBuilder();
  let largeMetres = SMALL_TOWN_METRES;
  for (const row of eachCsvRecord(townsCsv, ['name', 'lat', 'lon', 'population'])) {
    const radiusMetres =
      METRES_PER_ROOT_PERSON * Math.sqrt(Math.max(MINIMUM_POPULATION, Number(row.population) || 0));
    const large = radiusMetres > SMALL_TOWN_METRES;
    if (large) largeMetres = Math.max(largeMetres, radiusMetres);
    (large ? largeTowns : smallTowns).add(row.name, Number(row.lat), Number(row.lon), radiusMetres);
  }
  const localityBuilder = new PlaceSetBuilder();
  for (const row of eachCsvRecord(localitiesCsv, ['name', 'lat', 'lon']))
    localityBuilder.add(row.name, Number(row.lat), Number(row.lon));
  return {
    small: smallTowns.build(),
    large: largeTowns.build(),
    largeMetres,
    localities: localityBuilder.build(),
  };
}

/** A point's names by rules 1–4 (see the top of this file). */
function namePoint(places: Places, lat: number, lng: number): PlaceNames {
  const { small, large, largeMetres, localities } = places;
  const scale = localScale(lat);
  const inside = relativelyClosest(
    relativelyClosest(undefined, small, scale, lng, lat, SMALL_TOWN_METRES, 1),
    large,
    scale,
    lng,
    lat,
    largeMetres,
    1,
  );
  if (inside !== undefined) {
    const largest =
      largestContaining(large, scale, lng, lat, largeMetres) ??
      largestContaining(small, scale, lng, lat, SMALL_TOWN_METRES);
    return {
      name: inside.towns.name(inside.id),
      locality: localityInside(localities, lat, lng, scale, inside.towns, inside.id) ?? null,
      town: largest === undefined ? inside.towns.name(inside.id) : largest.towns.name(largest.id),
    };
  }

  const locality = nearestLocality(localities, lat, lng, LOCALITY_KILOMETRES);
  if (locality !== undefined) return { name: locality, locality: null, town: null };

  const near = relativelyClosest(
    relativelyClosest(undefined, small, scale, lng, lat, NEAR_METRES, Infinity),
    large,
    scale,
    lng,
    lat,
    NEAR_METRES,
    Infinity,
  );
  if (near !== undefined) return { name: near.towns.name(near.id), locality: null, town: null };
  return {
    name: nearestLocality(localities, lat, lng, NEAR_METRES / 1000) ?? null,
    locality: null,
    town: null,
  };
}

function nearestLocality(
  localities: PlaceSet,
  lat: number,
  lng: number,
  kilometres: number,
): string | undefined {
  const [id] = around(localities.index, lng, lat, 1, kilometres);
  return id === undefined ? undefined : localities.name(id);
}

/**
 * The locality of a point inside a town: the nearest one within 3 km that is nearer the point than the
 * town's centre is (in the centre itself, the town's name is the finest), lies inside the town's extent
 * (not a village beyond a small town's edge), and is not called as the town.
 */
function localityInside(
  localities: PlaceSet,
  lat: number,
  lng: number,
  scale: { readonly kx: number; readonly ky: number },
  towns: PlaceSet,
  town: number,
): string | undefined {
  const townLat = towns.lat[town] ?? NaN;
  const townLng = towns.lng[town] ?? NaN;
  const radiusMetres = towns.radiusMetres[town] ?? 0;
  let bestMetres = Math.min(
    LOCALITY_KILOMETRES * 1000,
    Math.hypot((townLng - lng) * scale.kx, (townLat - lat) * scale.ky),
  );
  const dLng = bestMetres / scale.kx;
  const dLat = bestMetres / scale.ky;
  let best: number | undefined;
  // NOTE: a box search and plane distances, as for towns: geokdbush's `around` costs ~15 µs a call, and
  // this runs for every point in a town (most journeys' ends).
  for (const id of localities.index.range(lng - dLng, lat - dLat, lng + dLng, lat + dLat)) {
    const placeLat = localities.lat[id] ?? NaN;
    const placeLng = localities.lng[id] ?? NaN;
    const metres = Math.hypot((placeLng - lng) * scale.kx, (placeLat - lat) * scale.ky);
    if (!(metres < bestMetres)) continue;
    const fromCentre = Math.hypot((placeLng - townLng) * scale.kx, (placeLat - townLat) * scale.ky);
    if (fromCentre > radiusMetres || localities.name(id) === towns.name(town)) continue;
    best = id;
    bestMetres = metres;
  }
  return best === undefined ? undefined : localities.name(best);
}

/** `PlaceNamer.placesWithin`: towns by size, then localities by distance from the box's centre. */
function placesWithin(places: Places, box: Box, limit: number): GazetteerPlace[] {
  const { small, large, localities } = places;
  const inBox = (set: PlaceSet) =>
    set.count === 0 ? [] : set.index.range(box.west, box.south, box.east, box.north);
  const centreLat = (box.south + box.north) / 2;
  const centreLng = (box.west + box.east) / 2;
  const scale = localScale(centreLat);
  const chosen: GazetteerPlace[] = [];
  const seen = new Map<string, GazetteerPlace[]>();
  const offer = (set: PlaceSet, id: number, kind: GazetteerPlace['kind']) => {
    const place = { name: set.name(id), lat: set.lat[id] ?? NaN, lng: set.lng[id] ?? NaN, kind };
    const key = place.name.toLowerCase();
    const same = seen.get(key) ?? [];
    const metres = (other: GazetteerPlace) =>
      Math.hypot((other.lng - place.lng) * scale.kx, (other.lat - place.lat) * scale.ky);
    if (same.some((other) => metres(other) < SAME_PLACE_METRES)) return;
    same.push(place);
    seen.set(key, same);
    chosen.push(place);
  };

  // Larger first (the extent grows with the population); equal ones by name, so the order never varies.
  const towns = [
    ...inBox(large).map((id) => ({ places: large, id, radius: large.radiusMetres[id] ?? 0 })),
    ...inBox(small).map((id) => ({ places: small, id, radius: small.radiusMetres[id] ?? 0 })),
  ].sort((a, b) => {
    if (a.radius !== b.radius) return b.radius - a.radius;
    const [nameA, nameB] = [a.places.name(a.id), b.places.name(b.id)];
    return nameA < nameB ? -1 : nameA > nameB ? 1 : 0;
  });
  for (const { places: set, id } of towns) {
    if (chosen.length >= limit) return chosen;
    offer(set, id, 'town');
  }

  const metresFromCentre = (id: number) =>
    Math.hypot(
      ((localities.lng[id] ?? NaN) - centreLng) * scale.kx,
      ((localities.lat[id] ?? NaN) - centreLat) * scale.ky,
    );
  const nearby = inBox(localities)
    .map((id) => ({ id, metres: metresFromCentre(id) }))
    .sort((a, b) => a.metres - b.metres || a.id - b.id);
  for (const { id } of nearby) {
    if (chosen.length >= limit) break;
    offer(localities, id, 'locality');
  }
  return chosen;
}

/** Metres per degree of longitude and latitude at a latitude (WGS84 radii of curvature, as cheap-ruler). */
function localScale(lat: number): { readonly kx: number; readonly ky: number } {
  const e2 = (1 / 298.257223563) * (2 - 1 / 298.257223563);
  const cosLat = Math.cos((lat * Math.PI) / 180);
  const w2 = 1 / (1 - e2 * (1 - cosLat * cosLat));
  const metresPerRadian = 6_378_137 * Math.sqrt(w2);
  return {
    kx: (metresPerRadian * cosLat * Math.PI) / 180 || 1e-9,
    ky: (metresPerRadian * w2 * (1 - e2) * Math.PI) / 180,
  };
}

interface Candidate {
  readonly towns: PlaceSet;
  readonly id: number;
  /** Distance ÷ the town's extent radius. */
  readonly ratio: number;
}

/** The largest town (by extent) among those within `metres` whose extent holds the point. */
function largestContaining(
  towns: PlaceSet,
  scale: { readonly kx: number; readonly ky: number },
  lng: number,
  lat: number,
  metres: number,
): { readonly towns: PlaceSet; readonly id: number } | undefined {
  if (towns.count === 0) return undefined;
  const dLng = Math.min(360, metres / scale.kx);
  const dLat = metres / scale.ky;
  let best: number | undefined;
  for (const id of towns.index.range(lng - dLng, lat - dLat, lng + dLng, lat + dLat)) {
    const radius = towns.radiusMetres[id] ?? 0;
    const distance = Math.hypot(
      ((towns.lng[id] ?? NaN) - lng) * scale.kx,
      ((towns.lat[id] ?? NaN) - lat) * scale.ky,
    );
    if (distance <= radius && (best === undefined || radius > (towns.radiusMetres[best] ?? 0))) best = id;
  }
  return best === undefined ? undefined : { towns, id: best };
}

/**
 * The town with the smallest distance ÷ extent radius among those within `metres` of the point whose ratio is
 * at most `maxRatio`, or `best` if that is better. Distances are measured on the plane tangent at the point:
 * within 25 km that is within 0.1 % of the ellipsoidal distance, ample for naming.
 */
function relativelyClosest(
  best: Candidate | undefined,
  towns: PlaceSet,
  scale: { readonly kx: number; readonly ky: number },
  lng: number,
  lat: number,
  metres: number,
  maxRatio: number,
): Candidate | undefined {
  if (towns.count === 0) return best;
  const dLng = Math.min(360, metres / scale.kx);
  const dLat = metres / scale.ky;
  let result = best;
  for (const id of towns.index.range(lng - dLng, lat - dLat, lng + dLng, lat + dLat)) {
    const dx = ((towns.lng[id] ?? NaN) - lng) * scale.kx;
    const dy = ((towns.lat[id] ?? NaN) - lat) * scale.ky;
    const distance = Math.sqrt(dx * dx + dy * dy);
    const ratio = distance / (towns.radiusMetres[id] ?? NaN);
    if (distance <= metres && ratio <= maxRatio && (result === undefined || ratio < result.ratio)) {
      result = { towns, id, ratio };
    }
  }
  return result;
}
