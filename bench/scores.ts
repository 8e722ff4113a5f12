/**
 * Driving scores: a trip's kept fixes → its events and score, beside the trip cutter that makes the trips.
 *
 *   npm run bench -- scores [seconds per loop, default 3] [cut|reported|derived: that loop alone]
 *
 * Generates 20 devices × about 14 hours of 1 Hz driving (smooth drives of 5–40 minutes with a harsh brake
 * now and then, 5 m of position noise, parked spells between), as trackers send them: speed and heading on
 * every fix. It cuts them into trips once (`cutTrips`, as the worker does), then on one core alternates
 * passes of three loops over the same data: `cutTrips` over each device's positions (the baseline: the work
 * scoring rides on), `scoreTrip` over each trip's fixes with the speeds and headings reported, and
 * `scoreTrip` over the same trips with neither (both derived from the positions). Figures are positions per
 * second, the best pass (least disturbed by other processes) with the median beside it, and the median pass's
 * positions per second of the process's CPU time (what one core gives when the machine is shared).
 * Target: ≥ 5 million positions scored per second. Naming one loop runs it alone, for a profile of it:
 * `npx node --cpu-prof bench/scores.ts 10 derived`.
 */
import { cutTrips, type TripPosition } from '../src/modules/telematics/rules/trips.ts';
import { scoreTrip, scoringRules, type ScoreFix } from '../src/modules/scores/rules/index.ts';
import { harshBrake, seeded, smoothDriving, Vehicle } from '../src/modules/scores/rules/trace-generator.ts';

const DEVICES = 20;
const SECONDS_PER_DEVICE = 14 * 3600;
const secondsPerLoop = Number(process.argv[2] ?? 3);
const only = process.argv[3];
const rules = scoringRules(undefined);

/** One device's day in time order: drives with parked spells (a fix a minute) between. */
function generateDevice(seed: number, startS: number): TripPosition[] {
  const random = seeded(seed);
  const vehicle = new Vehicle(
    { timeS: startS, lat: 50.5 + random() * 7, lon: -5 + random() * 6, headingDegrees: random() * 360 },
    random,
    { positionNoiseMetres: 5, speedNoiseMps: 0.2, reportHeading: true },
  );
  const parked: TripPosition[] = [];
  while (vehicle.time < startS + SECONDS_PER_DEVICE) {
    const driveEndS = vehicle.time + 300 + Math.floor(random() * 2100);
    while (vehicle.time < driveEndS) {
      smoothDriving(vehicle, random, 120);
      if (random() < 0.1) harshBrake(vehicle, 4 + random() * 3);
    }
    vehicle.reach(0, 1.5);
    const last = vehicle.fixes.at(-1);
    const parkedS = 300 + Math.floor(random() * 3300);
    for (let s = 60; s <= parkedS && last !== undefined; s += 60)
      parked.push({ timeS: last.timeS + s, lat: last.lat, lon: last.lon, speedKmh: 0, ignition: false });
    vehicle.pause(parkedS);
  }
  return [...vehicle.fixes, ...parked].sort((a, b) => a.timeS - b.timeS);
}

const devices = Array.from({ length: DEVICES }, (_, d) => generateDevice(20261129 + d, 1_781_830_000));
const positions = devices.reduce((sum, device) => sum + device.length, 0);
const trips = devices.flatMap((device) => cutTrips(device).trips);
const tripFixes = trips.reduce((sum, trip) => sum + trip.points.length, 0);
const bare: { fixes: ScoreFix[]; distanceMetres: number }[] = trips.map((trip) => ({
  fixes: trip.points.map((p) => ({ timeS: p.timeS, lat: p.lat, lon: p.lon })),
  distanceMetres: trip.distanceMetres,
}));

let events = 0;
let scored = 0;
for (const trip of trips) {
  const result = scoreTrip(trip.points, trip.distanceMetres, rules);
  if (result.scored) {
    scored++;
    events += result.events.length;
  }
}
console.log(
  `devices: ${DEVICES}, ${positions} positions; ${trips.length} trips (${scored} scored) of ${tripFixes} fixes; ${events} events`,
);

