export type { RatingTables } from './rate-book-repository.ts';
export {
  findVersionInForce,
  type RateBookRecord,
  type RateBookVersionRecord,
  type VersionInForce,
} from './rate-book-repository.ts';
export { createRateBookService, type RateBookService } from './rate-book-service.ts';
export { rateBookRoutes } from './rate-book-routes.ts';
