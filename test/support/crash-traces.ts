/**
 * Synthetic traces for crash detection: crashes and ordinary trips, driven by a small kinematic model and
 * seen through a GPS receiver. Deterministic: trace k of a kind is made from its own seed, so any one trace
 * can be made again without the others (the fixture test checks a sample against the committed set).
 *
 * The receiver: fixes at 1 Hz (most), 2 Hz, 5 Hz or 10 Hz, a few lost (3 %), times to the millisecond.
 * Position error per axis is a first-order Gauss–Markov process of 5 m standard deviation and 60 s
 * correlation time (how GNSS error behaves: metres off, but drifting slowly), plus 0.5 m of white jitter.
 * The device's Doppler speed has 1 km/h of noise and never reads below 0; a quarter of the traces send no
 * speed at all. Positions are written to 1e-6 degree (0.11 m).
 */
import { seededRandom } from './random.ts';

const G = 9.80665;
const KMH = 1 / 3.6;
const RAD = Math.PI / 180;
const METRES_PER_DEGREE = 6_371_008.8 * RAD;
const SIM_STEP_S = 0.02;
const POSITION_SIGMA_M = 5;
const POSITION_TAU_S = 60;
const JITTER_SIGMA_M = 0.5;
const SPEED_SIGMA_KMH = 1;
const T0_MS = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const LOST_FIX_SHARE = 0.03;
const NO_SPEED_SHARE = 0.25;
// Fix rates drawn from; crashes lean to fast rates, where an impact falls between fixes least.
const CRASH_RATES_HZ = [1, 1, 1, 1, 1, 1, 2, 2, 5, 10] as const;
// Ordinary trips are mostly 1 Hz (most trackers), which also keeps the committed set small.
const ORDINARY_RATES_HZ = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 5, 5, 10] as const;

export const CRASH_TRACES_SEED = 39;
export const CRASH_TRACE_COUNT = 120;
export const ORDINARY_TRIP_COUNT = 10_000;

export interface TraceFix {
  readonly timeS: number;
  readonly lat: number;
  readonly lon: number;
  readonly speedKmh?: number;
}

export interface Trace {
  readonly kind: 'crash' | 'ordinary';
  /** UNIX seconds of the impact (crash traces only). */
  readonly impactS: number | null;
  readonly fixes: readonly TraceFix[];
}

/** A stretch of driving: constant acceleration and turn rate, or an impact to a fraction of the speed. */
type Phase =
  | { readonly durationS: number; readonly accelMps2: number; readonly turnDegPerS: number }
  | { readonly impactS: number; readonly toFraction: number; readonly turnDeg: number };

type Random = () => number;
const between = (random: Random, low: number, high: number): number => low + (high - low) * random();
const gaussian = (random: Random): number =>
  Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

/** A phase that brings speed `fromKmh` to `toKmh` at `g`. */
const change = (fromKmh: number, toKmh: number, g: number, turnDegPerS = 0): Phase => ({
  durationS: (Math.abs(toKmh - fromKmh) * KMH) / (g * G),
  accelMps2: Math.sign(toKmh - fromKmh) * g * G,
  turnDegPerS,
});
const hold = (durationS: number, turnDegPerS = 0): Phase => ({ durationS, accelMps2: 0, turnDegPerS });

/** Ordinary driving: hard stops at lights, stop-start traffic, slowing down, cruising. */
function ordinaryPhases(random: Random): { startKmh: number; phases: Phase[] } {
  const turn = () => between(random, -6, 6);
  const pick = random();
  const phases: Phase[] = [];
  if (pick < 0.4) {
    const v0 = between(random, 30, 110);
    phases.push(hold(between(random, 6, 15), turn()), change(v0, 0, between(random, 0.3, 0.5)));
    phases.push(hold(between(random, 3, 10)), change(0, between(random, 20, 50), between(random, 0.15, 0.3)));
    return { startKmh: v0, phases };
  }
  if (pick < 0.7) {
    const cycles = 2 + Math.floor(random() * 3);
    for (let i = 0; i < cycles; i++) {
      const top = between(random, 10, 35);
      phases.push(change(0, top, between(random, 0.1, 0.3), turn()), hold(between(random, 0, 4), turn()));
      phases.push(change(top, 0, between(random, 0.2, 0.45)), hold(between(random, 1, 5)));
    }
    return { startKmh: 0, phases };
  }
  if (pick < 0.9) {
    const v0 = between(random, 40, 120);
    const v1 = between(random, 10, v0 - 10);
    phases.push(hold(between(random, 6, 12), turn()), change(v0, v1, between(random, 0.3, 0.5)));
    phases.push(hold(between(random, 3, 8), turn() * 2), change(v1, 0, between(random, 0.2, 0.4)), hold(3));
    return { startKmh: v0, phases };
  }
  const v0 = between(random, 20, 110);
  const v1 = between(random, 20, 110);
  phases.push(hold(between(random, 8, 20), turn()), change(v0, v1, between(random, 0.1, 0.2), turn()));
  phases.push(hold(between(random, 5, 10), turn()), change(v1, 0, between(random, 0.2, 0.4)), hold(3));
  return { startKmh: v0, phases };
}

