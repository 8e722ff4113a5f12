/**
 * Odometer readings against a statement's period: which two readings it compares, the distances, the
 * discrepancy and what is reconciled. Pure: no I/O, no clock; instants are passed in.
 */
import { Decimal } from 'decimal.js';

/** How far from a period's ends a reading may be and still stand for them. */
export const READING_WINDOW_SECONDS = 3 * 24 * 3600;

export type BillingDistanceSource = 'gps' | 'odometer' | 'greater';

export interface Reading {
  readonly readingMetres: number;
  readonly at: Date;
}

export type ChosenReadings =
  | { readonly ok: true; readonly start: Reading; readonly end: Reading }
  | { readonly ok: false; readonly reason: 'NO_START_READING' | 'NO_END_READING' };

const WINDOW_MS = READING_WINDOW_SECONDS * 1000;

/** The reading nearest `target` within the window among `candidates`; on a tie, the earlier. */
function nearest(candidates: readonly Reading[], target: Date): Reading | undefined {
  let best: Reading | undefined;
  let bestMs = Infinity;
  for (const r of candidates) {
    const awayMs = Math.abs(r.at.getTime() - target.getTime());
    if (awayMs > WINDOW_MS) continue;
    if (awayMs < bestMs || (awayMs === bestMs && best !== undefined && r.at < best.at)) {
      best = r;
      bestMs = awayMs;
    }
  }
  return best;
}

/**
 * The two readings a statement of [periodStartAt, periodEndAt] compares. The start is the previous
 * statement's end reading when it had one (so consecutive statements' spans chain and no distance is
 * compared twice), else the reading nearest the period's start within ±3 days; the end is the reading
 * nearest the period's end within ±3 days that is after the start reading and not before the period's
 * start (a reconciliation is billed inside the period).
 */
export function chooseReadings(input: {
  readonly readings: readonly Reading[];
  readonly previousEnd: Reading | null;
  readonly periodStartAt: Date;
  readonly periodEndAt: Date;
}): ChosenReadings {
  const start = input.previousEnd ?? nearest(input.readings, input.periodStartAt);
  if (start === undefined) return { ok: false, reason: 'NO_START_READING' };
  const end = nearest(
    input.readings.filter((r) => r.at > start.at && r.at >= input.periodStartAt),
    input.periodEndAt,
  );
  if (end === undefined) return { ok: false, reason: 'NO_END_READING' };
  return { ok: true, start, end };
}

/**
 * (odometer − GPS) / odometer × 100, half-even to 2 decimals: positive when the GPS distance is short of
 * the odometer's. Null when the odometer did not move (no percentage of nothing).
 */
export function discrepancyPercent(odometerMetres: number, gpsMetres: number): number | null {
  if (odometerMetres === 0) return null;
  return new Decimal(odometerMetres - gpsMetres)
    .div(odometerMetres)
    .times(100)
    .toDecimalPlaces(2, Decimal.ROUND_HALF_EVEN)
    .toNumber();
}

/** Whether a discrepancy is beyond a product's threshold (either way); none without a threshold. */
export function exceedsThreshold(percent: number | null, thresholdPercent: number | undefined): boolean {
  if (percent === null || thresholdPercent === undefined) return false;
  return new Decimal(percent).abs().greaterThan(new Decimal(thresholdPercent));
}

export interface OdometerComparison {
  /** end − start reading, whole metres. */
  readonly odometerMetres: number;
  readonly gpsMetres: number;
  readonly discrepancyPercent: number | null;
  /** Distance to bill as a reconciliation journey (0: none). */
  readonly reconciliationMetres: number;
}

/**
 * Compares the readings' distance with the GPS distance between them. The odometer's excess is billed
 * under `odometer` and `greater`; under `gps` nothing is. NOTE: journeys already billed are never
 * refunded, so under `odometer` a GPS distance above the odometer's stands as driven (a faulty GPS trace
 * is dealt with by voiding its journeys, not by the statement).
 */
export function compareOdometer(input: {
  readonly start: Reading;
  readonly end: Reading;
  readonly gpsMetres: number;
  readonly source: BillingDistanceSource;
}): OdometerComparison {
  const odometerMetres = input.end.readingMetres - input.start.readingMetres;
  const excessMetres = Math.max(odometerMetres - input.gpsMetres, 0);
  return {
    odometerMetres,
    gpsMetres: input.gpsMetres,
    discrepancyPercent: discrepancyPercent(odometerMetres, input.gpsMetres),
    reconciliationMetres: input.source === 'gps' ? 0 : excessMetres,
  };
}

/**
 * The instant a reconciliation is billed at: the end reading's time, or the period's end when the
 * reading came later; undefined when that is not inside the period (then nothing can be billed).
 */
export function reconciliationAt(
  endReadingAt: Date,
  periodStartAt: Date,
  periodEndAt: Date,
): Date | undefined {
  const at = endReadingAt < periodEndAt ? endReadingAt : periodEndAt;
  return at >= periodStartAt ? at : undefined;
}
