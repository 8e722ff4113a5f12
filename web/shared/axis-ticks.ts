// Round numbers for chart axes and map scale bars: pure, so they are tested without a browser.

/** An axis from 0 up: its ticks, their step, and the decimals a label needs to tell them apart. */
export interface Axis {
  /** The top tick: the least multiple of `step` at or above the data's largest value. */
  readonly top: number;
  /** 1, 2 or 5 × 10ⁿ. */
  readonly step: number;
  /** 0, step, 2·step, … top, each rounded to `decimals` places (no 0.30000000000000004). */
  readonly ticks: readonly number[];
  /** Fraction digits every label shows: those of the step (0.5 → 1, 0.25 is never a step). */
  readonly decimals: number;
}

const MANTISSAS = [1, 2, 5, 10] as const;

/** The least round number (1, 2 or 5 × 10ⁿ) at or above `value` (> 0): 0.7 → 1, 3 → 5, 120 → 200, 0.2 → 0.2. */
export function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  // Each candidate rounded to its decimals, so 3 × 0.1 counts as 0.3 (not 0.30000000000000004).
  const candidates = MANTISSAS.map((m) => roundTo(m * power, decimalsOf(power)));
  // 10ⁿ⁺¹ is always at or above `value`: the fallback is for the type checker.
  return candidates.find((candidate) => candidate >= value) ?? 10 * power;
}

/** The greatest round number (1, 2 or 5 × 10ⁿ) at or below `value` (> 0): 0.7 → 0.5, 3 → 2, 120 → 100. */
export function niceFloor(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  const candidates = MANTISSAS.map((m) => roundTo(m * power, decimalsOf(power))).reverse();
  // None when log10 rounded `value` (just under 10ⁿ) up to n: then 5 × 10ⁿ⁻¹ is the one.
  return candidates.find((candidate) => candidate <= value) ?? roundTo(power / 2, decimalsOf(power) + 1);
}

/** Fraction digits of a power of ten or a round step: 1 → 0, 0.5 → 1, 0.02 → 2. */
function decimalsOf(step: number): number {
  return Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
}

const roundTo = (value: number, decimals: number): number => Number(value.toFixed(decimals));

/**
 * A "nice" axis for values from 0 to `max`: the step is a round number (1, 2 or 5 × 10ⁿ), at least `minStep`
 * (a pound axis has no step below a penny) and 10⁻⁹, with at most `intervals` steps up to the top tick (and, unless
 * `minStep` holds the step up, at least two fifths of that). With nothing to show (`max` ≤ 0), `intervals`
 * steps of 1.
 */
export function niceAxis(max: number, intervals = 4, minStep = 0): Axis {
  const some = max > 0 && Number.isFinite(max);
  // Below a billionth nothing is worth a label of its own (and toFixed takes at most 100 digits).
  const floor = niceCeiling(Math.max(minStep, 1e-9));
  const step = !some ? Math.max(floor, 1) : max / intervals <= floor ? floor : niceCeiling(max / intervals);
  const decimals = decimalsOf(step);
  const topOf = (n: number) => roundTo(n * step, decimals);
  let count = some ? Math.max(1, Math.ceil(max / step)) : intervals;
  // The least count whose top tick, as labelled, is at or above `max` (a division's last bit can go either way).
  if (some) {
    while (topOf(count) < max) count++;
    while (count > 1 && topOf(count - 1) >= max) count--;
  }
  const ticks = Array.from({ length: count + 1 }, (_, i) => topOf(i));
  return { top: ticks.at(-1) ?? 0, step, ticks, decimals };
}

const formats = new Map<number, Intl.NumberFormat>();
/** A tick's number in en-GB with exactly `decimals` fraction digits: 1,500 · 0.5 · 1.0. */
export function formatTick(value: number, decimals: number): string {
  let format = formats.get(decimals);
  if (format === undefined) {
    format = new Intl.NumberFormat('en-GB', {
      minimumFractionDigits: decimals,
      maximumFractionDigits: decimals,
    });
    formats.set(decimals, format);
  }
  return format.format(value);
}

/** The unit an axis counts in: distance in the policy's unit, or money in pounds. */
export type AxisUnit = 'mile' | 'km' | 'GBP';

/** The least step of an axis in this unit: a penny for money; distances are drawn to a hundredth. */
export const MIN_STEP: Readonly<Record<AxisUnit, number>> = { mile: 0.01, km: 0.01, GBP: 0.01 };

/**
 * The labels of an axis's ticks: "0.5 mi", "1,500 km", "£0.50". Money always shows pence (steps are
 * never below a penny); distances show the decimals their step needs, so two ticks never read the same.
 */
export function axisLabels(axis: Axis, unit: AxisUnit): string[] {
  return axis.ticks.map((tick) =>
    unit === 'GBP'
      ? `£${formatTick(tick, Math.max(2, axis.decimals))}`
      : `${formatTick(tick, axis.decimals)} ${unit === 'km' ? 'km' : 'mi'}`,
  );
}

const METRES_PER: Readonly<Record<'mile' | 'km', number>> = { mile: 1609.344, km: 1000 };

/** A map's scale bar: how long to draw it and what it reads. */
export interface ScaleBar {
  readonly px: number;
  readonly label: string;
}

/**
 * The longest round distance (1, 2 or 5 × 10ⁿ) that fits in `maxPx` at `metresPerPx`, in the policy's unit:
 * miles (0.1 mile and up, as road signs count), or kilometres with metres below one.
 */
export function scaleBar(metresPerPx: number, maxPx: number, unit: 'mile' | 'km'): ScaleBar {
  const units = (metresPerPx * maxPx) / METRES_PER[unit];
  const length = niceFloor(units);
  const px = (length * METRES_PER[unit]) / metresPerPx;
  if (unit === 'km' && length < 1) return { px, label: `${formatTick(length * 1000, 0)} m` };
  const words = unit === 'km' ? 'km' : length === 1 ? 'mile' : 'miles';
  return { px, label: `${formatTick(length, decimalsOf(length))} ${words}` };
}
