/**
 * The plain implementation of driving-events.ts's rules, the oracle of its property test: the fixes copied
 * into typed-array columns, then a pass for each measure, every chord's cosines and both bearings of every
 * pair of chords computed. drivingEvents (driving-events.ts) computes the same values in fewer passes and
 * skips work that cannot change the result; the test holds the two equal on generated traces. Not used by
 * the service.
 */
import { addDays, londonDate, londonHourOn } from '../../../platform/london-calendar.ts';
import {
  DERIVED_WINDOW_SECONDS,
  FATIGUE_DRIVING_SECONDS,
  FATIGUE_REST_SECONDS,
  GAP_SECONDS,
  MIN_CHORD_METRES,
  MIN_CORNERING_SPEED_MPS,
  MOVING_SPEED_MPS,
  NIGHT_END_HOUR,
  REPEAT_SECONDS,
  type DrivingEvent,
  type DrivingEventKind,
  type EventThresholds,
  type ScoreFix,
  type TripEvents,
} from './driving-events.ts';

const RAD = Math.PI / 180;
const METRES_PER_DEGREE = 6_371_008.8 * RAD;
const KIND_INDEX: Readonly<Record<DrivingEventKind, number>> = {
  harsh_braking: 0,
  rapid_acceleration: 1,
  harsh_cornering: 2,
  speeding: 3,
  fatigue: 4,
};

/** The fixes as columns, in time order, one per second of time at most (later copies of a time dropped). */
interface Columns {
  readonly n: number;
  readonly t: Float64Array;
  readonly lat: Float64Array;
  readonly lon: Float64Array;
  readonly cos: Float64Array;
  /** m/s, NaN where the fix reported none. */
  readonly fixSpeed: Float64Array;
  /** Radians, NaN where the fix reported none. */
  readonly fixHeading: Float64Array;
}

function columns(input: readonly ScoreFix[]): Columns {
  let fixes = input;
  for (let i = 1; i < input.length; i++) {
    if ((input[i] as ScoreFix).timeS <= (input[i - 1] as ScoreFix).timeS) {
      fixes = input.toSorted((a, b) => a.timeS - b.timeS);
      break;
    }
  }
  const size = fixes.length;
  const t = new Float64Array(size);
  const lat = new Float64Array(size);
  const lon = new Float64Array(size);
  const cos = new Float64Array(size);
  const fixSpeed = new Float64Array(size);
  const fixHeading = new Float64Array(size);
  let n = 0;
  for (let i = 0; i < size; i++) {
    const f = fixes[i] as ScoreFix;
    if (n > 0 && f.timeS === t[n - 1]) continue;
    t[n] = f.timeS;
    lat[n] = f.lat;
    lon[n] = f.lon;
    cos[n] = Math.cos(f.lat * RAD);
    fixSpeed[n] = f.speedKmh === undefined ? Number.NaN : f.speedKmh / 3.6;
    fixHeading[n] = f.heading === undefined ? Number.NaN : f.heading * RAD;
    n++;
  }
  return { n, t, lat, lon, cos, fixSpeed, fixHeading };
}

/** East and north metres from fix a to fix b (equirectangular at their mean latitude). */
function eastMetres(c: Columns, a: number, b: number): number {
  let dLon = (c.lon[b] as number) - (c.lon[a] as number);
  if (dLon > 180) dLon -= 360;
  else if (dLon < -180) dLon += 360;
  return dLon * ((c.cos[a] as number) + (c.cos[b] as number)) * 0.5 * METRES_PER_DEGREE;
}
const northMetres = (c: Columns, a: number, b: number): number =>
  ((c.lat[b] as number) - (c.lat[a] as number)) * METRES_PER_DEGREE;
function chordMetres(c: Columns, a: number, b: number): number {
  const east = eastMetres(c, a, b);
  const north = northMetres(c, a, b);
  return Math.sqrt(east * east + north * north);
}
const chordBearing = (c: Columns, a: number, b: number): number =>
  Math.atan2(eastMetres(c, a, b), northMetres(c, a, b));

/** An angle difference folded into (−π, π]. */
function turn(radians: number): number {
  let r = radians % (2 * Math.PI);
  if (r > Math.PI) r -= 2 * Math.PI;
  else if (r <= -Math.PI) r += 2 * Math.PI;
  return r;
}

/**
 * For each fix, the windows either side: `back[i]` the last fix at least DERIVED_WINDOW_SECONDS before it,
 * `ahead[i]` the first at least that after it, and `next[i]` the first at least 1 s after it; −1 where there
 * is none within GAP_SECONDS.
 */
