/**
 * Crash detection from a trip's positions. Pure: the times are data, nothing reads the clock, and the same
 * fixes in any order give the same crashes (they are sorted inside).
 *
 * What separates a crash from braking is how fast the speed goes, not how far it falls. Ordinary hard
 * braking to a stop at lights is about 0.3–0.5 g (3–5 m/s²) and loses at most about 18 km/h in any second;
 * an impact takes the speed away in about a tenth of a second (tens of g). Fixes at 1–10 Hz cannot see the
 * impact itself, so deceleration is measured as the most speed lost between two fixes, each pair over at
 * least PEAK_SPAN_SECONDS (1 s): a fall of Δv km/h between fixes 0.1 s apart counts as Δv per second. At
 * 1 Hz that is what the fixes give anyway; at 10 Hz it keeps a 0.1 s speed difference's noise from passing
 * for a deceleration, and it makes the figure comparable at every fix rate. A crash from 40 km/h to a stop
 * then measures about 1.1 g when the impact falls between two fixes, and no less than about 0.6 g when a
 * fix lands in the middle of it; braking at 0.5 g measures 0.5 g. The default of 0.65 g lies between,
 * above ordinary braking by several times the noise of a device's Doppler speed (about 1 km/h). The drop
 * alone would not do: braking at 0.5 g from 60 km/h loses 35 km/h in 2 s, as much as a crash.
 *
 * Speeds derived from positions (a fix without `speedKmh`) are the mean over the second before the fix: an
 * impact in the middle of that second shows as two halves, and position noise (a few km/h on the difference
 * of two such speeds) can lift 0.5 g braking over 0.65 g. A drop measured on any derived speed must
 * therefore reach `minDecelerationG` + DERIVED_SPEED_MARGIN_G (0.4 g): low-speed crashes on devices that
 * send no speed are missed more often, and hard braking is not taken for a crash.
 *
 * A crash is found at fixes a < b when, with the thresholds `t`:
 * 1. the speed at a is at least `t.minSpeedBeforeKmh`, and the vehicle was truly moving: over the
 *    MOVING_BEFORE_SECONDS (5 s) before a, the mean of the device's speeds (when every fix there has one)
 *    or the straight-line distance over the time is at least `t.minSpeedBeforeKmh`. Positions with 5 m of
 *    noise can fake a speed between two fixes but not 42 m of straight line in 5 s, so a parked device's
 *    noise never passes (and a crash in the first 5 s of data is not looked for);
 * 2. b is at most `t.dropWindowSeconds` after a, the speed falls by at least `t.minDropKmh` from a to b,
 *    and the peak deceleration between fixes from a to b (above) is at least `t.minDecelerationG` (plus
 *    the margin when a speed among them is derived);
 * 3. the vehicle stops: a fix from b to `t.stopWithinSeconds` after it has a speed at most `t.stopSpeedKmh`.
 * The speed at a fix is the device's (`speedKmh`) when it sent one; else the distance from the latest fix
 * at least DERIVED_SPEED_SPAN_SECONDS earlier over the time between (from the next such fix for the first).
 * Of the fixes b after one a, the one of the highest deceleration is taken (the earliest of equals); a
 * crash is reported at b (where the vehicle was when the drop was seen), and the search goes on after the
 * stopping fix, so one crash is reported once.
 * Fixes of a time already seen (after sorting by time, lat, lon, speed) and fixes with a non-finite time
 * or place are skipped; a speed that is negative or not finite counts as not sent.
 */

export interface CrashFix {
  /** UNIX seconds; fractions allowed (fixes faster than 1 Hz). */
  readonly timeS: number;
  /** Degrees, WGS84. */
  readonly lat: number;
  readonly lon: number;
  /** The device's own (Doppler) speed, when it sent one. */
  readonly speedKmh?: number | undefined;
}

export interface CrashThresholds {
  /** Least speed before the drop. */
  readonly minSpeedBeforeKmh: number;
  /** Least fall in speed. */
  readonly minDropKmh: number;
  /** Longest time over which the fall may happen. */
  readonly dropWindowSeconds: number;
  /** Least deceleration: the fall over max(its duration, 1 s), in standard gravities (9.80665 m/s²). */
  readonly minDecelerationG: number;
  /** A speed at or below this is stopped. */
  readonly stopSpeedKmh: number;
  /** Longest time from the end of the drop to the stop. */
  readonly stopWithinSeconds: number;
}

