/** The rating module's pure rules: a rate book version's content, its validation, and rating. */
export {
  APPLIES_TO,
  CONDITION_FIELDS,
  CONDITION_OPS,
  FACTOR_SOURCES,
  QUOTE_FIELD_PATHS,
  TEXT_SOURCES,
  UNDERWRITING_OUTCOMES,
  type AppliesTo,
  type BandRow,
  type BandsFactor,
  type Comparison,
  type Condition,
  type ConditionField,
  type ConditionOp,
  type ConditionScalar,
  type DecimalString,
  type FactorSource,
  type InstallmentPlan,
  type InstallmentPlanKind,
  type KeyRow,
  type KeysFactor,
  type MonthlyPlan,
  type QuoteInput,
  type RateBookContent,
  type RateBookFees,
  type RatingFactor,
  type SinglePlan,
  type UnderwritingOutcome,
  type UnderwritingRule,
} from './rate-book.ts';
export {
  LIMITS as RATE_BOOK_LIMITS,
  validateRateBookContent,
  type ContentProblem,
  type ContentValidation,
} from './rate-book-validation.ts';
export { factorRowProblems } from './rate-book-validation.ts';
export {
  deriveValues,
  wholeYears,
  withinYears,
  type DerivedValues,
  type DriverValues,
} from './derived-values.ts';
export { type FactorLine, type RatingProblem } from './factor-lookup.ts';
export {
  customerBreakdown,
  rate,
  termDays,
  yearlyEstimatePence,
  type FixedBreakdown,
  type InstallmentsBreakdown,
  type PerUnitBreakdown,
  type RatedPricing,
  type RatedQuote,
  type RateResult,
  type RatingBreakdown,
  type UsageEstimateBreakdown,
} from './rate.ts';
export {
  decide,
  holds,
  type DecisionResult,
  type MatchedRule,
  type UnderwritingDecision,
} from './underwriting.ts';
export {
  asNewBusiness,
  heldToNotice,
  renewalPrice,
  type LastYearPricing,
  type NoticePart,
  type RenewalPrice,
  type RenewalResult,
} from './renewal.ts';
export { installmentPlanApr, installmentsApr } from './apr.ts';
export { factorFromCsv, factorToCsv, type CsvProblem, type FactorCsvResult } from './factor-csv.ts';
export { EXAMPLE_QUOTE_INPUT, EXAMPLE_RATE_BOOK } from './example-rate-book.ts';
export {
  addToTally,
  bandOf,
  currentFixedPence,
  emptyTally,
  IMPACT_BANDS,
  IMPACT_MOVERS,
  impactReport,
  mergeTally,
  policyImpact,
  type ImpactBand,
  type ImpactReport,
  type ImpactTally,
  type PolicyImpact,
  type StoredTerms,
} from './impact.ts';
