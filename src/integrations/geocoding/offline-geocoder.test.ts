import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { AppError } from '../../platform/errors.ts';
import { createOfflineGeocoder, UNKNOWN_PLACE, type Place } from './index.ts';

describe('offline reverse geocoder', () => {
  const geocoder = createOfflineGeocoder();

  before(async () => {
    await geocoder.warm();
  });

  const lookup = async (lat: number, lng: number): Promise<Place> => geocoder.lookup(lat, lng);

  test('central London: an SW1 or WC2 postcode, named London', async () => {
    const palace = await lookup(51.501, -0.1416);
    assert.match(palace.postcode ?? '', /^SW1/);
    assert.equal(palace.name, 'London');
    const strand = await lookup(51.5115, -0.116);
    assert.match(strand.postcode ?? '', /^WC2/);
    assert.equal(strand.name, 'London');
  });

  test('Glasgow: a G postcode, named Glasgow', async () => {
    const place = await lookup(55.8609, -4.2514);
    assert.match(place.postcode ?? '', /^G\d/);
    assert.equal(place.name, 'Glasgow');
  });

  test('postcodes are full postcodes in normal form', async () => {
    for (const [lat, lng] of [
      [57.1497, -2.0943], // Aberdeen
      [50.3755, -4.1427], // Plymouth
      [60.153, -1.1493], // Lerwick
      [49.9146, -6.315], // Isles of Scilly
    ] as const) {
      assert.match((await lookup(lat, lng)).postcode ?? '', /^[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}$/);
    }
  });

  test('Belfast: no postcode (BT positions are not open data), named Belfast', async () => {
    assert.deepEqual(await lookup(54.5973, -5.9301), {
      postcode: null,
      name: 'Belfast',
      locality: null,
      town: 'Belfast',
    });
  });

  test('Paris and the open sea: no postcode and no name', async () => {
    assert.deepEqual(await lookup(48.8566, 2.3522), UNKNOWN_PLACE);
    assert.deepEqual(await lookup(55, 2), UNKNOWN_PLACE); // North Sea
    assert.deepEqual(await lookup(50.9513, 1.8587), UNKNOWN_PLACE); // Calais
  });

  test('towns inside a city keep their own name; villages are named', async () => {
    assert.equal((await lookup(54.9527, -1.6034)).name, 'Gateshead');
    assert.equal((await lookup(51.3762, -0.0982)).name, 'Croydon');
    assert.equal((await lookup(52.2137, 0.4652)).name, 'Cheveley');
  });

  test('inside a city, the locality and the city; at its centre and in a small town, no locality', async () => {
    assert.deepEqual(await lookup(51.5345, -0.139), {
      postcode: 'NW1 2JA',
      name: 'London',
      locality: 'St Pancras',
      town: 'London',
    });
    // Camden Town is a town of its own, within London's extent.
    const camden = await lookup(51.5406, -0.1433);
    assert.deepEqual([camden.name, camden.town], ['Camden Town', 'London']);
    const parliament = await lookup(51.4995, -0.1248);
    assert.deepEqual([parliament.name, parliament.locality], ['London', 'Westminster']);
    // Trafalgar Square is London's centre in GeoNames: nothing there is finer than "London".
    assert.equal((await lookup(51.5076, -0.1279)).locality, null);
    // Henley's centre: Remenham, across the river, is beyond the town's extent.
    assert.deepEqual(await lookup(51.536, -0.905), {
      postcode: 'RG9 1RY',
      name: 'Henley-on-Thames',
      locality: null,
      town: 'Henley-on-Thames',
    });
    // A village (rule 2) is its own finest name, and in no town.
    const village = await lookup(52.2137, 0.4652);
    assert.deepEqual([village.name, village.locality, village.town], ['Cheveley', null, null]);
  });

  test('places in a box: the largest towns first, then localities, each name once nearby', async () => {
    const central = await geocoder.placesWithin({ west: -0.2, south: 51.45, east: -0.05, north: 51.55 }, 500);
    assert.deepEqual([central[0]?.name, central[0]?.kind], ['London', 'town']);
    const names = central.map((place) => place.name);
    assert.ok(names.includes('Soho') && names.includes('Westminster'), names.join(', '));
    assert.equal(names.filter((name) => name === 'London').length, 1, 'GeoNames’ City "London"s are one');
    const firstLocality = central.findIndex((place) => place.kind === 'locality');
    assert.ok(central.slice(firstLocality).every((place) => place.kind === 'locality'));
    for (const place of central) {
      assert.ok(place.lat >= 51.45 && place.lat <= 51.55 && place.lng >= -0.2 && place.lng <= -0.05);
    }
    // Great Britain in ten names: its largest cities.
    const country = await geocoder.placesWithin({ west: -8, south: 49.8, east: 2, north: 61 }, 10);
    assert.deepEqual(country.map((place) => place.name).slice(0, 3), ['London', 'Birmingham', 'Liverpool']);
    assert.equal(country.length, 10);
    assert.deepEqual(await geocoder.placesWithin({ west: 2, south: 48, east: 3, north: 49 }, 10), []);
  });

  test('coordinates out of range answer with nulls', async () => {
    assert.deepEqual(await lookup(91, 0), UNKNOWN_PLACE);
    assert.deepEqual(await lookup(0, -181), UNKNOWN_PLACE);
    assert.deepEqual(await lookup(Number.NaN, 0), UNKNOWN_PLACE);
  });

  test('once loaded, lookups answer synchronously in microseconds', (t) => {
    const result = geocoder.lookup(53.4774, -2.2309);
    assert.ok(!(result instanceof Promise));
    assert.equal(result.name, 'Manchester');
    const started = performance.now();
    let named = 0;
    const rounds = 20_000;
    for (let i = 0; i < rounds; i++) {
      const place = geocoder.lookup(51 + (i % 100) * 0.03, -3 + ((i * 7) % 100) * 0.03) as Place;
      if (place.name !== null) named++;
    }
    const microseconds = ((performance.now() - started) * 1000) / rounds;
    t.diagnostic(
      `${microseconds.toFixed(1)} µs a lookup over England and Wales (${named} of ${rounds} named)`,
    );
  });
});

describe('offline reverse geocoder loading', () => {
  test('is lazy: lookups during the load wait for that one load', async () => {
    const geocoder = createOfflineGeocoder();
    assert.equal(geocoder.ready, false);
    const pending = [geocoder.lookup(51.501, -0.1416), geocoder.lookup(55.8609, -4.2514)];
    assert.ok(pending.every((result) => result instanceof Promise));
    const [london, glasgow] = await Promise.all(pending);
    assert.equal(london?.name, 'London');
    assert.equal(glasgow?.name, 'Glasgow');
    assert.equal(geocoder.ready, true);
  });

  test('reports missing data as UPSTREAM_UNAVAILABLE, and tries again on the next call', async () => {
    const geocoder = createOfflineGeocoder({ dataDir: '/nonexistent/milepost-geocoding' });
    for (let attempt = 0; attempt < 2; attempt++) {
      await assert.rejects(
        async () => geocoder.lookup(51.5, -0.12),
        (error: unknown) =>
          error instanceof AppError && error.code === 'UPSTREAM_UNAVAILABLE' && error.retryable,
      );
    }
    await assert.rejects(geocoder.warm(), AppError);
    assert.equal(geocoder.ready, false);
  });
});
