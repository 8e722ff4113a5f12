/** The quotes module's pure rules: binding, pricing and risk comparison, pseudonymisation. */
export {
  bindability,
  expiryOf,
  isPseudonymised,
  notBindableMessage,
  pricingDifferences,
  pseudonymisedInput,
  quotePricing,
  type BindableQuote,
  type NotBindable,
  type PseudonymisedQuoteInput,
  type QuoteDecision,
  type ReferralStatus,
  type StoredQuoteInput,
} from './quote-rules.ts';
export { riskDifferences, UNRATED_QUOTE_FIELDS } from './risk-differences.ts';
