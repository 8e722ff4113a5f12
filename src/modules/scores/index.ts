export type { ScoreTables } from './score-repository.ts';
export { listTripScores, markTripScoreVoid, type TripScoreRecord } from './score-repository.ts';
export {
  createScoreService,
  recordTripScores,
  type ScoreService,
  type TripToScore,
} from './score-service.ts';
export { scoreRoutes } from './score-routes.ts';
export { DrivingEventSchema, type DrivingEventView } from './score-schemas.ts';
export { drivingEventView } from './score-views.ts';
export { eraseTripEvents } from './score-erasure.ts';
export { createDisputeService, type DisputeService } from './dispute-service.ts';
export { disputeRoutes } from './dispute-routes.ts';
export { pricingMonths, type PricingMonth } from './score-pricing.ts';
