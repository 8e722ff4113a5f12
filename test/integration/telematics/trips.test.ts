import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { caller, eventsOfType, type BatchResult } from './telematics-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
interface JourneyBody {
  journey_reference: string;
  provider_reference: string | null;
  policy_reference: string;
  source: string;
  device_id: string | null;
  is_estimated: boolean;
  is_void: boolean;
  void_reason: string | null;
  distance_in_metres: number;
  gap_distance_in_metres: number;
  usage_premium: number;
  start_at: number;
  end_at: number;
  start_name: string | null;
  route: string;
  statement_version_reference: string | null;
}

const clock = fixedClock('2025-06-10T06:00:00Z');
const unix = (iso: string): number => Date.parse(iso) / 1000;
let t: TestApp;
let acme: Company;
const call = caller(() => t);

interface Fix {
  time: number;
  lat: number;
  lon: number;
  speed_kmh?: number;
  ignition?: boolean;
}

/**
 * A drive north from Westminster at 36 km/h (about 10 m a second): fixes `from`..`to` seconds after
 * `startS` (both included), one a second, moving; `parkAfter` adds still fixes with the ignition off.
 */
function drive(startS: number, from: number, to: number): Fix[] {
  return Array.from({ length: to - from + 1 }, (_, k) => {
    const i = from + k;
    return { time: startS + i, lat: 51.5 + i * 0.00009, lon: -0.14, speed_kmh: 36, ignition: true };
  });
}
const parked = (startS: number, at: number, lat: number): Fix => ({
  time: startS + at,
  lat,
  lon: -0.14,
  speed_kmh: 0,
  ignition: false,
});

async function send(deviceId: string, positions: Fix[]): Promise<BatchResult> {
  const r = await call('POST', '/telematics/positions', acme.sandbox, { device_id: deviceId, positions });
  assert.equal(r.statusCode, 202, r.body);
  return r.json<BatchResult>();
}

async function journeysOf(policy: string): Promise<JourneyBody[]> {
  const r = await call('GET', `/journeys?policy_reference=${policy}&limit=500`, acme.sandbox);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ journeys: JourneyBody[] }>().journeys;
}

const cut = () => t.container.services.telematics.cutPendingTrips(clock.now());

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
});
after(async () => {
  await t.close();
});

