/**
 * Derives the geocoder's data (`src/integrations/geocoding/data/`) from the open data in `../shared/data/`.
 *
 *   npx node src/integrations/geocoding/build-data.ts [source directory, default ../shared/data]
 *
 * - `uk-postcodes/gb-postcodes.csv.gz` (13.7 MB: 1,743,823 live GB postcodes) becomes
 *   `uk-postcodes/gb-postcodes.kd`: the same postcodes and positions (lossless, 1e-5°), stored in
 *   spatial-index order as varint deltas (see postcode-file.ts), so the service loads it without sorting.
 *   It is not compressed further: Brotli would make it 5.6 MB instead of 9.5, but decompressing it left an
 *   API process ≈ 10 MB more resident (the decoder's allocations and its output chunks, freed into the
 *   middle of the C heap), and git and npm compress it in transit anyway.
 * - From the GeoNames files, the places the namer uses are selected (place-names.ts: towns from gb-places.csv,
 *   localities from gb-postal-places.csv) into `geonames/gb-towns.csv` and `geonames/gb-localities.csv`.
 * - Both licence notes are copied unchanged.
 * - `README.md` records the sources' SHA-256, so anyone can check the derivation by running this again.
 * The output is deterministic: the same sources give byte-identical files.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { toCsv } from './csv.ts';
import { selectLocalities, selectTowns } from './place-names.ts';
import {
  encodePostcodeFile,
  inwardNumber,
  kdOrder,
  readPostcodeFile,
  type PostcodeColumns,
} from './postcode-file.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const repositoryRoot = path.resolve(here, '../../..');
const source = path.resolve(process.argv[2] ?? path.join(repositoryRoot, '../shared/data'));
const target = path.join(here, 'data');

const POSTCODE = /^([A-Z]{1,2}[0-9][A-Z0-9]?) ([0-9][A-Z]{2})$/;
const DEGREES = /^(-?)(\d{1,3})\.(\d{1,5})$/;

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Exact 1e-5 degree units from the text, so no binary rounding enters the data. */
function units(text: string, line: number): number {
  const match = DEGREES.exec(text);
  if (match === null)
    throw new Error(`line ${line}: ${JSON.stringify(text)} is not a coordinate with ≤ 5 decimals`);
  const [, sign, whole, fraction] = match as unknown as [string, string, string, string];
  const value = Number(whole) * 100_000 + Number(fraction.padEnd(5, '0'));
  return sign === '-' ? -value : value;
}

function readPostcodes(csv: string): PostcodeColumns {
  const lines = csv.split('\n').filter((line) => line !== '');
  if (lines.shift() !== 'postcode,lat,lon') throw new Error('gb-postcodes.csv: unexpected header');
  const count = lines.length;
  const outwardCodes: string[] = [];
  const outwardNumbers = new Map<string, number>();
  const columns = {
    count,
    outwardCodes,
    latUnits: new Int32Array(count),
    lngUnits: new Int32Array(count),
    outwardIndex: new Uint16Array(count),
    inwardCode: new Uint16Array(count),
  };
  const seen = new Set<string>();
  lines.forEach((line, i) => {
    const [postcode = '', lat = '', lng = ''] = line.split(',');
    const match = POSTCODE.exec(postcode);
    if (match === null)
      throw new Error(`line ${i + 2}: ${JSON.stringify(postcode)} is not a postcode in normal form`);
    if (seen.has(postcode)) throw new Error(`line ${i + 2}: ${postcode} appears twice`);
    seen.add(postcode);
    const [, outward, inward] = match as unknown as [string, string, string];
    let outwardNumber = outwardNumbers.get(outward);
    if (outwardNumber === undefined) {
      outwardNumber = outwardCodes.length;
      outwardNumbers.set(outward, outwardNumber);
      outwardCodes.push(outward);
    }
    columns.latUnits[i] = units(lat, i + 2);
    columns.lngUnits[i] = units(lng, i + 2);
    columns.outwardIndex[i] = outwardNumber;
    columns.inwardCode[i] = inwardNumber(inward);
  });
  if (outwardCodes.length > 65_535) throw new Error('too many outward codes for the file format');
  return columns;
}

