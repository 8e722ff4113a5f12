import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCsv, parseCsvRecords, toCsv } from './csv.ts';
import { createPlaceNamer, selectLocalities, selectTowns } from './place-names.ts';

// A made-up stretch of country at 52°N: one degree of latitude is ~111.3 km, of longitude ~68.7 km.
const towns = toCsv(
  ['name', 'lat', 'lon', 'population'],
  [
    { name: 'Bigcity', lat: '52', lon: '0', population: '1000000' }, // extent 9 km
    { name: 'Edgetown', lat: '52', lon: '0.1', population: '40000' }, // 6.9 km east, extent 1.8 km
    { name: 'Lonetown', lat: '52.5', lon: '0', population: '10000' }, // extent 900 m
    { name: 'Seat, Parish', lat: '52.7', lon: '0', population: '0' }, // counted as 1,000: 285 m
  ],
);
const localities = toCsv(
  ['name', 'lat', 'lon'],
  [
    { name: 'Smallvillage', lat: '52.3', lon: '0.2' },
    { name: 'Northend', lat: '52.05', lon: '0' }, // in Bigcity, 5.6 km north of its centre
    { name: 'Bigcity', lat: '52.06', lon: '0.01' }, // a locality called as the city
    { name: 'Beyondville', lat: '52.5', lon: '0.018' }, // 1.2 km east of Lonetown, beyond its 900 m
  ],
);
const namer = createPlaceNamer(towns, localities);

describe('place names', () => {
  test('inside a town extent, the relatively closest place wins', () => {
    assert.equal(namer.nameAt(52.01, 0.02), 'Bigcity');
    assert.equal(namer.nameAt(52, 0.095), 'Edgetown'); // 19 % of Edgetown's extent, 73 % of Bigcity's
    assert.equal(namer.nameAt(52.5, 0.005), 'Lonetown');
    assert.equal(namer.nameAt(52.7, 0.001), 'Seat, Parish');
  });

  test('outside every extent: a locality within 3 km, else a town within 15 km, else null', () => {
    assert.equal(namer.nameAt(52.31, 0.2), 'Smallvillage'); // 1.1 km
    assert.equal(namer.nameAt(52.05, 0.01), 'Bigcity'); // inside its extent, a locality 700 m away
    assert.equal(namer.nameAt(52.55, 0), 'Lonetown'); // 5.6 km from Lonetown, 16.7 km from Seat, Parish
    assert.equal(namer.nameAt(52.4, 0.2), 'Smallvillage'); // 11 km from it; no town within 15 km
    assert.equal(namer.nameAt(53.5, 0), null);
  });

  test('inside a town, the largest town holding it, and the locality: nearer than the centre, inside the extent, not called as the town', () => {
    // 1.1 km from Northend, 5.6 km from the centre; the locality "Bigcity" is nearer, but it is the city.
    assert.deepEqual(namer.namesAt(52.06, 0.0), { name: 'Bigcity', locality: 'Northend', town: 'Bigcity' });
    // Near the centre, the centre is nearer than any locality.
    assert.deepEqual(namer.namesAt(52.002, 0.0), { name: 'Bigcity', locality: null, town: 'Bigcity' });
    // Edgetown's centre lies within Bigcity's extent: Edgetown, part of Bigcity.
    assert.deepEqual(namer.namesAt(52, 0.099), { name: 'Edgetown', locality: null, town: 'Bigcity' });
    // Beyondville is nearer than Lonetown's centre but outside its 900 m extent.
    assert.deepEqual(namer.namesAt(52.5, 0.008), { name: 'Lonetown', locality: null, town: 'Lonetown' });
    // Named by a locality (rule 2) or a town nearby (rule 3): nothing finer.
    assert.deepEqual(namer.namesAt(52.31, 0.2), { name: 'Smallvillage', locality: null, town: null });
    assert.deepEqual(namer.namesAt(52.55, 0), { name: 'Lonetown', locality: null, town: null });
    assert.deepEqual(namer.namesAt(53.5, 0), { name: null, locality: null, town: null });
  });

  test('places in a box: towns by size, then localities from the centre, a name once within 5 km', () => {
    const everything = { west: -1, south: 51, east: 1, north: 53 };
    assert.deepEqual(
      namer.placesWithin(everything, 100).map((place) => `${place.kind} ${place.name}`),
      [
        'town Bigcity',
        'town Edgetown',
        'town Lonetown',
        'town Seat, Parish',
        'locality Northend', // 5.6 km from the box's centre
        // 6.7 km from the town: a different place, though it shares the name.
        'locality Bigcity',
        'locality Smallvillage',
        'locality Beyondville',
      ],
    );
    assert.deepEqual(
      namer.placesWithin(everything, 2).map((place) => place.name),
      ['Bigcity', 'Edgetown'],
    );
    assert.deepEqual(namer.placesWithin({ west: -0.05, south: 52.04, east: 0.05, north: 52.07 }, 10), [
      { name: 'Northend', lat: 52.05, lng: 0, kind: 'locality' },
      { name: 'Bigcity', lat: 52.06, lng: 0.01, kind: 'locality' },
    ]);
  });

  test('selects towns without sections of towns, and positioned localities once', () => {
    const places = [
      'geonameid,name,lat,lon,feature_code,country_part_code,county,population',
      '1,London,51.50853,-0.12574,PPLC,ENG,Greater London,7556900',
      '2,Chelsea,51.48755,-0.16936,PPLX,ENG,Greater London,60000',
      '3,"Basford, Stoke-on-Trent",53.01628,-2.2123,PPL,ENG,Staffordshire,7321',
    ].join('\n');
    assert.deepEqual(
      selectTowns(places).map((town) => town.name),
      ['London', 'Basford, Stoke-on-Trent'],
    );
    const postal = [
      'outcode,place_name,country_part,country_part_code,county,county_code,admin3_name,admin3_code,lat,lon,accuracy',
      'BT1,Belfast,Northern Ireland,NIR,Belfast,BFS,,,54.5833,-5.9333,4',
      'BT2,Belfast,Northern Ireland,NIR,,,,,54.5833,-5.9333,4',
      'SW1,Buckingham Palace,England,ENG,Greater London,11609024,,,51.4956,-0.1418,3',
      'HA2,"Harrow (N, W and S)",England,ENG,Greater London,11609024,,,51.6017,-0.3592,4',
    ].join('\n');
    assert.deepEqual(selectLocalities(postal), [
      { name: 'Belfast', lat: '54.5833', lon: '-5.9333' },
      { name: 'Harrow (N, W and S)', lat: '51.6017', lon: '-0.3592' },
    ]);
  });
});

describe('csv', () => {
  test('parses quoted fields with commas and quotes, CRLF and a missing final newline', () => {
    assert.deepEqual(parseCsv('a,b\r\n"x, ""y""",2\n"",3'), [
      ['a', 'b'],
      ['x, "y"', '2'],
      ['', '3'],
    ]);
    assert.deepEqual(parseCsvRecords('name,n\n"A, B",1\n', ['n', 'name']), [{ n: '1', name: 'A, B' }]);
    assert.throws(() => parseCsvRecords('name\nA', ['lat']), /no column lat/);
  });

  test('writes what it reads', () => {
    const rows = [{ name: 'Ash, "Canterbury"', lat: '51.3' }];
    assert.deepEqual(parseCsvRecords(toCsv(['name', 'lat'], rows), ['name', 'lat']), rows);
  });
});
