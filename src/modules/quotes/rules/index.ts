/** The quotes module's pure rules: binding, pricing and risk comparison, pseudonymisation. */
export {
  bindability,
  boundStartSeconds,
  expiryOf,
  isPseudonymised,
  notBindableMessage,
  pricingDifferences,
  pseudonymisedInput,
  quotePricing,
  startHasPassed,
  type BindableQuote,
  type NotBindable,
  type PseudonymisedQuoteInput,
  type QuoteDecision,
  type ReferralStatus,
  type StoredQuoteInput,
} from './quote-rules.ts';
export {
  BINDING_START_TOLERANCE_S,
  newBusinessRiskDifferences,
  riskDifferences,
  UNRATED_QUOTE_FIELDS,
} from './risk-differences.ts';
