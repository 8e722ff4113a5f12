export { subjectAccessRoutes } from './subject-access-routes.ts';
export { erasureRoutes } from './erasure-routes.ts';
export { createErasureService, type ErasureService } from './erasure-service.ts';
export { createRetentionService, type RetentionService } from './retention-service.ts';
