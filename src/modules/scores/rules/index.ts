/** The scores module's pure rules, for other modules' rules. */
export {
  drivingEvents,
  EVENT_KINDS,
  type DrivingEvent,
  type DrivingEventKind,
  type EventThresholds,
  type ScoreFix,
  type TripEvents,
} from './driving-events.ts';
export {
  DEFAULT_DRIVING_SCORE_RULE,
  METRES_PER_MILE,
  monthIsFinal,
  MONTH_MIN_MILES,
  monthScore,
  scoreTrip,
  scoringRules,
  tripScore,
  type DrivingScoreRule,
  type ScoredTrip,
  type ScoreWeights,
  type ScoringRules,
} from './driving-score.ts';
