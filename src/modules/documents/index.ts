export type { TemplateTables } from './template-repository.ts';
export { createTemplateService, findBranding, type TemplateService } from './template-service.ts';
export { templateRoutes } from './template-routes.ts';
