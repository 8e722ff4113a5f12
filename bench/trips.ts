/**
 * Telematics trip cutting: a device's positions, in arrival order → cleaned trips measured on WGS84.
 *
 *   npm run bench -- trips [seconds per loop, default 3]
 *
 * Generates 20 devices × about 14 hours of 1 Hz positions (drives of 5–40 minutes at 20–120 km/h with
 * traffic stops, tunnels hiding 30–180 s, parked spells reporting once a minute with the ignition off), each
 * position with speed, heading, accuracy and ignition, then spoils a few percent of them as trackers do:
 * 1 % inaccurate (> 100 m), 0.5 % far away, 1 % retransmitted later (a repeated time), 1 % arriving a few
 * places late, 0.1 % out of range. On one core it times `cutTrips` per device against the baseline in the same
 * run: a plain loop over the same position objects summing `segmentDistanceMetres` (the project's WGS84
 * segment formula) between consecutive ones. Passes alternate for about `seconds` each; the figures are the
 * best pass (least disturbed by other processes), with the median beside it.
 * Target: ≥ 5 million positions/s.
 */
import { segmentDistanceMetres } from '../src/platform/geo/index.ts';
import { cutTrips, type TripPosition } from '../src/modules/telematics/rules/trips.ts';
import { seededRandom } from './support.ts';

const DEVICES = 20;
const SECONDS_PER_DEVICE = 14 * 3600;
const secondsPerLoop = Number(process.argv[2] ?? 3);

interface Fix {
  timeS: number;
  lat: number;
  lon: number;
  speedKmh: number;
  heading: number;
  accuracyM: number;
  ignition: boolean;
}

/** One device's day: clean positions in time order. */
function generateDevice(random: () => number, startS: number): Fix[] {
  const fixes: Fix[] = [];
  let lat = 50.5 + random() * 7;
  let lon = -5 + random() * 6;
  let heading = random() * 360;
  let timeS = startS;
  const endS = startS + SECONDS_PER_DEVICE;
  const emit = (speedKmh: number, ignition: boolean) =>
    fixes.push({
      timeS,
      lat,
      lon,
      speedKmh,
      heading: ((heading % 360) + 360) % 360,
      accuracyM: 3 + random() * 20,
      ignition,
    });
  const move = (metres: number) => {
    const radians = (heading * Math.PI) / 180;
    lat += (metres * Math.cos(radians)) / 111_200;
    lon += (metres * Math.sin(radians)) / (111_320 * Math.cos((lat * Math.PI) / 180));
  };
  while (timeS < endS) {
    // Parked: a fix a minute, ignition off, a little drift.
    const parkedS = 300 + Math.floor(random() * 3300);
    for (let s = 0; s < parkedS && timeS < endS; s += 60) {
      timeS += 60;
      emit(0, false);
    }
    // A drive.
    const driveEndS = timeS + 300 + Math.floor(random() * 2100);
    let kmh = 20 + random() * 100;
    while (timeS < driveEndS && timeS < endS) {
      const roll = random();
      if (roll < 0.002) {
        // A traffic stop.
        const stopS = 10 + Math.floor(random() * 110);
        for (let s = 0; s < stopS; s++) {
          timeS += 1;
          emit(0, true);
        }
      } else if (roll < 0.0025) {
        // A tunnel: no fixes while the vehicle carries on.
        const hiddenS = 30 + Math.floor(random() * 150);
        timeS += hiddenS;
        move((kmh / 3.6) * hiddenS);
      }
      timeS += 1;
      heading += (random() - 0.5) * 10;
      kmh = Math.min(120, Math.max(20, kmh + (random() - 0.5) * 4));
      move(kmh / 3.6);
      emit(kmh, true);
    }
  }
  return fixes;
}

/** The device's positions as they arrive: a few percent spoilt, retransmitted or late. */
function arrivalOrder(random: () => number, clean: readonly Fix[]): Fix[] {
  const arrived: Fix[] = [];
  const retransmitted: Fix[] = [];
  for (const fix of clean) {
    const roll = random();
    if (roll < 0.01) arrived.push({ ...fix, accuracyM: 120 + random() * 500 });
    else if (roll < 0.015) arrived.push({ ...fix, lat: fix.lat + 0.5 + random(), lon: fix.lon - 1 });
    else if (roll < 0.016) arrived.push({ ...fix, lat: 95 });
    else arrived.push(fix);
    if (random() < 0.01) retransmitted.push({ ...fix });
    // Drain some retransmissions a few places later.
    if (retransmitted.length > 0 && random() < 0.05) arrived.push(...retransmitted.splice(0));
  }
  arrived.push(...retransmitted);
  // 1 % arrive a few places late.
  for (let k = arrived.length - 8; k > 0; k--) {
    if (random() < 0.01) {
      const late = arrived[k];
      const shift = 1 + Math.floor(random() * 6);
      arrived.splice(k, 1);
      if (late) arrived.splice(k + shift, 0, late);
    }
  }
  return arrived;
}

