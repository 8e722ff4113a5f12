export type { ProductTables } from './product-repository.ts';
export { createProductService, type ProductService } from './product-service.ts';
export { productRoutes } from './product-routes.ts';
export {
  ProductSummarySchema,
  type ProductRules,
  type ProductSummary,
  type ProductView,
} from './product-schemas.ts';
export { findProducts, type ProductRecord, type ProductVersionRecord } from './product-repository.ts';
export {
  capMetres,
  freeMetres,
  METRES_PER,
  noClaimsYearsAfter,
  productVersionAt,
  type DistanceUnit,
} from './rules/index.ts';
