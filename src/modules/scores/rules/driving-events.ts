/**
 * A trip's driving events, from the fixes the trip cutting kept (its filters' drops never reach here). Pure:
 * times are data (UNIX seconds), nothing reads the clock.
 *
 * Each fix has a speed and a heading: its own when the device reported them (a GNSS receiver measures both
 * by Doppler, so position noise does not enter them), otherwise derived from the positions over chords of
 * DERIVED_WINDOW_SECONDS (4 s) either side. NOTE: at 1 Hz with 5 m of position noise, speeds differenced
 * over one second err by about 10 m/s², so a derived acceleration compares the mean speeds of the 4 s before
 * and the 4 s after a fix (error about 0.8 m/s²), and counts only when it holds at two fixes in a row (whose
 * windows share no fix); a brake too short to show over those windows (under about 4 s) is missed.
 *
 * - `harsh_braking` / `rapid_acceleration`: the speed changes by at least `harshAccelerationMps2` (3.1 m/s²,
 *   about 7 mph in a second) on average over at least 1 s: between a fix and the first fix at least 1 s
 *   later when both reported speeds, else between the windows either side of the fix.
 * - `harsh_cornering`: lateral acceleration (speed × rate of heading change) of at least
 *   `harshCorneringMps2` (0.4 g), at speeds of MIN_CORNERING_SPEED_MPS (18 km/h) and more (a heading means
 *   little slower): reported headings 1 s or more apart, else the bearings of the chords either side of the
 *   fix (each at least MIN_CHORD_METRES long).
 * - `speeding`: above `speedingAboveKmh` for `speedingMinSeconds` (15 s) or more without a break.
 * - `fatigue`: more than FATIGUE_DRIVING_SECONDS (2 h) of driving (time moving at 5 km/h or more) without a
 *   stop of FATIGUE_REST_SECONDS (20 min): stationary, or no fixes, for that long. Counted once per 2 h.
 * - Night driving is a distance, not an event: the metres driven between 00:00 and 04:00 Europe/London.
 *
 * A pair or window spanning a gap of more than GAP_SECONDS (60 s) measures nothing. An event of a kind that
 * begins less than REPEAT_SECONDS (60 s) after the last one counted of that kind is the same event (its
 * peak is kept), so one manoeuvre sampled many times counts once.
 */
import { addDays, londonDate, londonHourOn } from '../../../platform/london-calendar.ts';

export interface ScoreFix {
  /** UNIX seconds. */
  readonly timeS: number;
  /** Degrees, WGS84. */
  readonly lat: number;
  readonly lon: number;
  readonly speedKmh?: number;
  /** Degrees clockwise from north. */
  readonly heading?: number;
}

export const EVENT_KINDS = [
  'harsh_braking',
  'rapid_acceleration',
  'harsh_cornering',
  'speeding',
  'fatigue',
] as const;
export type DrivingEventKind = (typeof EVENT_KINDS)[number];

export interface DrivingEvent {
  readonly kind: DrivingEventKind;
  /** UNIX seconds: when it began. */
  readonly atS: number;
  readonly lat: number;
  readonly lon: number;
  /** At its start; for speeding, the highest of the spell. */
  readonly speedKmh: number;
  /** Braking, acceleration and cornering: the peak magnitude, m/s². */
  readonly accelerationMps2: number | null;
  /** Speeding: the spell's length; fatigue: the driving without a rest. */
  readonly durationSeconds: number | null;
}

export interface EventThresholds {
  readonly harshAccelerationMps2: number;
  readonly harshCorneringMps2: number;
  readonly speedingAboveKmh: number;
  readonly speedingMinSeconds: number;
}

export interface TripEvents {
  /** In time order. */
  readonly events: DrivingEvent[];
  /** Metres driven between 00:00 and 04:00 Europe/London (flat approximation between fixes). */
  readonly nightMetres: number;
}

export const STANDARD_GRAVITY_MPS2 = 9.80665;
export const DERIVED_WINDOW_SECONDS = 4;
export const GAP_SECONDS = 60;
export const REPEAT_SECONDS = 60;
export const FATIGUE_DRIVING_SECONDS = 2 * 3600;
export const FATIGUE_REST_SECONDS = 20 * 60;
export const MIN_CORNERING_SPEED_MPS = 5;
export const MIN_CHORD_METRES = 20;
export const MOVING_SPEED_MPS = 5 / 3.6;
export const NIGHT_END_HOUR = 4;

const RAD = Math.PI / 180;
const METRES_PER_DEGREE = 6_371_008.8 * RAD;
const KIND_INDEX: Readonly<Record<DrivingEventKind, number>> = {
  harsh_braking: 0,
  rapid_acceleration: 1,
  harsh_cornering: 2,
  speeding: 3,
  fatigue: 4,
};

