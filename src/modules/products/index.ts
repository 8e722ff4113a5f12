export type { ProductTables } from './product-repository.ts';
export { createProductService, type ProductService } from './product-service.ts';
export { productRoutes } from './product-routes.ts';
export type { ProductRules, ProductView } from './product-schemas.ts';
export { productVersionAt } from './rules/product-versions.ts';
