export type { UsageTables } from './usage-repository.ts';
export {
  createUsageService,
  type UsageService,
  type StoredJourney,
  type BudgetReader,
} from './usage-service.ts';
export { usageRoutes } from './usage-routes.ts';
export { MileageBudgetSchema, type MileageBudget } from './usage-schemas.ts';