export interface DetectedCrash {
  /** The time of the first fix that shows the drop; the impact is at most `dropWindowSeconds` earlier. */
  readonly at: Date;
  readonly lat: number;
  readonly lon: number;
  /** Speed at the last fix before the drop, 0.1 km/h. */
  readonly speedBeforeKmh: number;
  /** Speed at the fix that shows the drop, 0.1 km/h. */
  readonly speedAfterKmh: number;
  readonly dropKmh: number;
  /** 0.01 g. */
  readonly decelerationG: number;
}

/** The defaults, used for any threshold a product does not set. */
export const DEFAULT_CRASH_THRESHOLDS: CrashThresholds = Object.freeze({
  minSpeedBeforeKmh: 30,
  minDropKmh: 25,
  dropWindowSeconds: 2,
  minDecelerationG: 0.65,
  stopSpeedKmh: 5,
  stopWithinSeconds: 10,
});

/** The product rule `crash_detection` as the API spells it; every field optional. */
export interface CrashDetectionRule {
  readonly min_speed_before_kmh?: number;
  readonly min_drop_kmh?: number;
  readonly drop_window_seconds?: number;
  readonly min_deceleration_g?: number;
  readonly stop_speed_kmh?: number;
  readonly stop_within_seconds?: number;
}

export const PEAK_SPAN_SECONDS = 1;
export const MOVING_BEFORE_SECONDS = 5;
/** The shortest time a speed is derived over from positions: shorter spans are mostly position noise. */
export const DERIVED_SPEED_SPAN_SECONDS = 1;
export const STANDARD_GRAVITY_MPS2 = 9.80665;
export const DERIVED_SPEED_MARGIN_G = 0.4;

const KMH_PER_MPS = 3.6;
const RAD = Math.PI / 180;
const METRES_PER_DEGREE = 6_371_008.8 * RAD;

/** A product's rule (absent fields, or an absent rule, take the defaults) → thresholds. */
export function crashThresholds(rule: CrashDetectionRule | undefined): CrashThresholds {
  const d = DEFAULT_CRASH_THRESHOLDS;
  return {
    minSpeedBeforeKmh: rule?.min_speed_before_kmh ?? d.minSpeedBeforeKmh,
    minDropKmh: rule?.min_drop_kmh ?? d.minDropKmh,
    dropWindowSeconds: rule?.drop_window_seconds ?? d.dropWindowSeconds,
    minDecelerationG: rule?.min_deceleration_g ?? d.minDecelerationG,
    stopSpeedKmh: rule?.stop_speed_kmh ?? d.stopSpeedKmh,
    stopWithinSeconds: rule?.stop_within_seconds ?? d.stopWithinSeconds,
  };
}

interface Fix {
  readonly timeS: number;
  readonly lat: number;
  readonly lon: number;
  readonly deviceSpeedKmh: number | undefined;
}

const compareFixes = (a: Fix, b: Fix): number =>
  a.timeS - b.timeS || a.lat - b.lat || a.lon - b.lon || (a.deviceSpeedKmh ?? -1) - (b.deviceSpeedKmh ?? -1);

/** Valid fixes sorted, one per time. */
function cleanFixes(fixes: readonly CrashFix[]): Fix[] {
  const valid: Fix[] = [];
  for (const f of fixes) {
    if (!Number.isFinite(f.timeS) || !Number.isFinite(f.lat) || !Number.isFinite(f.lon)) continue;
    const speed = f.speedKmh;
    const deviceSpeedKmh = speed !== undefined && Number.isFinite(speed) && speed >= 0 ? speed : undefined;
    valid.push({ timeS: f.timeS, lat: f.lat, lon: f.lon, deviceSpeedKmh });
  }
  valid.sort(compareFixes);
  return valid.filter((f, i) => i === 0 || valid[i - 1]?.timeS !== f.timeS);
}

/** Metres between two fixes: equirectangular at their mean latitude (a few metres apart, so exact enough). */
function metresBetween(a: Fix, b: Fix): number {
  const north = (b.lat - a.lat) * METRES_PER_DEGREE;
  const east = (b.lon - a.lon) * METRES_PER_DEGREE * Math.cos(((a.lat + b.lat) / 2) * RAD);
  return Math.hypot(north, east);
}