/**
 * The fixes as columns, in time order, one per time (later copies of a time dropped). NOTE: plain arrays of
 * numbers, not typed arrays: V8 keeps them on its own heap as unboxed doubles, where a trip's columns die
 * young and cost next to nothing to collect. A typed array's memory lies outside that heap, and allocating
 * it trip after trip made V8 run full collections of the whole heap, which cost more than the scoring did.
 */
interface Columns {
  readonly n: number;
  readonly t: number[];
  readonly lat: number[];
  readonly lon: number[];
  /**
   * cos(lat): taken while reading a fix that lacks its own speed or heading (those come from chords), and
   * for the others only when a chord needs it (NaN until then): most fixes report both and need none.
   */
  readonly cos: number[];
  /** m/s, NaN where the fix reported none. */
  readonly fixSpeed: number[];
  /** Radians, NaN where the fix reported none. */
  readonly fixHeading: number[];
}

const column = (size: number, value: number): number[] => new Array<number>(size).fill(value);

function inTimeOrder(fixes: readonly ScoreFix[]): boolean {
  let previous = fixes[0]?.timeS ?? 0;
  for (let i = 1; i < fixes.length; i++) {
    const timeS = (fixes[i] as ScoreFix).timeS;
    if (timeS <= previous) return false;
    previous = timeS;
  }
  return true;
}

function columns(input: readonly ScoreFix[]): Columns {
  const fixes = inTimeOrder(input) ? input : input.toSorted((a, b) => a.timeS - b.timeS);
  const size = fixes.length;
  const t = column(size, Number.NaN);
  const lat = column(size, Number.NaN);
  const lon = column(size, Number.NaN);
  const fixSpeed = column(size, Number.NaN);
  const fixHeading = column(size, Number.NaN);
  const cos = column(size, Number.NaN);
  let n = 0;
  for (let i = 0; i < size; i++) {
    const f = fixes[i] as ScoreFix;
    if (n > 0 && f.timeS === t[n - 1]) continue;
    t[n] = f.timeS;
    lat[n] = f.lat;
    lon[n] = f.lon;
    const speedKmh = f.speedKmh;
    if (speedKmh !== undefined) fixSpeed[n] = speedKmh / 3.6;
    const heading = f.heading;
    if (heading !== undefined) fixHeading[n] = heading * RAD;
    if (speedKmh === undefined || heading === undefined) cos[n] = Math.cos(f.lat * RAD);
    n++;
  }
  return { n, t, lat, lon, cos, fixSpeed, fixHeading };
}

/** cos(lat) of fix k, computed the first time a chord needs it when reading the fix did not. */
function cosine(c: Columns, k: number): number {
  let cos = c.cos[k] as number;
  if (cos !== cos) {
    cos = Math.cos((c.lat[k] as number) * RAD);
    c.cos[k] = cos;
  }
  return cos;
}

/** East and north metres from fix a to fix b (equirectangular at their mean latitude). */
function eastMetres(c: Columns, a: number, b: number): number {
  let dLon = (c.lon[b] as number) - (c.lon[a] as number);
  if (dLon > 180) dLon -= 360;
  else if (dLon < -180) dLon += 360;
  return dLon * (cosine(c, a) + cosine(c, b)) * 0.5 * METRES_PER_DEGREE;
}
const northMetres = (c: Columns, a: number, b: number): number =>
  ((c.lat[b] as number) - (c.lat[a] as number)) * METRES_PER_DEGREE;
function chordMetres(c: Columns, a: number, b: number): number {
  const east = eastMetres(c, a, b);
  const north = northMetres(c, a, b);
  return Math.sqrt(east * east + north * north);
}

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
 * is none within GAP_SECONDS. And `v[i]`, m/s: the fix's own speed, else the chord across its windows (or
 * to its neighbour).
 */
interface Windows {
  readonly back: number[];
  readonly ahead: number[];
  readonly next: number[];
  readonly v: number[];
}

