export {
  billedByStatement,
  listDeviceEstimatesNamed,
  listDeviceTripsFrom,
  type JourneyTables,
  type JourneyRecord,
  type JourneySource,
} from './journey-repository.ts';
export { maintainJourneyPartitions } from './journey-partitions.ts';
export { createJourneyService, type JourneyService } from './journey-service.ts';
export { journeyView } from './journey-views.ts';
export { journeyRoutes, type PolicyholderAuth } from './journey-routes.ts';
export { JourneySchema, type Journey } from './journey-schemas.ts';
export { usagePremiumPence, totalMiles, totalKilometres, METRES_PER_MILE } from './rules/index.ts';
export { EXAMPLE_JOURNEY_END, EXAMPLE_JOURNEY_START } from './journey-schemas.ts';
export { listStatementJourneys, sumJourneyMetres, type BilledJourney } from './journey-lookups.ts';
