/** The journeys module's pure rules (rating and the distances shown), for other modules' rules. */
export {
  distanceUnitsLabel,
  METRES_PER_MILE,
  totalKilometres,
  totalMiles,
  usagePremiumPence,
} from './rating.ts';
