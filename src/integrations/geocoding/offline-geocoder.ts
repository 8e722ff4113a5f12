/**
 * The offline reverse geocoder: nearest live GB postcode and a place name, from open data shipped in ./data
 * (OS Code-Point Open via ONS, OGL v3.0; GeoNames, CC BY 4.0 — see data/README.md for the attribution).
 *
 * - Postcode: the nearest of 1,743,823 live GB postcodes (great-circle nearest through geokdbush), if it is
 *   within 15 km; otherwise null. The cut-off sits between two measured gaps: the remotest roads sampled in
 *   Great Britain lie up to ~10 km from their nearest postcode (A897 at Forsinard 10.1 km, A838 by Loch
 *   Eriboll 8.9 km; 5 km would leave the A82 over Rannoch Moor without one), while the nearest land outside
 *   Great Britain is ≥ 27 km from any GB postcode (Torr Head, Northern Ireland 27.3 km; Point of Ayre, Isle
 *   of Man 29.6 km; Cap Gris-Nez 32.8 km).
 *   Northern Ireland gets a null postcode, not a guessed BT outward code: its postcode positions are not
 *   open data, and the field holds full postcodes only.
 * - Name: the rule in place-names.ts ("London", "Glasgow", "Belfast", else a village within 3 km, else a
 *   town or village within 15 km, else null). It applies to Northern Ireland as to Great Britain, and names
 *   the Isle of Man and the Channel Islands too where GeoNames lists their places. Inside a town, the
 *   locality too ("Camden Town" in London).
 * - Places in a box, for maps (`placesWithin`): the same towns and localities, the most prominent first.
 *
 * Loading is lazy: the first lookup (or `warm()`, which the service may call at start without awaiting)
 * reads the data in; nothing is sorted, the postcode file being already in spatial-index order. Lookups
 * that arrive meanwhile wait for the same load.
 *
 * Measured with bench/geocoder.ts on the 2-core development machine (Node 24):
 *   load (warm)        115–126 ms, of which the event loop is never held more than ~3 ms at a time
 *   memory, live       +21.3 MB array buffers (KDBush over 1.74 M postcodes: Float32 positions, 32-bit ids
 *                      that are the packed postcodes) and ≈ +1 MB heap (4,229 towns, 14,907 localities)
 *   memory, RSS        +34 to +36 MB after the load (the live data plus V8 heap headroom kept from parsing
 *                      the places, which later work reuses)
 *   lookups            ~10 µs (100,000–106,000 a second on one core) at points within ~300 m of a
 *                      postcode; ~23 µs on average over Great Britain's box with the sea, where the coverage
 *                      grid (coverage.ts) skips the postcode search
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { around } from 'geokdbush';
import { AppError } from '../../platform/errors.ts';
import { createCoverage, type Coverage } from './coverage.ts';
import {
  UNKNOWN_PLACE,
  type Box,
  type Gazetteer,
  type GazetteerPlace,
  type Place,
  type ReverseGeocoder,
} from './geocoder.ts';
import { createPlaceNamer, type PlaceNamer } from './place-names.ts';
import { PostcodeFileReader, postcodeText, type PostcodeIndex } from './postcode-file.ts';

export const DEFAULT_DATA_DIR = fileURLToPath(new URL('./data/', import.meta.url));

export interface OfflineGeocoderOptions {
  /** The folder holding uk-postcodes/ and geonames/ as build-data.ts writes them (default: ./data beside this file). */
  readonly dataDir?: string;
  /** A point farther than this from every postcode gets none (default 15,000 m; see above). */
  readonly maxPostcodeMetres?: number;
}

export interface OfflineGeocoder extends ReverseGeocoder, Gazetteer {
  /** Answers synchronously once loaded; before that, a promise that settles when loading has finished. */
  lookup(lat: number, lng: number): Promise<Place> | Place;
  /** Answers synchronously once loaded, like `lookup`. */
  placesWithin(box: Box, limit: number): Promise<GazetteerPlace[]> | GazetteerPlace[];
  /** Starts loading (once) and resolves when lookups can answer synchronously. */
  warm(): Promise<void>;
  /** Whether the data is loaded. */
  readonly ready: boolean;
}