/**
 * Runs `work` once and answers units per second of wall time and per second of this process's CPU time. On a
 * machine shared with other work the wall-time figure is what a pass got; the CPU-time one is what one core
 * gives (a little low: the collector's helper threads count too).
 */
function timePass(units: number, work: () => number): { wall: number; cpu: number } {
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const checksum = work();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  if (!(checksum > 0)) throw new Error('nothing measured');
  return { wall: units / seconds, cpu: units / ((cpu.user + cpu.system) / 1e6) };
}

const allLoops: { key: string; name: string; units: number; work: () => number }[] = [
  {
    key: 'cut',
    name: 'cutTrips over each device',
    units: positions,
    work: () => devices.reduce((sum, device) => sum + cutTrips(device).trips.length, 0),
  },
  {
    key: 'reported',
    name: 'scoreTrip, speeds and headings reported',
    units: tripFixes,
    work: () =>
      trips.reduce((sum, trip) => {
        const r = scoreTrip(trip.points, trip.distanceMetres, rules);
        return sum + (r.scored ? r.score + 1 : 1);
      }, 0),
  },
  {
    key: 'derived',
    name: 'scoreTrip, speeds and headings derived',
    units: tripFixes,
    work: () =>
      bare.reduce((sum, trip) => {
        const r = scoreTrip(trip.fixes, trip.distanceMetres, rules);
        return sum + (r.scored ? r.score + 1 : 1);
      }, 0),
  },
];

const loops = allLoops.filter((loop) => only === undefined || loop.key === only);
if (loops.length === 0) throw new Error(`no loop ${String(only)}: cut, reported or derived`);
for (const loop of loops) loop.work(); // warm the JIT
const rates = loops.map((): number[] => []);
const cpuRates = loops.map((): number[] => []);
let spent = 0;
while (spent < loops.length * secondsPerLoop) {
  loops.forEach((loop, k) => {
    const rate = timePass(loop.units, loop.work);
    rates[k]?.push(rate.wall);
    cpuRates[k]?.push(rate.cpu);
    spent += loop.units / rate.wall;
  });
}
const millions = (perSecond: number) => `${(perSecond / 1e6).toFixed(1)}M`;
interface Rate {
  readonly best: number;
  readonly median: number;
}
const best = (passes: number[]): Rate => {
  const sorted = passes.toSorted((a, b) => a - b);
  return { best: sorted.at(-1) ?? 0, median: sorted[sorted.length >> 1] ?? 0 };
};
const summary = rates.map(best);
const cpuSummary = cpuRates.map(best);
loops.forEach((loop, k) => {
  const r = summary[k] ?? { best: 0, median: 0 };
  const c = cpuSummary[k] ?? { best: 0, median: 0 };
  console.log(
    `${loop.name}: ${millions(r.best)} positions/s (median pass ${millions(r.median)}); ` +
      `${millions(c.median)} per CPU second (median pass)`,
  );
});
if (loops.length === allLoops.length) {
  const [cut, reported, derived] = summary as [Rate, Rate, Rate];
  const [cutCpu, reportedCpu, derivedCpu] = cpuSummary as [Rate, Rate, Rate];
  console.log(
    `scores: ${millions(reported.best)} positions/s reported, ${millions(derived.best)} derived ` +
      `(trip cutter ${millions(cut.best)} positions/s; ratios ${(reported.best / cut.best).toFixed(2)}, ${(derived.best / cut.best).toFixed(2)}); ` +
      `per CPU second ${millions(reportedCpu.median)} reported, ${millions(derivedCpu.median)} derived ` +
      `(cutter ${millions(cutCpu.median)}; ratios ${(reportedCpu.median / cutCpu.median).toFixed(2)}, ${(derivedCpu.median / cutCpu.median).toFixed(2)})`,
  );
}
