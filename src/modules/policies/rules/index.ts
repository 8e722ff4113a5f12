/** The policies module's pure rules and the policy object's shape, for other modules' rules. */
export {
  ESTIMATED_DISTANCE_MAX,
  MONEY_MAX,
  PricingSchema,
  processorId,
  USAGE_RATE_MAX,
  USAGE_UNITS,
  VERSION_TYPES,
  POLICY_STATUSES,
  type PolicyInput,
  type PolicyStatus,
  type UsageUnit,
  type VersionType,
} from './policy-object-schemas.ts';
export {
  isLive,
  nextTerm,
  renewedSnapshot,
  setsTerm,
  statusAt,
  termEndAction,
  termsAt,
  type PolicySnapshot,
  type RenewalTerms,
  type StoredStatus,
  type Term,
  type TermMark,
  type VersionRecord,
} from './policy-versions.ts';
export {
  londonDateOf,
  normalisePolicyInput,
  validatePolicyInput,
  type FieldError,
} from './policy-validation.ts';
export { firstPaymentPence, prepaidInstallments, type PlanPricing } from './prepaid-installments.ts';
