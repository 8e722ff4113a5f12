export type { RatingTables } from './rate-book-repository.ts';
export {
  findVersionInForce,
  type RateBookRecord,
  type RateBookVersionRecord,
  type VersionInForce,
} from './rate-book-repository.ts';
export { createRateBookService, type RateBookService } from './rate-book-service.ts';
export { rateBookRoutes } from './rate-book-routes.ts';
export { createImpactService, type ImpactService } from './impact-service.ts';
export { impactRoutes } from './impact-routes.ts';
export { priceRenewal } from './renewal-pricing.ts';
export {
  listCappedRenewals,
  type RenewalOutcome,
  type RenewalPriceRecord,
  type RenewalStage,
} from './renewal-price-repository.ts';
export { renewalPriceRoutes } from './renewal-price-routes.ts';
export {
  createVersionMemo,
  type RememberedVersion,
  type VersionMemo,
  type VersionMemoLimits,
} from './version-memo.ts';