/** A crash: cruising, perhaps braking first, an impact, a slide to a stop, then standing. */
function crashPhases(random: Random): { startKmh: number; phases: Phase[] } {
  const impactKmh = between(random, 35, 120);
  const brakeG = random() < 0.5 ? between(random, 0.2, 0.7) : 0;
  const brakeS = brakeG > 0 ? between(random, 0.2, 1.2) : 0;
  const startKmh = impactKmh + (brakeG * G * brakeS) / KMH;
  const toFraction = between(random, 0, 0.3);
  const phases: Phase[] = [hold(between(random, 10, 25), between(random, -5, 5))];
  if (brakeS > 0) phases.push({ durationS: brakeS, accelMps2: -brakeG * G, turnDegPerS: 0 });
  phases.push({ impactS: between(random, 0.08, 0.2), toFraction, turnDeg: between(random, -120, 120) });
  phases.push(change(impactKmh * toFraction, 0, between(random, 0.3, 0.9), between(random, -20, 20)));
  phases.push(hold(between(random, 20, 40)));
  return { startKmh, phases };
}

interface Truth {
  readonly timeS: number;
  readonly xM: number;
  readonly yM: number;
  readonly speedMps: number;
}

/** The true path at SIM_STEP_S, and the time the impact began (or null). */
function simulate(startKmh: number, phases: readonly Phase[]): { path: Truth[]; impactS: number | null } {
  const path: Truth[] = [{ timeS: 0, xM: 0, yM: 0, speedMps: startKmh * KMH }];
  let { xM, yM } = { xM: 0, yM: 0 };
  let speedMps = startKmh * KMH;
  let headingDeg = 0;
  let timeS = 0;
  let impactS: number | null = null;
  const step = (dtS: number, accelMps2: number, turnDegPerS: number) => {
    speedMps = Math.max(0, speedMps + accelMps2 * dtS);
    headingDeg += turnDegPerS * dtS;
    xM += speedMps * dtS * Math.sin(headingDeg * RAD);
    yM += speedMps * dtS * Math.cos(headingDeg * RAD);
    timeS += dtS;
    path.push({ timeS, xM, yM, speedMps });
  };
  for (const phase of phases) {
    if ('impactS' in phase) {
      impactS = timeS;
      const steps = Math.max(1, Math.round(phase.impactS / SIM_STEP_S));
      const accel = (speedMps * (phase.toFraction - 1)) / phase.impactS;
      for (let i = 0; i < steps; i++) step(phase.impactS / steps, accel, phase.turnDeg / phase.impactS);
      continue;
    }
    const steps = Math.round(phase.durationS / SIM_STEP_S);
    for (let i = 0; i < steps; i++) step(phase.durationS / steps, phase.accelMps2, phase.turnDegPerS);
  }
  return { path, impactS };
}

/** The true path seen by a receiver (see the file's comment). */
function observe(random: Random, path: readonly Truth[], t0S: number, kind: Trace['kind']): TraceFix[] {
  const rates = kind === 'crash' ? CRASH_RATES_HZ : ORDINARY_RATES_HZ;
  const rateHz = rates[Math.floor(random() * rates.length)] ?? 1;
  const withSpeed = random() >= NO_SPEED_SHARE;
  const lat0 = between(random, 50.5, 55);
  const lon0 = between(random, -4, 0.5);
  const cosLat = Math.cos(lat0 * RAD);
  let errorX = gaussian(random) * POSITION_SIGMA_M;
  let errorY = gaussian(random) * POSITION_SIGMA_M;
  const endS = path[path.length - 1]?.timeS ?? 0;
  const fixes: TraceFix[] = [];
  let index = 0;
  for (let timeS = random() / rateHz; timeS <= endS; timeS += 1 / rateHz) {
    const rho = Math.exp(-1 / rateHz / POSITION_TAU_S);
    const fresh = POSITION_SIGMA_M * Math.sqrt(1 - rho * rho);
    errorX = rho * errorX + fresh * gaussian(random);
    errorY = rho * errorY + fresh * gaussian(random);
    while (index + 1 < path.length && (path[index + 1] as Truth).timeS <= timeS) index++;
    const truth = path[index] as Truth;
    if (random() < LOST_FIX_SHARE) continue;
    const xM = truth.xM + errorX + JITTER_SIGMA_M * gaussian(random);
    const yM = truth.yM + errorY + JITTER_SIGMA_M * gaussian(random);
    const lat = Math.round((lat0 + yM / METRES_PER_DEGREE) * 1e6) / 1e6;
    const lon = Math.round((lon0 + xM / (METRES_PER_DEGREE * cosLat)) * 1e6) / 1e6;
    const fixS = Math.round((t0S + timeS) * 1000) / 1000;
    const speedKmh =
      Math.round(Math.max(0, truth.speedMps / KMH + SPEED_SIGMA_KMH * gaussian(random)) * 10) / 10;
    fixes.push(withSpeed ? { timeS: fixS, lat, lon, speedKmh } : { timeS: fixS, lat, lon });
  }
  return fixes;
}