function windows(c: Columns): { back: Int32Array; ahead: Int32Array; next: Int32Array } {
  const { n, t } = c;
  const back = new Int32Array(n);
  const ahead = new Int32Array(n);
  const next = new Int32Array(n);
  let b = -1;
  let a = 0;
  let x = 0;
  for (let i = 0; i < n; i++) {
    const ti = t[i] as number;
    while (b + 1 < i && ti - (t[b + 1] as number) >= DERIVED_WINDOW_SECONDS) b++;
    back[i] = b >= 0 && ti - (t[b] as number) <= GAP_SECONDS ? b : -1;
    if (a <= i) a = i + 1;
    while (a < n && (t[a] as number) - ti < DERIVED_WINDOW_SECONDS) a++;
    ahead[i] = a < n && (t[a] as number) - ti <= GAP_SECONDS ? a : -1;
    if (x <= i) x = i + 1;
    while (x < n && (t[x] as number) - ti < 1) x++;
    next[i] = x < n && (t[x] as number) - ti <= GAP_SECONDS ? x : -1;
  }
  return { back, ahead, next };
}

/** m/s at each fix: its own speed, else the chord across its windows (or to its neighbour). */
function speeds(c: Columns, back: Int32Array, ahead: Int32Array): Float64Array {
  const v = new Float64Array(c.n);
  for (let i = 0; i < c.n; i++) {
    const own = c.fixSpeed[i] as number;
    if (own === own) {
      v[i] = own;
      continue;
    }
    let from = back[i] as number;
    let to = ahead[i] as number;
    if (from < 0) from = i > 0 && (c.t[i] as number) - (c.t[i - 1] as number) <= GAP_SECONDS ? i - 1 : i;
    if (to < 0) to = i + 1 < c.n && (c.t[i + 1] as number) - (c.t[i] as number) <= GAP_SECONDS ? i + 1 : i;
    v[i] = from === to ? 0 : chordMetres(c, from, to) / ((c.t[to] as number) - (c.t[from] as number));
  }
  return v;
}

/** Counts events once per REPEAT_SECONDS a kind, keeping each one's peak. */
class EventLog {
  readonly events: DrivingEvent[] = [];
  private readonly last: (DrivingEvent & { accelerationMps2: number | null })[] = [];

  add(
    kind: DrivingEventKind,
    c: Columns,
    i: number,
    speedMps: number,
    peak: number | null,
    duration: number | null,
  ) {
    const k = KIND_INDEX[kind];
    const atS = c.t[i] as number;
    const previous = this.last[k];
    if (previous !== undefined && atS - previous.atS < REPEAT_SECONDS) {
      if (peak !== null && previous.accelerationMps2 !== null && peak > previous.accelerationMps2)
        previous.accelerationMps2 = peak;
      return;
    }
    const event = {
      kind,
      atS,
      lat: c.lat[i] as number,
      lon: c.lon[i] as number,
      speedKmh: speedMps * 3.6,
      accelerationMps2: peak,
      durationSeconds: duration,
    };
    this.last[k] = event;
    this.events.push(event);
  }
}

/** Braking, acceleration and cornering at each fix (see the header). */
function manoeuvres(
  c: Columns,
  w: { back: Int32Array; ahead: Int32Array; next: Int32Array },
  v: Float64Array,
  thresholds: EventThresholds,
  log: EventLog,
): void {
  const { t, fixSpeed, fixHeading } = c;
  const harsh = thresholds.harshAccelerationMps2;
  const cornering = thresholds.harshCorneringMps2;
  // The previous fix's derived measures (NaN when it had none): a derived one counts only when it holds at
  // two fixes in a row, whose windows share no fix, so noise must strike twice independently.
  let lastAlong = Number.NaN;
  let lastLateral = Number.NaN;
  for (let i = 0; i < c.n; i++) {
    const j = w.next[i] as number;
    const b = w.back[i] as number;
    const a = w.ahead[i] as number;
    const windowed = b >= 0 && a >= 0;
    const ownSpeeds = j >= 0 && fixSpeed[i] === fixSpeed[i] && fixSpeed[j] === fixSpeed[j];
    const ownHeadings = j >= 0 && fixHeading[i] === fixHeading[i] && fixHeading[j] === fixHeading[j];
    // Chords only where something is derived from them: most devices report speed and heading.
    const chords = windowed && !(ownSpeeds && ownHeadings);
    const chordBefore = chords ? chordMetres(c, b, i) : 0;
    const chordAfter = chords ? chordMetres(c, i, a) : 0;
    const spanS = windowed ? ((t[a] as number) - (t[b] as number)) * 0.5 : 0;
    const speed = v[i] as number;

    let along = 0;
    let derivedAlong = Number.NaN;
    if (ownSpeeds) {
      along = ((fixSpeed[j] as number) - (fixSpeed[i] as number)) / ((t[j] as number) - (t[i] as number));
    } else if (windowed) {
      const before = chordBefore / ((t[i] as number) - (t[b] as number));
      const after = chordAfter / ((t[a] as number) - (t[i] as number));
      derivedAlong = (after - before) / spanS;
      // The weaker of the two in a row, when they agree in sign.
      along =
        derivedAlong * lastAlong > 0
          ? Math.sign(derivedAlong) * Math.min(Math.abs(derivedAlong), Math.abs(lastAlong))
          : 0;
    }
    lastAlong = derivedAlong;
    if (along <= -harsh) log.add('harsh_braking', c, i, speed, -along, null);
    else if (along >= harsh) log.add('rapid_acceleration', c, i, speed, along, null);

    let lateral = 0;
    let derivedLateral = Number.NaN;
    if (speed < MIN_CORNERING_SPEED_MPS) {
      // A heading means little this slowly.
    } else if (ownHeadings) {
      const yaw =
        turn((fixHeading[j] as number) - (fixHeading[i] as number)) / ((t[j] as number) - (t[i] as number));
      lateral = Math.abs(yaw) * ((speed + (v[j] as number)) * 0.5);
    } else if (windowed && chordBefore >= MIN_CHORD_METRES && chordAfter >= MIN_CHORD_METRES) {
      const yaw = turn(chordBearing(c, i, a) - chordBearing(c, b, i)) / spanS;
      derivedLateral = Math.abs(yaw) * speed;
      lateral = lastLateral === lastLateral ? Math.min(derivedLateral, lastLateral) : 0;
    }
    lastLateral = derivedLateral;
    if (lateral >= cornering) log.add('harsh_cornering', c, i, speed, lateral, null);
  }
}