describe('trips cut from positions become journeys', () => {
  test('a drive ended by the ignition is one journey through the journey path; cutting again changes nothing', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'trip-1' });
    const startS = unix('2025-06-10T07:00:00Z');
    clock.set('2025-06-10T07:11:00Z');
    const body = await send('trip-1', [...drive(startS, 0, 599), parked(startS, 600, 51.5 + 599 * 0.00009)]);
    assert.equal(body.accepted, 601);
    const pass = await cut();
    assert.equal(pass.stored, 1);
    const [journey, ...rest] = await journeysOf(policy);
    assert.equal(rest.length, 0);
    assert.ok(journey !== undefined);
    assert.equal(journey.source, 'device');
    assert.equal(journey.device_id, 'trip-1');
    assert.equal(journey.provider_reference, `device:trip-1:${String(startS)}`);
    assert.equal(journey.is_estimated, false);
    assert.equal(journey.start_at, startS);
    assert.equal(journey.end_at, startS + 600);
    // 600 s at about 10 m/s north: 6.0 km on the ellipsoid.
    assert.ok(Math.abs(journey.distance_in_metres - 6005) < 10, String(journey.distance_in_metres));
    assert.equal(journey.gap_distance_in_metres, 0);
    assert.ok(journey.usage_premium > 0);
    assert.ok(journey.start_name !== null);
    const created = (await eventsOfType(t, 'journey.created')).filter(
      (e) => (e.data as { provider_reference?: string }).provider_reference === journey.provider_reference,
    );
    assert.equal(created.length, 1);
    assert.equal((created[0]?.data as { source?: string }).source, 'device');

    // Nothing new: no device is pending, and a repeat of the batch stores nothing.
    assert.equal((await cut()).devices, 0);
    assert.equal((await send('trip-1', drive(startS, 0, 10))).accepted, 0);
    assert.equal((await cut()).devices, 0);
    assert.equal((await journeysOf(policy)).length, 1);
  });

  test('a trip still in progress waits; once the device has been still for the idle time it is stored', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'trip-2' });
    const startS = unix('2025-06-10T08:00:00Z');
    clock.set('2025-06-10T08:05:01Z');
    await send('trip-2', drive(startS, 0, 300));
    const waiting = await cut();
    assert.equal(waiting.devices, 1);
    assert.equal(waiting.stored, 0);
    assert.equal((await journeysOf(policy)).length, 0);
    // Still nothing: the trip's last fix was 4 minutes ago.
    clock.set('2025-06-10T08:09:00Z');
    assert.equal((await cut()).stored, 0);
    // The device went quiet (power lost, say): after 5 minutes without movement the trip is finished.
    clock.set('2025-06-10T08:10:01Z');
    assert.equal((await cut()).stored, 1);
    const [journey] = await journeysOf(policy);
    assert.equal(journey?.start_at, startS);
    assert.equal(journey.end_at, startS + 300);
    assert.equal((await cut()).devices, 0);
  });

  test('a device streaming while it drives is cut at most every 30 s, not at every batch', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'trip-6' });
    const startS = unix('2025-06-10T08:30:00Z');
    clock.set('2025-06-10T08:31:00Z');
    await send('trip-6', drive(startS, 0, 59));
    assert.equal((await cut()).devices, 1);
    clock.set('2025-06-10T08:31:10Z');
    await send('trip-6', drive(startS, 60, 69));
    assert.equal((await cut()).devices, 0);
    clock.set('2025-06-10T08:31:31Z');
    await send('trip-6', drive(startS, 70, 90));
    const pass = await cut();
    assert.equal(pass.devices, 1);
    assert.equal(pass.stored, 0); // still driving
    // It stops reporting: once still for the idle time, the trip is stored.
    clock.set('2025-06-10T08:37:00Z');
    assert.equal((await cut()).stored, 1);
  });

  test('a gap while moving is bridged and reported; the positions arriving late re-cut the trip (voided and replaced)', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'trip-3' });
    const startS = unix('2025-06-10T09:00:00Z');
    const end = parked(startS, 600, 51.5 + 599 * 0.00009);
    clock.set('2025-06-10T09:11:00Z');
    await send('trip-3', [...drive(startS, 0, 299), ...drive(startS, 420, 599), end]);
    assert.equal((await cut()).stored, 1);
    const [first] = await journeysOf(policy);
    assert.ok(first !== undefined);
    // 121 s between fixes at 10 m/s: 1.2 km bridged in a straight line (the drive is straight: nothing is lost).
    assert.ok(Math.abs(first.gap_distance_in_metres - 1211) < 5, String(first.gap_distance_in_metres));

    // The phone uploads what it had buffered: the trip is re-cut without a gap.
    clock.set('2025-06-10T10:00:00Z');
    await send('trip-3', drive(startS, 300, 419));
    const pass = await cut();
    assert.equal(pass.voided, 1);
    assert.equal(pass.stored, 1);
    const all = await journeysOf(policy);
    assert.equal(all.length, 2);
    const old = all.find((j) => j.is_void);
    const replacement = all.find((j) => !j.is_void);
    assert.ok(old !== undefined && replacement !== undefined);
    assert.equal(old.journey_reference, first.journey_reference);
    assert.match(old.void_reason ?? '', /Re-cut/);
    assert.equal(replacement.provider_reference, first.provider_reference);
    assert.equal(replacement.gap_distance_in_metres, 0);
    assert.ok(Math.abs(replacement.distance_in_metres - first.distance_in_metres) < 3);
    assert.notEqual(replacement.route, first.route);
  });

  test('two drives apart by more than the idle time are two journeys; a re-cut of a billed trip is credited', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'trip-4' });
    const a = unix('2025-06-11T07:00:00Z');
    const b = unix('2025-06-11T07:20:00Z');
    clock.set('2025-06-11T08:00:00Z');
    await send('trip-4', [...drive(a, 0, 299), parked(a, 300, 51.5 + 299 * 0.00009)]);
    // Parked fixes with the speed at zero: no new trip while the vehicle stands.
    await send(
      'trip-4',
      Array.from({ length: 10 }, (_, i) => ({
        time: a + 400 + i * 60,
        lat: 51.5 + 299 * 0.00009,
        lon: -0.14,
        speed_kmh: 0,
      })),
    );
    await send('trip-4', [...drive(b, 0, 199), parked(b, 200, 51.5 + 199 * 0.00009)]);
    assert.equal((await cut()).stored, 2);
    const [first, second] = await journeysOf(policy);
    assert.equal(first?.start_at, a);
    assert.equal(second?.start_at, b);

    // A statement bills both; then the second trip is re-cut by late positions: credited on the next.
    await make.statement(t.app, acme, policy, '2025-06-11T12:00:00Z');
    clock.set('2025-06-12T08:00:00Z');
    // The device had also recorded the minute before the second drive (it was moving already).
    await send('trip-4', drive(b, -60, -1));
    const pass = await cut();
    assert.equal(pass.voided, 1);
    assert.equal(pass.stored, 1);
    const voided = (await eventsOfType(t, 'journey.voided')).filter(
      (e) => (e.data as { journey_reference?: string }).journey_reference === second.journey_reference,
    );
    assert.equal((voided[0]?.data as { billed?: boolean }).billed, true);
    const statement = await make.statement(t.app, acme, policy, '2025-06-12T12:00:00Z');
    assert.equal(statement.credits_used, second.usage_premium);
    assert.equal(statement.journey_count, 1);
  });

  test('a trip that overlaps a journey a client posted is left out (logged), and the device is not stuck', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'trip-5' });
    const startS = unix('2025-06-12T09:00:00Z');
    clock.set('2025-06-12T10:00:00Z');
    await make.journey(t.app, acme, policy, startS + 100, {
      route: '_p~iF~ps|U_ulLnnqC_mqNvxq`@',
      durationSeconds: 100,
    });
    await send('trip-5', [...drive(startS, 0, 299), parked(startS, 300, 51.5 + 299 * 0.00009)]);
    const pass = await cut();
    assert.deepEqual(pass, { devices: 1, stored: 0, voided: 0, refused: 1, failed: 0 });
    assert.equal(pass.failed, 0);
    assert.equal((await cut()).devices, 0);
    assert.deepEqual(
      (await journeysOf(policy)).map((j) => j.source),
      ['api'],
    );
  });

  test('a long drive streamed live is reread at most every quarter of its length so far, up to the idle time', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'trip-7' });
    const startS = unix('2025-06-13T11:00:00Z');
    // An hour's drive, its fixes sent every 30 s as they are made, a pass after each batch.
    const cutAtS: number[] = [];
    for (let sentS = 30; sentS <= 3600; sentS += 30) {
      clock.set(new Date((startS + sentS) * 1000));
      await send('trip-7', drive(startS, sentS - 30, sentS - 1));
      const pass = await cut();
      assert.equal(pass.stored, 0, `still driving ${String(sentS)} s in`);
      if (pass.devices === 1) cutAtS.push(sentS);
    }
    // Every 30 s (a pass's rounding) while a quarter of the trip is shorter, then that quarter, then every
    // 5 minutes (the idle time): 19 cuts reading about 23,000 fixes in all (cut every 30 s: 120 cuts
    // reading 218,000).
    const intervals = cutAtS.slice(1).map((s, k) => s - (cutAtS[k] as number));
    assert.deepEqual(intervals, [30, 30, 30, 60, 60, 90, 120, 150, 210, 270, ...Array<number>(8).fill(300)]);
    // It parks and keeps reporting, still: the trip is stored by the first cut after the idle time.
    const stopS = 3600;
    let storedAfterS: number | undefined;
    for (let k = 1; k <= 20 && storedAfterS === undefined; k++) {
      const fix = parked(startS, stopS + 30 * k, 51.5 + (stopS - 1) * 0.00009);
      clock.set(new Date((fix.time + 1) * 1000));
      await send('trip-7', [{ ...fix, ignition: true }]);
      if ((await cut()).stored === 1) storedAfterS = 30 * k;
    }
    // Still from 3,599 s: its fixes end it at 3,900 s, which the next cut (at 4,081 s, 300 s after the one
    // before) sees.
    assert.equal(storedAfterS, 480);
    const [journey] = await journeysOf(policy);
    assert.equal(journey?.start_at, startS);
    assert.equal(journey.end_at, startS + stopS + 30); // at the first still fix
  });

  test('a drive streamed live that ends with the ignition off is stored by the next pass, before its trip’s interval is due', async () => {
    const { reference: policy } = await make.policy(t.app, acme);
    await make.device(t.app, acme, policy, { deviceId: 'trip-8' });
    const startS = unix('2025-06-14T11:00:00Z');
    const cutsAt: number[] = [];
    const sendAt = async (sentS: number, fixes: Fix[]) => {
      clock.set(new Date((startS + sentS) * 1000));
      await send('trip-8', fixes);
      const pass = await cut();
      if (pass.devices === 1) cutsAt.push(sentS);
      return pass;
    };
    for (let sentS = 30; sentS <= 1230; sentS += 30)
      await sendAt(sentS, drive(startS, sentS - 30, sentS - 1));
    // 20 minutes in, the trip is read every 5 minutes: its last cut was 150 s ago, the next is not due.
    assert.equal(cutsAt.at(-1), 1080);
    const stop = parked(startS, 1259, 51.5 + 1258 * 0.00009);
    const pass = await sendAt(1260, [...drive(startS, 1230, 1258), stop]);
    assert.deepEqual([pass.devices, pass.stored], [1, 1]);
    const [journey] = await journeysOf(policy);
    assert.deepEqual([journey?.start_at, journey?.end_at], [startS, startS + 1259]);
  });
});