/** Trace `index` of `kind`, from the set's seed. */
export function makeTrace(kind: Trace['kind'], index: number, seed = CRASH_TRACES_SEED): Trace {
  const random = seededRandom((seed * 1_000_003 + index * 2 + (kind === 'crash' ? 1 : 0)) >>> 0);
  const { startKmh, phases } = kind === 'crash' ? crashPhases(random) : ordinaryPhases(random);
  const { path, impactS } = simulate(startKmh, phases);
  const t0S = T0_MS / 1000 + index * 600;
  const fixes = observe(random, path, t0S, kind);
  return { kind, impactS: impactS === null ? null : Math.round((t0S + impactS) * 1000) / 1000, fixes };
}

/**
 * One line per trace: kind, impact (ms after the first fix, or -), first fix (ms, lat and lon in 1e-6°),
 * then the deltas of time (ms), lat and lon (1e-6°) and the speeds (0.1 km/h, or - when none were sent).
 */
export function encodeTrace(trace: Trace): string {
  const first = trace.fixes[0];
  if (first === undefined) throw new Error('a trace has fixes');
  const ms = (s: number) => Math.round(s * 1000);
  const micro = (degrees: number) => Math.round(degrees * 1e6);
  const deltas = (values: readonly number[]) => values.slice(1).map((v, i) => v - (values[i] as number));
  const withSpeed = trace.fixes.every((f) => f.speedKmh !== undefined);
  return [
    trace.kind === 'crash' ? 'c' : 'o',
    trace.impactS === null ? '-' : String(ms(trace.impactS) - ms(first.timeS)),
    `${ms(first.timeS)},${micro(first.lat)},${micro(first.lon)}`,
    deltas(trace.fixes.map((f) => ms(f.timeS))).join(','),
    deltas(trace.fixes.map((f) => micro(f.lat))).join(','),
    deltas(trace.fixes.map((f) => micro(f.lon))).join(','),
    withSpeed ? trace.fixes.map((f) => Math.round((f.speedKmh ?? 0) * 10)).join(',') : '-',
  ].join('|');
}

/** The inverse of encodeTrace. */
export function decodeTrace(line: string): Trace {
  const [kind, impact, first, dt, dLat, dLon, speeds] = line.split('|');
  const [t0, lat0, lon0] = (first ?? '').split(',').map(Number);
  const ints = (text: string | undefined) => (text ? text.split(',').map(Number) : []);
  const times = [t0 ?? 0];
  const lats = [lat0 ?? 0];
  const lons = [lon0 ?? 0];
  for (const d of ints(dt)) times.push((times[times.length - 1] ?? 0) + d);
  for (const d of ints(dLat)) lats.push((lats[lats.length - 1] ?? 0) + d);
  for (const d of ints(dLon)) lons.push((lons[lons.length - 1] ?? 0) + d);
  const speedTenths = speeds === '-' ? undefined : ints(speeds);
  const fixes = times.map((timeMs, i): TraceFix => {
    const fix = { timeS: timeMs / 1000, lat: (lats[i] ?? 0) / 1e6, lon: (lons[i] ?? 0) / 1e6 };
    return speedTenths === undefined ? fix : { ...fix, speedKmh: (speedTenths[i] ?? 0) / 10 };
  });
  return {
    kind: kind === 'c' ? 'crash' : 'ordinary',
    impactS: impact === '-' ? null : ((t0 ?? 0) + Number(impact)) / 1000,
    fixes,
  };
}
