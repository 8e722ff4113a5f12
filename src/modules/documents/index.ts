export type { TemplateTables } from './template-repository.ts';
export { createTemplateService, findBranding, type TemplateService } from './template-service.ts';
export { templateRoutes } from './template-routes.ts';
export type { DocumentTables, DocumentRecord } from './document-repository.ts';
export { listDocumentFiles } from './document-repository.ts';
export { createDocumentService, type DocumentService } from './document-service.ts';
export type {
  DocumentServiceDeps,
  DocumentSubject,
  RenderedDocument,
  RenderSubject,
} from './document-context.ts';
export { documentRoutes } from './document-routes.ts';
export { DocumentSchema, type DocumentView } from './document-schemas.ts';
export { eraseDocuments, type DocumentErasure, type KeptDocument } from './document-erasure.ts';
export { DOCUMENT_KINDS, type DocumentKind } from './rules/index.ts';
export { createRenderer, type DocumentSources } from './document-assembly.ts';
export { createRenderPool, type RenderPool } from './render/render-pool.ts';
