import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestApp, type TestApp } from '../../support/app.ts';

// GET /places: the offline gazetteer's towns and localities in a box, for maps drawn without tiles.
interface PlaceList {
  places: Array<{ name: string; lat: number; lng: number; kind: 'town' | 'locality' }>;
  attribution: string;
}

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const places = (query: Record<string, string>, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: '/places', query, headers });

test('central London: London first, then the towns and localities in the box, with the credit', async () => {
  const response = await places({
    west: '-0.2',
    south: '51.45',
    east: '-0.05',
    north: '51.55',
    limit: '200',
  });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['cache-control'], 'public, max-age=86400');
  const body = response.json<PlaceList>();
  assert.deepEqual(body.places[0], { name: 'London', lat: 51.50853, lng: -0.12574, kind: 'town' });
  const names = body.places.map((place) => place.name);
  for (const name of ['Soho', 'Westminster', 'Camden Town', 'Covent Garden'])
    assert.ok(names.includes(name), name);
  assert.equal(new Set(names).size, names.length, 'each name once in a box this size');
  assert.match(body.attribution, /GeoNames .*CC BY 4\.0/);

  const fewer = await places({ west: '-0.2', south: '51.45', east: '-0.05', north: '51.55', limit: '3' });
  assert.deepEqual(
    fewer.json<PlaceList>().places.map((place) => place.name),
    names.slice(0, 3),
  );
});

test('open data: no credentials are needed, and credentials sent are not read', async () => {
  const query = { west: '-1.3', south: '51.7', east: '-1.2', north: '51.8' };
  for (const headers of [{}, { authorization: 'Bearer not-a-token' }, { environment: 'mock' }]) {
    const response = await places(query, headers);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json<PlaceList>().places[0]?.name, 'Oxford');
  }
  // Outside the gazetteer (France): an empty list.
  const paris = await places({ west: '2.2', south: '48.8', east: '2.4', north: '48.9' });
  assert.deepEqual(paris.json<PlaceList>().places, []);
});

test('a box the wrong way round, out of range or incomplete → 422 naming the field', async () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ west: '0', south: '51', east: '-1', north: '52' }, '/querystring/east'],
    [{ west: '-1', south: '52', east: '0', north: '51' }, '/querystring/north'],
    [{ west: '-1', south: '51', east: '0', north: '91' }, '/querystring/north'],
    [{ west: '-1', south: '51', east: '0' }, '/querystring/north'],
    [{ west: 'x', south: '51', east: '0', north: '52' }, '/querystring/west'],
    [{ west: '-1', south: '51', east: '0', north: '52', limit: '0' }, '/querystring/limit'],
    [{ west: '-1', south: '51', east: '0', north: '52', radius: '5' }, '/querystring'],
  ];
  for (const [query, path] of cases) {
    const response = await places(query);
    assert.equal(response.statusCode, 422, `${JSON.stringify(query)}: ${response.body}`);
    const problem = response.json<{ code: string; errors: Array<{ path: string }> }>();
    assert.equal(problem.code, 'VALIDATION_FAILED');
    assert.ok(
      problem.errors.some((error) => error.path.startsWith(path)),
      `${JSON.stringify(query)} names ${path}: ${response.body}`,
    );
  }
});