function windows(c: Columns): Windows {
  const { n, t } = c;
  const back = column(n, -1);
  const ahead = column(n, -1);
  const next = column(n, -1);
  const v = column(n, Number.NaN);
  let b = -1;
  let a = 0;
  let x = 0;
  for (let i = 0; i < n; i++) {
    const ti = t[i] as number;
    while (b + 1 < i && ti - (t[b + 1] as number) >= DERIVED_WINDOW_SECONDS) b++;
    const from = b >= 0 && ti - (t[b] as number) <= GAP_SECONDS ? b : -1;
    back[i] = from;
    if (a <= i) a = i + 1;
    while (a < n && (t[a] as number) - ti < DERIVED_WINDOW_SECONDS) a++;
    const to = a < n && (t[a] as number) - ti <= GAP_SECONDS ? a : -1;
    ahead[i] = to;
    if (x <= i) x = i + 1;
    while (x < n && (t[x] as number) - ti < 1) x++;
    next[i] = x < n && (t[x] as number) - ti <= GAP_SECONDS ? x : -1;
    const own = c.fixSpeed[i] as number;
    v[i] = own === own ? own : derivedSpeed(c, i, from, to);
  }
  return { back, ahead, next, v };
}

/** m/s at fix i without its own speed: the chord from its window behind to its window ahead. */
function derivedSpeed(c: Columns, i: number, back: number, ahead: number): number {
  const { n, t } = c;
  let from = back;
  let to = ahead;
  if (from < 0) from = i > 0 && (t[i] as number) - (t[i - 1] as number) <= GAP_SECONDS ? i - 1 : i;
  if (to < 0) to = i + 1 < n && (t[i + 1] as number) - (t[i] as number) <= GAP_SECONDS ? i + 1 : i;
  return from === to ? 0 : chordMetres(c, from, to) / ((t[to] as number) - (t[from] as number));
}

/**
 * Lateral acceleration, m/s², of a turn from the chord (eastBefore, northBefore) to the chord (eastAfter,
 * northAfter) over spanS seconds at speedMps; 0 when it is below `thresholdMps2`. NOTE: a derived lateral
 * below the threshold counts neither at its fix nor at the next (which takes the weaker of the two), so its
 * value is never needed. For a turn under 90°, the tangent |cross| / dot bounds the angle from above, and a
 * tangent short of the angle the threshold needs (by a margin far wider than rounding) settles it without
 * the two arctangents, which were most of the work of deriving headings. Every other turn is measured by
 * the bearings as before, so the values that count are the same to the bit.
 */
function chordLateral(
  eastBefore: number,
  northBefore: number,
  eastAfter: number,
  northAfter: number,
  spanS: number,
  speedMps: number,
  thresholdMps2: number,
): number {
  const neededRadians = (thresholdMps2 * spanS) / speedMps;
  const cross = northBefore * eastAfter - eastBefore * northAfter;
  const dot = northBefore * northAfter + eastBefore * eastAfter;
  if (dot > 0 && Math.abs(cross) < (neededRadians * (1 - 1e-9) - 1e-12) * dot) return 0;
  const yaw = turn(Math.atan2(eastAfter, northAfter) - Math.atan2(eastBefore, northBefore)) / spanS;
  return Math.abs(yaw) * speedMps;
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
function manoeuvres(c: Columns, w: Windows, thresholds: EventThresholds, log: EventLog): void {
  const { t, fixSpeed, fixHeading } = c;
  const v = w.v;
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
    const eastBefore = chords ? eastMetres(c, b, i) : 0;
    const northBefore = chords ? northMetres(c, b, i) : 0;
    const eastAfter = chords ? eastMetres(c, i, a) : 0;
    const northAfter = chords ? northMetres(c, i, a) : 0;
    const chordBefore = Math.sqrt(eastBefore * eastBefore + northBefore * northBefore);
    const chordAfter = Math.sqrt(eastAfter * eastAfter + northAfter * northAfter);
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
      derivedLateral = chordLateral(eastBefore, northBefore, eastAfter, northAfter, spanS, speed, cornering);
      lateral = lastLateral === lastLateral ? Math.min(derivedLateral, lastLateral) : 0;
    }
    lastLateral = derivedLateral;
    if (lateral >= cornering) log.add('harsh_cornering', c, i, speed, lateral, null);
  }
}

/** Speeding spells and fatigue (see the header). */
function spells(c: Columns, v: readonly number[], thresholds: EventThresholds, log: EventLog): void {
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

/**
 * The events of one trip's kept fixes (any order; a repeated time counts once) under `thresholds`, in time
 * order, each kind counted at most once per 60 s, and the metres driven at night. See the header.
 */
export function drivingEvents(fixes: readonly ScoreFix[], thresholds: EventThresholds): TripEvents {
  const c = columns(fixes);
  const w = windows(c);
  const log = new EventLog();
  manoeuvres(c, w, thresholds, log);
  spells(c, w.v, thresholds, log);
  const events = log.events.toSorted((a, b) => a.atS - b.atS || KIND_INDEX[a.kind] - KIND_INDEX[b.kind]);
  return { events, nightMetres: nightMetres(c) };
}
