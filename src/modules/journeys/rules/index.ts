/**
 * The journeys module's pure rules: rating and the distances shown (for other modules' rules too), which
 * journeys are accepted and on which version, and the names of a journey's ends.
 */
export {
  distanceUnitsLabel,
  METRES_PER_MILE,
  totalKilometres,
  totalMiles,
  usagePremiumPence,
} from './rating.ts';
export {
  checkJourneyTimes,
  CLOCK_SKEW_ALLOWANCE_SECONDS,
  coverFor,
  measureRoute,
  ROUTE_MAX_CHARACTERS,
  ROUTE_MAX_POINTS,
  type RatedVersion,
} from './journey-rules.ts';
export { endNames, type NamedPlace } from './end-names.ts';
