export type { PolicyTables, PolicyRecord } from './policy-repository.ts';
export { notePolicyWrites } from './policy-row-cache.ts';
export { createPolicyService, type PolicyService, END_TERMS_QUEUE } from './policy-service.ts';
export type { RenewalPriceOutcome, RenewalToPrice } from './policy-context.ts';
export { policyRoutes } from './policy-routes.ts';
export {
  processorId,
  setsTerm,
  termsAt,
  type PolicySnapshot,
  type Term,
  type VersionRecord,
} from './rules/index.ts';
export {
  noPaymentHooks,
  type PolicyPaymentHooks,
  type BindingPayment,
  type PolicyChange,
} from './payment-hooks.ts';
export {
  appendStatementVersions,
  appendVersion,
  findPolicy,
  listVersions,
  lockPolicy,
} from './policy-repository.ts';
export {
  PaymentRecordSchema,
  type PaymentRecordView,
  type PolicyInput,
  type Pricing,
} from './policy-schemas.ts';
export { POLICY_INPUT_EXAMPLE, PolicyResponseSchema, type PolicyResponse } from './policy-schemas.ts';
export {
  findPolicyForUsageByReference,
  listPoliciesForUsageOfPolicyholder,
  listPolicyTermVersions,
  type PolicyForUsage,
  type PolicyTermVersion,
  type UsageUnit,
} from './policy-queries.ts';
export { policySearchRoutes, searchPolicies } from './policy-search.ts';
export {
  bumpPaymentsRevision,
  bumpPaymentsRevisions,
  findPolicyholderId,
  findPolicyReference,
  policyReferences,
} from './policy-payment-state.ts';
export { duePoliciesQuery, policyUsageTermsQuery } from './policy-lookups.ts';
export { findAuditedPolicy } from './audited-policy.ts';
export { countInForce, readInForceTerms, type InForceTerms } from './in-force-terms.ts';
export { noQuoteHooks, type PolicyQuoteHooks, type QuotedPricing } from './quote-hooks.ts';
export { PolicyBlockSchema, PricingSchema, policyObjectProperties } from './policy-schemas.ts';
