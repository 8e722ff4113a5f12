import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { caller, type BatchResult, type Problem } from './telematics-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
interface PositionPage {
  positions: Array<{
    time: number;
    lat: number;
    lon: number;
    speed_kmh: number | null;
    policy_reference: string;
  }>;
}

const clock = fixedClock('2025-06-10T12:00:00Z');
const unix = (iso: string): number => Date.parse(iso) / 1000;
let t: TestApp;
let acme: Company;
let policy: string;
const call = caller(() => t);

const GPX = 'application/gpx+xml';
const GEOJSON = 'application/geo+json';

/** POST /telematics/positions with a raw body of the given type. */
const upload = (
  contentType: string,
  body: string,
  query = '?device_id=car-1',
  headers: Record<string, string> = acme.sandbox,
) =>
  t.app.inject({
    method: 'POST',
    url: `/telematics/positions${query}`,
    headers: { ...headers, 'content-type': contentType },
    payload: body,
  });

const gpx = (points: string, root = 'gpx') => `<?xml version="1.0" encoding="UTF-8"?>
<${root} version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
  <wpt lat="51.6" lon="-0.2"><name>ignored waypoint</name></wpt>
  <trk><name>Morning</name>
    <trkseg>${points}</trkseg>
  </trk>
</${root}>`;
const trkpt = (lat: number | string, lon: number | string, time?: string) =>
  `<trkpt lat="${lat}" lon="${lon}"><ele>12.5</ele>${time === undefined ? '' : `<time>${time}</time>`}</trkpt>`;

const positionsOf = async (deviceId: string, from: string, to: string) =>
  (
    await call('GET', `/devices/${deviceId}/positions?from=${unix(from)}&to=${unix(to)}`, acme.sandbox)
  ).json<PositionPage>().positions;

const feature = (coordinates: number[][], coordTimes: string[]) => ({
  type: 'Feature',
  geometry: { type: 'LineString', coordinates },
  properties: { name: 'track', coordTimes },
});

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  policy = (await make.policy(t.app, acme)).reference;
  await make.device(t.app, acme, policy, { deviceId: 'car-1', kind: 'phone' });
  clock.set('2025-06-10T13:00:00Z');
});
after(async () => {
  await t.close();
});

