/**
 * Driving scores: a trip's events → its score, trips → a London calendar month's score. Pure: the time is an
 * argument.
 *
 *   score = max(0, 100 − Σ weight(kind) × events(kind) per 100 miles)
 *
 * where night driving counts one event per mile driven between 00:00 and 04:00 Europe/London. A trip shorter
 * than one mile is not scored (a few yards of braking would weigh as hundreds of events per 100 miles). A
 * month's score is the mean of its trips' scores weighted by their distance; it is provisional until the
 * month is over and MONTH_MIN_MILES (50) have been scored in it. Scores are rounded half up to one decimal
 * once, at the end; a month is weighed from its trips' rounded scores, which are what a policyholder sees.
 */
import {
  drivingEvents,
  STANDARD_GRAVITY_MPS2,
  type DrivingEvent,
  type DrivingEventKind,
  type EventThresholds,
  type ScoreFix,
} from './driving-events.ts';

export const METRES_PER_MILE = 1609.344;
export const MIN_SCORED_METRES = METRES_PER_MILE;
export const MONTH_MIN_MILES = 50;

/** Weights: points off per event per 100 miles (night driving: per mile at night per 100 miles). */
export interface ScoreWeights {
  readonly harsh_braking: number;
  readonly rapid_acceleration: number;
  readonly harsh_cornering: number;
  readonly speeding: number;
  readonly fatigue: number;
  readonly night_driving: number;
}

/** A product version's `driving_score` rule as stored; every part optional. */
export interface DrivingScoreRule {
  readonly harsh_acceleration_mps2?: number;
  readonly harsh_cornering_g?: number;
  readonly speeding_above_mph?: number;
  readonly speeding_min_seconds?: number;
  readonly weights?: Partial<ScoreWeights>;
}

export interface ScoringRules {
  readonly thresholds: EventThresholds;
  readonly weights: ScoreWeights;
}

export const DEFAULT_DRIVING_SCORE_RULE = {
  harsh_acceleration_mps2: 3.1,
  harsh_cornering_g: 0.4,
  // NOTE: the motorway limit (70 mph) with the police's usual allowance of 10 % + 2 mph; road limits are
  // not held here, so an absolute speed is all a product can set.
  speeding_above_mph: 79,
  speeding_min_seconds: 15,
  weights: {
    harsh_braking: 2,
    rapid_acceleration: 1,
    harsh_cornering: 1,
    speeding: 2,
    fatigue: 5,
    night_driving: 0.2,
  },
} as const satisfies Required<DrivingScoreRule>;

const KMH_PER_MPH = METRES_PER_MILE / 1000;

/** The thresholds and weights a product version's rule sets, its absent parts from the defaults. */
export function scoringRules(rule: DrivingScoreRule | undefined): ScoringRules {
  const d = DEFAULT_DRIVING_SCORE_RULE;
  return {
    thresholds: {
      harshAccelerationMps2: rule?.harsh_acceleration_mps2 ?? d.harsh_acceleration_mps2,
      harshCorneringMps2: (rule?.harsh_cornering_g ?? d.harsh_cornering_g) * STANDARD_GRAVITY_MPS2,
      speedingAboveKmh: (rule?.speeding_above_mph ?? d.speeding_above_mph) * KMH_PER_MPH,
      speedingMinSeconds: rule?.speeding_min_seconds ?? d.speeding_min_seconds,
    },
    weights: { ...d.weights, ...rule?.weights },
  };
}

/** Half up to one decimal; the tenth is found from a scaled integer so 72.25 → 72.3 whatever its binary form. */
export function roundScore(score: number): number {
  return Math.floor(Number((score * 10).toFixed(6)) + 0.5) / 10;
}

/**
 * The score of a trip of `distanceMetres` with `events` (the ones still counting) and `nightMetres`, 0–100
 * to one decimal; null when the trip is shorter than a mile.
 */
export function tripScore(
  events: readonly Pick<DrivingEvent, 'kind'>[],
  nightMetres: number,
  distanceMetres: number,
  weights: ScoreWeights,
): number | null {
  if (!(distanceMetres >= MIN_SCORED_METRES)) return null;
  const counts: Record<DrivingEventKind, number> = {
    harsh_braking: 0,
    rapid_acceleration: 0,
    harsh_cornering: 0,
    speeding: 0,
    fatigue: 0,
  };
  for (const e of events) counts[e.kind]++;
  let weighted = weights.night_driving * (nightMetres / METRES_PER_MILE);
  for (const kind of Object.keys(counts) as DrivingEventKind[]) weighted += weights[kind] * counts[kind];
  const per100Miles = (weighted * 100 * METRES_PER_MILE) / distanceMetres;
  return roundScore(Math.max(0, 100 - per100Miles));
}

export type ScoredTrip =
  | {
      readonly scored: true;
      readonly score: number;
      readonly events: DrivingEvent[];
      readonly nightMetres: number;
    }
  | { readonly scored: false; readonly reason: 'SHORT_TRIP' };

/** A trip's events and score from its kept fixes and its measured distance (whole metres on WGS84). */
export function scoreTrip(
  fixes: readonly ScoreFix[],
  distanceMetres: number,
  rules: ScoringRules,
): ScoredTrip {
  if (!(distanceMetres >= MIN_SCORED_METRES)) return { scored: false, reason: 'SHORT_TRIP' };
  const { events, nightMetres } = drivingEvents(fixes, rules.thresholds);
  const score = tripScore(events, nightMetres, distanceMetres, rules.weights) ?? 0;
  return { scored: true, score, events, nightMetres };
}

/** A month's score: its scored trips' scores weighted by distance, to one decimal; null without one. */
export function monthScore(trips: readonly { score: number; distanceMetres: number }[]): number | null {
  let weighted = 0;
  let metres = 0;
  for (const t of trips) {
    // Tenths × metres are integers, so the sum is exact.
    weighted += Math.round(t.score * 10) * t.distanceMetres;
    metres += t.distanceMetres;
  }
  if (metres === 0) return null;
  return roundScore(weighted / metres / 10);
}

/** Whether a month's score is final: the month (ending at `monthEndAt`, exclusive) is over and 50 miles scored. */
export function monthIsFinal(monthEndAt: Date, now: Date, scoredMetres: number): boolean {
  return now.getTime() >= monthEndAt.getTime() && scoredMetres >= MONTH_MIN_MILES * METRES_PER_MILE;
}