/** Reads the written file back and checks every record against the source. */
function verify(columns: PostcodeColumns, file: Uint8Array): void {
  const { index, outwardCodes } = readPostcodeFile(file);
  const order = kdOrder(columns);
  if (outwardCodes.join() !== columns.outwardCodes.join()) throw new Error('verify: outward codes differ');
  for (let k = 0; k < columns.count; k++) {
    const i = order[k] ?? 0;
    const packed = ((columns.outwardIndex[i] ?? 0) << 16) | (columns.inwardCode[i] ?? 0);
    if (
      index.ids[k] !== packed >>> 0 ||
      index.coords[2 * k] !== Math.fround((columns.lngUnits[i] ?? 0) / 1e5) ||
      index.coords[2 * k + 1] !== Math.fround((columns.latUnits[i] ?? 0) / 1e5)
    ) {
      throw new Error(`verify: record ${k} differs from source row ${i}`);
    }
  }
}

function main(): void {
  const started = performance.now();
  const postcodesGz = fs.readFileSync(path.join(source, 'uk-postcodes/gb-postcodes.csv.gz'));
  const columns = readPostcodes(zlib.gunzipSync(postcodesGz).toString('latin1'));
  const file = encodePostcodeFile(columns);
  verify(columns, file);

  fs.mkdirSync(path.join(target, 'uk-postcodes'), { recursive: true });
  fs.mkdirSync(path.join(target, 'geonames'), { recursive: true });
  fs.writeFileSync(path.join(target, 'uk-postcodes/gb-postcodes.kd'), file);

  const read = (name: string) => fs.readFileSync(path.join(source, name));
  const places = read('geonames/gb-places.csv');
  const postalPlaces = read('geonames/gb-postal-places.csv');
  const towns = selectTowns(places.toString('utf8'));
  const localities = selectLocalities(postalPlaces.toString('utf8'));
  fs.writeFileSync(
    path.join(target, 'geonames/gb-towns.csv'),
    toCsv(['name', 'lat', 'lon', 'population'], towns),
  );
  fs.writeFileSync(
    path.join(target, 'geonames/gb-localities.csv'),
    toCsv(['name', 'lat', 'lon'], localities),
  );
  const licences = ['uk-postcodes/LICENCE-ATTRIBUTION.md', 'geonames/LICENCE-ATTRIBUTION.md'].map((name) => {
    const bytes = read(name);
    fs.writeFileSync(path.join(target, name), bytes);
    return { name, bytes };
  });

  const readme = `# Geocoder data (generated by build-data.ts; do not edit)

Derived only from the open data in \`../shared/data/\`. Licences and the attribution the service must show
are in \`uk-postcodes/LICENCE-ATTRIBUTION.md\` (OGL v3.0) and \`geonames/LICENCE-ATTRIBUTION.md\` (CC BY 4.0).

| file | derived from | how |
| --- | --- | --- |
| \`uk-postcodes/gb-postcodes.kd\` (${file.length.toLocaleString('en-GB')} bytes) | \`uk-postcodes/gb-postcodes.csv.gz\` (${postcodesGz.length.toLocaleString('en-GB')} bytes, SHA-256 \`${sha256(postcodesGz)}\`) | all ${columns.count.toLocaleString('en-GB')} postcodes and positions, unchanged, reordered for the spatial index and delta-encoded (format in \`../postcode-file.ts\`) |
| \`geonames/gb-towns.csv\` (${towns.length.toLocaleString('en-GB')} rows) | \`geonames/gb-places.csv\` (SHA-256 \`${sha256(places)}\`) | the rows that are towns (all but feature code PPLX, sections of a town): name, lat, lon, population, unchanged |
| \`geonames/gb-localities.csv\` (${localities.length.toLocaleString('en-GB')} rows) | \`geonames/gb-postal-places.csv\` (SHA-256 \`${sha256(postalPlaces)}\`) | the distinct place names with positions from GeoNames itself (accuracy 4): name, lat, lon, unchanged |
${licences.map(({ name, bytes }) => `| \`${name}\` | \`${name}\` (SHA-256 \`${sha256(bytes)}\`) | copied unchanged |`).join('\n')}

Output SHA-256 of \`gb-postcodes.kd\`: \`${sha256(file)}\`.
Rebuild: \`npx node src/integrations/geocoding/build-data.ts [path to shared/data]\`.
`;
  fs.writeFileSync(path.join(target, 'README.md'), readme);
  console.log(
    `${columns.count} postcodes in ${columns.outwardCodes.length} outward codes: ${file.length} bytes; verified; ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

main();