describe('POST /telematics/positions with a GPX body', () => {
  test('every track point is stored; the same document again counts duplicates', async () => {
    const document = gpx(
      [
        trkpt('51.501000', '-0.142000', '2025-06-10T12:10:00Z'),
        trkpt(51.5011, -0.1421, '2025-06-10T12:10:01.400Z'),
        `<trkpt lon="-0.1422" lat="51.5012">\n  <time>2025-06-10T13:10:02+01:00</time>\n  <extensions><speed>10</speed></extensions>\n</trkpt>`,
      ].join('\n'),
    );
    const first = await upload(GPX, document);
    assert.equal(first.statusCode, 202, first.body);
    assert.deepEqual(first.json<BatchResult>(), { accepted: 3, duplicates: 0, rejected: [] });
    const stored = await positionsOf('car-1', '2025-06-10T12:10:00Z', '2025-06-10T12:10:59Z');
    assert.deepEqual(
      stored.map((p) => [p.time, p.lat, p.lon, p.speed_kmh, p.policy_reference]),
      [
        [unix('2025-06-10T12:10:00Z'), 51.501, -0.142, null, policy],
        [unix('2025-06-10T12:10:01Z'), 51.5011, -0.1421, null, policy],
        [unix('2025-06-10T12:10:02Z'), 51.5012, -0.1422, null, policy],
      ],
    );
    const again = await upload(`${GPX}; charset=utf-8`, document);
    assert.equal(again.statusCode, 202, again.body);
    assert.deepEqual(again.json<BatchResult>(), { accepted: 0, duplicates: 3, rejected: [] });
  });

  test('a point without a time or with a bad coordinate is refused by its index; the rest are stored', async () => {
    const result = await upload(
      GPX,
      gpx(
        [
          trkpt(51.5, -0.14, '2025-06-10T12:20:00Z'),
          trkpt(51.5, -0.14),
          trkpt(95, -0.14, '2025-06-10T12:20:02Z'),
          trkpt('north', -0.14, '2025-06-10T12:20:03Z'),
          trkpt('', -0.14, '2025-06-10T12:20:04Z'),
          trkpt(51.5, -0.14, 'yesterday'),
          trkpt(51.5, -0.14, '2025-06-10T12:20:06Z'),
          trkpt(51.5, -0.14, '2025-02-30T12:20:07Z'), // no such day (not 2 March)
        ].join(''),
      ),
    );
    assert.equal(result.statusCode, 202, result.body);
    const body = result.json<BatchResult>();
    assert.equal(body.accepted, 2);
    assert.deepEqual(
      body.rejected.map((r) => [r.index, r.reason]),
      [
        [1, 'invalid_time'],
        [2, 'out_of_range'],
        [3, 'out_of_range'],
        [4, 'out_of_range'],
        [5, 'invalid_time'],
        [7, 'invalid_time'],
      ],
    );
  });

  test('a DOCTYPE (entity declarations) is refused with 422 and nothing is stored', async () => {
    const bomb = `<?xml version="1.0"?>
<!DOCTYPE gpx [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
<gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
${trkpt(51.5, -0.14, '2025-06-10T12:30:00Z')}<trkpt lat="51.5" lon="-0.14"><time>2025-06-10T12:30:01Z</time><name>&b;</name></trkpt>
</trkseg></trk></gpx>`;
    const external = `<?xml version="1.0"?><!DOCTYPE gpx SYSTEM "file:///etc/passwd"><gpx version="1.1">${trkpt(51.5, -0.14, '2025-06-10T12:30:02Z')}</gpx>`;
    for (const document of [bomb, external]) {
      const response = await upload(GPX, document);
      assert.equal(response.statusCode, 422, response.body);
      assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/);
      assert.match(response.json<Problem>().detail, /DOCTYPE/);
    }
    assert.deepEqual(await positionsOf('car-1', '2025-06-10T12:30:00Z', '2025-06-10T12:30:59Z'), []);
  });

  test('XML that is not GPX, not well-formed, or has no track point answers 422', async () => {
    const notGpx = await upload(GPX, gpx(trkpt(51.5, -0.14, '2025-06-10T12:40:00Z'), 'kml'));
    assert.equal(notGpx.statusCode, 422, notGpx.body);
    assert.match(notGpx.json<Problem>().detail, /not a GPX document: the root element is <kml>/);
    const truncated = await upload(GPX, gpx(trkpt(51.5, -0.14, '2025-06-10T12:40:00Z')).slice(0, -20));
    assert.equal(truncated.statusCode, 422, truncated.body);
    assert.match(truncated.json<Problem>().detail, /not well-formed XML/);
    const empty = await upload(GPX, gpx(''));
    assert.equal(empty.statusCode, 422, empty.body);
    assert.match(empty.json<Problem>().detail, /no track point/);
    const prototype = await upload(GPX, gpx(`<__proto__><x>1</x></__proto__>`));
    assert.equal(prototype.statusCode, 422, prototype.body);
    assert.deepEqual(await positionsOf('car-1', '2025-06-10T12:40:00Z', '2025-06-10T12:40:59Z'), []);
  });
});

describe('POST /telematics/positions with a GeoJSON body', () => {
  test('a LineString Feature and a FeatureCollection are stored', async () => {
    const single = await upload(
      GEOJSON,
      JSON.stringify(
        feature(
          [
            [-0.14, 51.5, 20],
            [-0.1401, 51.5001, 21],
          ],
          ['2025-06-10T12:50:00Z', '2025-06-10T12:50:01Z'],
        ),
      ),
    );
    assert.equal(single.statusCode, 202, single.body);
    assert.deepEqual(single.json<BatchResult>(), { accepted: 2, duplicates: 0, rejected: [] });
    const collection = await upload(
      GEOJSON,
      JSON.stringify({
        type: 'FeatureCollection',
        features: [
          feature([[-0.1401, 51.5001]], ['2025-06-10T12:50:01Z']),
          feature(
            [
              [-0.1402, 51.5002],
              [-0.1403, 95],
            ],
            ['2025-06-10T12:50:02Z', '2025-06-10T12:50:03Z'],
          ),
        ],
      }),
    );
    assert.equal(collection.statusCode, 202, collection.body);
    assert.deepEqual(
      {
        ...collection.json<BatchResult>(),
        rejected: collection.json<BatchResult>().rejected.map((r) => r.index),
      },
      { accepted: 1, duplicates: 1, rejected: [2] },
    );
    const stored = await positionsOf('car-1', '2025-06-10T12:50:00Z', '2025-06-10T12:50:59Z');
    assert.deepEqual(
      stored.map((p) => [p.time - unix('2025-06-10T12:50:00Z'), p.lat, p.lon]),
      [
        [0, 51.5, -0.14],
        [1, 51.5001, -0.1401],
        [2, 51.5002, -0.1402],
      ],
    );
  });

  test('coordinates and coordTimes differing in number answer 422 naming the feature', async () => {
    const response = await upload(
      GEOJSON,
      JSON.stringify({
        type: 'FeatureCollection',
        features: [
          feature([[-0.14, 51.5]], ['2025-06-10T12:55:00Z']),
          feature([[-0.14, 51.5]], ['2025-06-10T12:55:01Z', '2025-06-10T12:55:02Z']),
        ],
      }),
    );
    assert.equal(response.statusCode, 422, response.body);
    assert.deepEqual(
      response.json<Problem>().errors?.map((e) => e.path),
      ['/body/features/1/properties/coordTimes'],
    );
    assert.deepEqual(await positionsOf('car-1', '2025-06-10T12:55:00Z', '2025-06-10T12:55:59Z'), []);
    const point = await upload(
      GEOJSON,
      JSON.stringify({ type: 'Feature', geometry: { type: 'Point', coordinates: [0, 0] }, properties: {} }),
    );
    assert.equal(point.statusCode, 422, point.body);
  });

  test('prototype-poisoning keys are refused as in a JSON body', async () => {
    const poisoned = `{"type":"Feature","__proto__":{"polluted":true},"geometry":{"type":"LineString","coordinates":[[-0.14,51.5]]},"properties":{"coordTimes":["2025-06-10T12:58:00Z"]}}`;
    const json = await t.app.inject({
      method: 'POST',
      url: '/telematics/positions',
      headers: { ...acme.sandbox, 'content-type': 'application/json' },
      payload: `{"device_id":"car-1","__proto__":{"polluted":true},"positions":[]}`,
    });
    const geo = await upload(GEOJSON, poisoned);
    assert.equal(geo.statusCode, 422, geo.body);
    assert.equal(geo.statusCode, json.statusCode);
    assert.equal(geo.json<Problem>().code, json.json<Problem>().code);
    const constructorKey = await upload(
      GEOJSON,
      JSON.stringify({ ...feature([[-0.14, 51.5]], ['2025-06-10T12:58:00Z']), constructor: 1 }),
    );
    assert.equal(constructorKey.statusCode, 422, constructorKey.body);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });
});