interface Loaded {
  readonly postcodes: PostcodeIndex;
  readonly coverage: Coverage;
  readonly namer: PlaceNamer;
}

/** Bytes read at a time: each is decoded in well under a millisecond, so the event loop is never held long. */
const READ_BYTES = 64 * 1024;

/**
 * Reads the postcode file into the index through one buffer, reused for every read: the file is never whole
 * in memory, and nothing is left for the allocator to keep. (A stream would allocate a buffer a chunk, each
 * freed only at the next garbage collection; streamed through a decompressor, the file used to leave an
 * API process ≈ 10 MB more resident.)
 */
async function loadPostcodes(file: string): Promise<PostcodeIndex> {
  const reader = new PostcodeFileReader();
  const buffer = Buffer.allocUnsafeSlow(READ_BYTES);
  const handle = await fs.open(file);
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, READ_BYTES);
      if (bytesRead === 0) break;
      reader.push(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return reader.finish();
}

async function load(dataDir: string): Promise<Loaded> {
  const [postcodes, townsCsv, localitiesCsv] = await Promise.all([
    loadPostcodes(path.join(dataDir, 'uk-postcodes/gb-postcodes.kd')),
    fs.readFile(path.join(dataDir, 'geonames/gb-towns.csv'), 'utf8'),
    fs.readFile(path.join(dataDir, 'geonames/gb-localities.csv'), 'utf8'),
  ]);
  return {
    postcodes,
    coverage: createCoverage(postcodes.index.coords),
    namer: createPlaceNamer(townsCsv, localitiesCsv),
  };
}

/** Creates the offline geocoder; nothing is read until the first lookup or `warm()`. */
export function createOfflineGeocoder(options: OfflineGeocoderOptions = {}): OfflineGeocoder {
  const dataDir = options.dataDir ?? DEFAULT_DATA_DIR;
  const maxPostcodeKilometres = (options.maxPostcodeMetres ?? 15_000) / 1000;
  let loaded: Loaded | undefined;
  let loading: Promise<Loaded> | undefined;

  const ensureLoaded = (): Promise<Loaded> => {
    loading ??= load(dataDir).then(
      (data) => {
        loaded = data;
        return data;
      },
      (error: unknown) => {
        loading = undefined; // a later call tries again
        // The folder goes in the cause (for logs), not the message (which a client may see).
        throw new AppError('UPSTREAM_UNAVAILABLE', 'the offline geocoder could not load its data', {
          retryable: true,
          cause: new Error(`loading ${dataDir}`, { cause: error }),
        });
      },
    );
    return loading;
  };

  const answer = ({ postcodes, coverage, namer }: Loaded, lat: number, lng: number): Place => {
    const [packed] = coverage.mayHaveWithin(lat, lng, maxPostcodeKilometres * 1000)
      ? around(postcodes.index, lng, lat, 1, maxPostcodeKilometres)
      : [];
    return {
      postcode: packed === undefined ? null : postcodeText(postcodes.outwardCodes, packed),
      ...namer.namesAt(lat, lng),
    };
  };

  return {
    get ready() {
      return loaded !== undefined;
    },
    lookup(lat, lng) {
      if (!(Math.abs(lat) <= 90 && Math.abs(lng) <= 180)) return UNKNOWN_PLACE;
      if (loaded !== undefined) return answer(loaded, lat, lng);
      return ensureLoaded().then((data) => answer(data, lat, lng));
    },
    placesWithin(box, limit) {
      if (loaded !== undefined) return loaded.namer.placesWithin(box, limit);
      return ensureLoaded().then((data) => data.namer.placesWithin(box, limit));
    },
    async warm() {
      await ensureLoaded();
    },
  };
}
