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
    speed_kmh: number | null;
    attributes: Record<string, unknown>;
  }>;
}

const clock = fixedClock('2025-06-10T09:00:00Z');
const unix = (iso: string): number => Date.parse(iso) / 1000;
let t: TestApp;
let acme: Company;
const call = caller(() => t);

const send = (positions: object[], deviceId = 'tracker-1') =>
  call('POST', '/telematics/positions', acme.sandbox, { device_id: deviceId, positions });
const page = async (deviceId = 'tracker-1') => {
  const response = await call('GET', `/devices/${deviceId}/positions?limit=10000`, acme.sandbox);
  assert.equal(response.statusCode, 200, response.body);
  return response.json<PositionPage>().positions;
};

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  for (const deviceId of ['tracker-1', 'tracker-full'])
    await make.device(t.app, acme, (await make.policy(t.app, acme)).reference, { deviceId });
  clock.set('2025-06-10T13:00:00Z');
});
after(async () => {
  await t.close();
});

describe('a position’s other attributes', () => {
  test('what a tracker sends beyond the known fields is kept and read back as `attributes`', async () => {
    const at = unix('2025-06-10T12:10:00Z');
    const tracker = {
      altitude: 31.5,
      satellites: 11,
      hdop: 0.9,
      battery: 87,
      rssi: -71,
      io_239: true,
      'fw.version': 'FMB920-03.28',
      event: 'timer',
      // Quotes, a backslash and an array literal's delimiters, stored as they came.
      label: 'bay "7" \\ {a,b} NULL',
    };
    // The twelfth of a batch, as a gateway sends them: known fields and the tracker's own.
    const positions = Array.from({ length: 12 }, (_, i) => ({
      time: at + i,
      lat: 51.5 + i * 0.0001,
      lon: -0.14,
      speed_kmh: 36,
      heading: 12,
      ...(i === 11 ? tracker : {}),
    }));
    const sent = await send(positions);
    assert.equal(sent.statusCode, 202, sent.body);
    assert.deepEqual(sent.json<BatchResult>(), { accepted: 12, duplicates: 0, rejected: [] });

    const stored = await page();
    assert.equal(stored.length, 12);
    assert.deepEqual(stored[11]?.attributes, tracker);
    assert.equal(stored[11].speed_kmh, 36);
    // A position without any has none.
    assert.deepEqual(stored[0]?.attributes, {});
    // Known fields stay checked as before, each position on its own.
    const outOfRange = await send([{ time: at + 20, lat: 95, lon: 0, satellites: 3 }]);
    assert.equal(outOfRange.json<BatchResult>().rejected[0]?.reason, 'out_of_range');
  });

  test('32 attributes of 64-character names and 256-character strings are the most a position takes', async () => {
    const at = unix('2025-06-10T12:20:00Z');
    const most = Object.fromEntries(
      Array.from({ length: 32 }, (_, i) => [
        `a${String(i).padStart(2, '0')}${'x'.repeat(61)}`,
        'v'.repeat(256),
      ]),
    );
    const sent = await send([{ time: at, lat: 51.5, lon: -0.14, ...most }]);
    assert.equal(sent.statusCode, 202, sent.body);
    const stored = (await page()).find((p) => p.time === at);
    assert.deepEqual(stored?.attributes, most);
  });

  test('a full batch whose every position carries 32 attributes is taken (the body’s shape limits leave room for them)', async () => {
    const from = unix('2025-06-10T10:00:00Z');
    const io = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`io${String(i)}`, i]));
    const positions = Array.from({ length: 10_000 }, (_, i) => ({
      time: from + i,
      lat: 51.5,
      lon: -0.14,
      ...io,
    }));
    const sent = await send(positions, 'tracker-full');
    assert.equal(sent.statusCode, 202, sent.body.slice(0, 500));
    assert.equal(sent.json<BatchResult>().accepted, 10_000);
    const stored = await page('tracker-full');
    assert.equal(stored.length, 10_000);
    assert.deepEqual(stored[0]?.attributes, io);
  });

  test('beyond the bounds the batch is 422 naming the position, and nothing of it is stored', async () => {
    const at = unix('2025-06-10T12:30:00Z');
    const good = { time: at, lat: 51.5, lon: -0.14 };
    const cases: Array<{ extra: Record<string, unknown>; path: RegExp; message: RegExp }> = [
      {
        extra: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${String(i)}`, i])),
        path: /^\/body\/positions\/1$/,
        message: /33 other attributes; at most 32/,
      },
      { extra: { ['n'.repeat(65)]: 1 }, path: /^\/body\/positions\/1\/n{65}$/, message: /64/ },
      { extra: { 'bad name': 1 }, path: /^\/body\/positions\/1\/bad name$/, message: /letter/ },
      { extra: { note: 'x'.repeat(257) }, path: /^\/body\/positions\/1\/note$/, message: /256/ },
      {
        extra: { nested: { a: 1 } },
        path: /^\/body\/positions\/1\/nested$/,
        message: /number|string|boolean/,
      },
      { extra: { list: [1, 2] }, path: /^\/body\/positions\/1\/list$/, message: /number|string|boolean/ },
      { extra: { nothing: null }, path: /^\/body\/positions\/1\/nothing$/, message: /number|string|boolean/ },
      // A known field is still the known field: its type is checked.
      { extra: { speed_kmh: 'fast' }, path: /^\/body\/positions\/1\/speed_kmh$/, message: /number/ },
    ];
    for (const { extra, path, message } of cases) {
      const response = await send([good, { time: at + 1, lat: 51.5, lon: -0.14, ...extra }]);
      assert.equal(response.statusCode, 422, `${JSON.stringify(extra).slice(0, 80)}: ${response.body}`);
      const problem = response.json<Problem>();
      assert.equal(problem.code, 'VALIDATION_FAILED');
      // A value of no allowed type is named once per type it is not: one of them says why.
      assert.ok(
        problem.errors?.some((e) => path.test(e.path) && message.test(e.message)),
        `${String(path)} ${String(message)} in ${response.body}`,
      );
    }
    assert.equal((await page()).filter((p) => p.time >= at).length, 0);
  });
});
