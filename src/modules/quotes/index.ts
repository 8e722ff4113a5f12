export type { QuoteTables, QuoteRecord, QuoteSettings } from './quote-repository.ts';
export { findQuote } from './quote-repository.ts';
export {
  createQuoteService,
  QUOTE_RETENTION_QUEUE,
  type QuoteCaller,
  type QuoteService,
} from './quote-service.ts';
export { quoteRoutes } from './quote-routes.ts';
export { quoteView, quoteStatus, type QuoteAudience } from './quote-views.ts';
export { QuoteSchema, QuoteInputSchema, type QuoteView } from './quote-schemas.ts';
export {
  createPurchaseService,
  type PurchaseService,
  type PurchaseServiceDeps,
} from './quote-purchase-service.ts';