/** Speeding spells and fatigue (see the header). */
function spells(c: Columns, v: Float64Array, thresholds: EventThresholds, log: EventLog): void {
  const { t } = c;
  const limit = thresholds.speedingAboveKmh / 3.6;
  let runStart = -1;
  let runTop = 0;
  const closeRun = (last: number) => {
    const duration = (t[last] as number) - (t[runStart] as number);
    if (duration >= thresholds.speedingMinSeconds) log.add('speeding', c, runStart, runTop, null, duration);
    runStart = -1;
  };
  let driven = 0;
  let stoppedAt = Number.NaN;
  for (let i = 0; i < c.n; i++) {
    const speed = v[i] as number;
    const dt = i > 0 ? (t[i] as number) - (t[i - 1] as number) : 0;
    if (runStart >= 0 && (speed <= limit || dt > GAP_SECONDS)) closeRun(i - 1);
    if (speed > limit) {
      if (runStart < 0) {
        runStart = i;
        runTop = speed;
      } else if (speed > runTop) runTop = speed;
    }

    if (dt >= FATIGUE_REST_SECONDS) driven = 0;
    if (speed < MOVING_SPEED_MPS) {
      if (stoppedAt !== stoppedAt) stoppedAt = t[i] as number;
      if ((t[i] as number) - stoppedAt >= FATIGUE_REST_SECONDS) driven = 0;
      continue;
    }
    stoppedAt = Number.NaN;
    if (dt < FATIGUE_REST_SECONDS) driven += dt;
    if (driven > FATIGUE_DRIVING_SECONDS) {
      log.add('fatigue', c, i, speed, null, driven);
      driven = 0;
    }
  }
  if (runStart >= 0) closeRun(c.n - 1);
}

/** Metres between fixes that fall between 00:00 and 04:00 Europe/London, shared by time where a pair straddles. */
function nightMetres(c: Columns): number {
  if (c.n < 2) return 0;
  const firstS = c.t[0] as number;
  const lastS = c.t[c.n - 1] as number;
  const nights: number[] = [];
  const lastDay = londonDate(new Date(lastS * 1000));
  for (let day = addDays(londonDate(new Date(firstS * 1000)), -1); day <= lastDay; day = addDays(day, 1)) {
    const fromS = londonHourOn(day, 0).getTime() / 1000;
    const toS = londonHourOn(day, NIGHT_END_HOUR).getTime() / 1000;
    if (toS > firstS && fromS < lastS) nights.push(fromS, toS);
  }
  let metres = 0;
  let k = 0;
  for (let i = 1; i < c.n && k < nights.length; i++) {
    const s0 = c.t[i - 1] as number;
    const s1 = c.t[i] as number;
    while (k < nights.length && (nights[k + 1] as number) <= s0) k += 2;
    if (k >= nights.length) break;
    const overlap = Math.min(s1, nights[k + 1] as number) - Math.max(s0, nights[k] as number);
    if (overlap > 0) metres += (chordMetres(c, i - 1, i) * overlap) / (s1 - s0);
  }
  return metres;
}

/** drivingEvents as the plain passes compute it; the fast path must give the same result, bit for bit. */
export function referenceDrivingEvents(fixes: readonly ScoreFix[], thresholds: EventThresholds): TripEvents {
  const c = columns(fixes);
  const w = windows(c);
  const v = speeds(c, w.back, w.ahead);
  const log = new EventLog();
  manoeuvres(c, w, v, thresholds, log);
  spells(c, v, thresholds, log);
  const events = log.events.toSorted((a, b) => a.atS - b.atS || KIND_INDEX[a.kind] - KIND_INDEX[b.kind]);
  return { events, nightMetres: nightMetres(c) };
}