function baselineMetres(positions: readonly TripPosition[]): number {
  let total = 0;
  let previous = positions[0];
  for (let k = 1; k < positions.length; k++) {
    const p = positions[k]!;
    total += segmentDistanceMetres(previous!.lat, previous!.lon, p.lat, p.lon);
    previous = p;
  }
  return total;
}

function cutMetres(positions: readonly TripPosition[]): number {
  let total = 0;
  for (const trip of cutTrips(positions).trips) total += trip.distanceMetres;
  return total;
}

interface Rates {
  best: number;
  median: number;
}

/** One pass of `measure` over every device; returns positions per second. */
function timePass(
  devices: readonly TripPosition[][],
  measure: (p: readonly TripPosition[]) => number,
): number {
  let checksum = 0;
  let positions = 0;
  const started = process.hrtime.bigint();
  for (const device of devices) {
    checksum += measure(device);
    positions += device.length;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (!(checksum > 0)) throw new Error('no distance measured');
  return positions / seconds;
}

/** Alternates passes of the loops until each has run about `seconds`; keeps each one's best and median. */
function race(
  devices: readonly TripPosition[][],
  loops: readonly ((p: readonly TripPosition[]) => number)[],
  seconds: number,
  positions: number,
): Rates[] {
  for (const measure of loops) measure(devices[0] ?? []); // warm the JIT
  const rates = loops.map((): number[] => []);
  let spent = 0;
  while (spent < loops.length * seconds) {
    loops.forEach((measure, k) => {
      const rate = timePass(devices, measure);
      rates[k]?.push(rate);
      spent += positions / rate;
    });
  }
  return rates.map((passes) => {
    const sorted = passes.toSorted((a, b) => a - b);
    return { best: sorted.at(-1) ?? 0, median: sorted[sorted.length >> 1] ?? 0 };
  });
}

const random = seededRandom(20261121);
const devices: TripPosition[][] = [];
for (let d = 0; d < DEVICES; d++) devices.push(arrivalOrder(random, generateDevice(random, 1_760_000_000)));
const positions = devices.reduce((sum, device) => sum + device.length, 0);

let trips = 0;
let tripMetres = 0;
let gapMetres = 0;
const dropped = new Map<string, number>();
for (const device of devices) {
  const cut = cutTrips(device);
  trips += cut.trips.length;
  for (const trip of cut.trips) {
    tripMetres += trip.distanceMetres;
    gapMetres += trip.gapDistanceMetres;
  }
  for (const fix of cut.dropped) dropped.set(fix.reason, (dropped.get(fix.reason) ?? 0) + 1);
}
const percent = (n: number) => `${((n / positions) * 100).toFixed(2)} %`;
console.log(
  `devices: ${DEVICES}, ${positions} positions (${(positions / DEVICES).toFixed(0)} a device); ${trips} trips, ` +
    `${(tripMetres / 1000).toFixed(0)} km, of which ${(gapMetres / 1000).toFixed(1)} km bridged across gaps`,
);
console.log(`dropped: ${[...dropped].map(([reason, n]) => `${reason} ${n} (${percent(n)})`).join(', ')}`);

const [baseline, cut] = race(devices, [baselineMetres, cutMetres], secondsPerLoop, positions) as [
  Rates,
  Rates,
];
const millions = (perSecond: number) => `${(perSecond / 1e6).toFixed(1)}M`;
const show = (rates: Rates) => `${millions(rates.best)} positions/s (median pass ${millions(rates.median)})`;
console.log(`baseline (plain loop summing segmentDistanceMetres over the positions): ${show(baseline)}`);
console.log(`cutTrips (clean, sort, cut, measure trips on WGS84): ${show(cut)}`);
console.log(
  `trips: ${millions(cut.best)} positions/s (baseline ${millions(baseline.best)} positions/s, ratio ${(cut.best / baseline.best).toFixed(2)})`,
);