describe('POST /telematics/positions: content types, device_id and credentials', () => {
  test('another content type answers 415 problem+json; so do XML types on other routes', async () => {
    for (const type of ['application/xml', 'text/csv', 'text/plain']) {
      const response = await upload(type, 'time,lat,lon\n1749556800,51.5,-0.14');
      assert.equal(response.statusCode, 415, `${type}: ${response.body}`);
      assert.equal(response.json<Problem>().code, 'UNSUPPORTED_MEDIA_TYPE');
    }
    const devices = await t.app.inject({
      method: 'POST',
      url: '/devices',
      headers: { ...acme.sandbox, 'content-type': GPX },
      payload: gpx(''),
    });
    assert.equal(devices.statusCode, 415, devices.body);
  });

  test('without ?device_id= a GPX or GeoJSON body answers 422 naming /querystring/device_id', async () => {
    for (const [type, body] of [
      [GPX, gpx(trkpt(51.5, -0.14, '2025-06-10T12:59:00Z'))],
      [GEOJSON, JSON.stringify(feature([[-0.14, 51.5]], ['2025-06-10T12:59:00Z']))],
    ] as const) {
      const response = await upload(type, body, '');
      assert.equal(response.statusCode, 422, response.body);
      assert.deepEqual(
        response.json<Problem>().errors?.map((e) => e.path),
        ['/querystring/device_id'],
      );
    }
    const bad = await upload(GPX, gpx(trkpt(51.5, -0.14, '2025-06-10T12:59:00Z')), '?device_id=%20car');
    assert.equal(bad.statusCode, 422, bad.body);
    assert.deepEqual(
      bad.json<Problem>().errors?.map((e) => e.path),
      ['/querystring/device_id'],
    );
    const unknown = await upload(GPX, gpx(trkpt(51.5, -0.14, '2025-06-10T12:59:00Z')), '?device_id=car-9');
    assert.equal(unknown.statusCode, 404, unknown.body);
    const mismatch = await call('POST', '/telematics/positions?device_id=car-2', acme.sandbox, {
      device_id: 'car-1',
      positions: [{ time: unix('2025-06-10T12:59:00Z'), lat: 51.5, lon: -0.14 }],
    });
    assert.equal(mismatch.statusCode, 422, mismatch.body);
  });

  test('without credentials a GPX body answers 401', async () => {
    const response = await upload(
      GPX,
      gpx(trkpt(51.5, -0.14, '2025-06-10T12:59:00Z')),
      '?device_id=car-1',
      {},
    );
    assert.equal(response.statusCode, 401, response.body);
  });

  test('the OpenAPI document lists the three body types', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { requestBody: { content: Record<string, unknown> } }>>;
    }>();
    const content = doc.paths['/telematics/positions']?.['post']?.requestBody.content ?? {};
    assert.deepEqual(Object.keys(content).sort(), [GEOJSON, GPX, 'application/json']);
  });
});