/** Each fix's speed: the device's, else derived over at least DERIVED_SPEED_SPAN_SECONDS; NaN when neither. */
function speedsKmh(fixes: readonly Fix[]): number[] {
  const speeds: number[] = [];
  let back = -1; // the latest index at least the span before i
  for (let i = 0; i < fixes.length; i++) {
    const f = fixes[i] as Fix;
    while (back + 1 < i && f.timeS - (fixes[back + 1] as Fix).timeS >= DERIVED_SPEED_SPAN_SECONDS) back++;
    if (f.deviceSpeedKmh !== undefined) {
      speeds.push(f.deviceSpeedKmh);
      continue;
    }
    let other: Fix | undefined = back >= 0 ? fixes[back] : undefined;
    if (other === undefined)
      other = fixes.find((g) => g.timeS - f.timeS >= DERIVED_SPEED_SPAN_SECONDS) ?? undefined;
    speeds.push(
      other === undefined
        ? Number.NaN
        : (metresBetween(other, f) / Math.abs(f.timeS - other.timeS)) * KMH_PER_MPS,
    );
  }
  return speeds;
}

/** Whether the vehicle moved at `minKmh` or faster on average over the MOVING_BEFORE_SECONDS before `a`. */
function movingBefore(fixes: readonly Fix[], a: number, minKmh: number): boolean {
  const end = fixes[a] as Fix;
  let c = a;
  while (c > 0 && end.timeS - (fixes[c] as Fix).timeS < MOVING_BEFORE_SECONDS) c--;
  const start = fixes[c] as Fix;
  const spanS = end.timeS - start.timeS;
  if (spanS < MOVING_BEFORE_SECONDS) return false;
  let sum = 0;
  for (let i = c; i <= a; i++) {
    const speed = (fixes[i] as Fix).deviceSpeedKmh;
    if (speed === undefined) return (metresBetween(start, end) / spanS) * KMH_PER_MPS >= minKmh;
    sum += speed;
  }
  return sum / (a - c + 1) >= minKmh;
}

const round = (value: number, places: number): number => {
  const scale = 10 ** places;
  return Math.round(value * scale) / scale;
};

/** The crashes in a trip's fixes (any order), by `thresholds`; in time order. */
export function detectCrashes(
  fixes: readonly CrashFix[],
  thresholds: CrashThresholds = DEFAULT_CRASH_THRESHOLDS,
): DetectedCrash[] {
  const t = thresholds;
  const sorted = cleanFixes(fixes);
  const speeds = speedsKmh(sorted);
  const crashes: DetectedCrash[] = [];
  const speedAt = (i: number): number => speeds[i] ?? Number.NaN;
  const timeAt = (i: number): number => (sorted[i] as Fix).timeS;
  /** The steepest fall in speed between fixes from a to b, each over at least PEAK_SPAN_SECONDS. */
  const peakDecelerationG = (a: number, b: number): number => {
    let peakKmhPerS = 0;
    for (let i = a; i < b; i++)
      for (let j = i + 1; j <= b; j++)
        peakKmhPerS = Math.max(
          peakKmhPerS,
          (speedAt(i) - speedAt(j)) / Math.max(timeAt(j) - timeAt(i), PEAK_SPAN_SECONDS),
        );
    return peakKmhPerS / KMH_PER_MPS / STANDARD_GRAVITY_MPS2;
  };
  const marginG = (a: number, b: number): number => {
    for (let i = a; i <= b; i++)
      if ((sorted[i] as Fix).deviceSpeedKmh === undefined) return DERIVED_SPEED_MARGIN_G;
    return 0;
  };
  for (let a = 0; a < sorted.length; a++) {
    const before = speedAt(a);
    if (!(before >= t.minSpeedBeforeKmh)) continue;
    let best = -1;
    let bestG = 0;
    for (let b = a + 1; b < sorted.length && timeAt(b) - timeAt(a) <= t.dropWindowSeconds; b++) {
      if (!(before - speedAt(b) >= t.minDropKmh)) continue;
      const g = peakDecelerationG(a, b);
      if (g >= t.minDecelerationG + marginG(a, b) && g > bestG) {
        best = b;
        bestG = g;
      }
    }
    if (best < 0) continue;
    let stop = -1;
    for (let s = best; s < sorted.length && timeAt(s) - timeAt(best) <= t.stopWithinSeconds; s++) {
      if (speedAt(s) <= t.stopSpeedKmh) {
        stop = s;
        break;
      }
    }
    if (stop < 0 || !movingBefore(sorted, a, t.minSpeedBeforeKmh)) continue;
    const at = sorted[best] as Fix;
    const after = speedAt(best);
    crashes.push({
      at: new Date(Math.round(at.timeS * 1000)),
      lat: at.lat,
      lon: at.lon,
      speedBeforeKmh: round(before, 1),
      speedAfterKmh: round(after, 1),
      dropKmh: round(before - after, 1),
      decelerationG: round(bestG, 2),
    });
    a = stop;
  }
  return crashes;
}
