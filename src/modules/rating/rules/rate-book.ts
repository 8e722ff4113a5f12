import type { PolicyInput, UsageUnit } from '../../policies/rules/index.ts';

/*
 * The content of a rate book version (issue 36): plain data, JSON as imported and exported, so a
 * version can be stored, diffed, approved and re-read byte for byte. Money is integer pence; every
 * other decimal (factors, rates) is a decimal string, never a binary float, so `rate` multiplies
 * exactly. `validateRateBookContent` (rate-book-validation.ts) turns untrusted JSON into this type or
 * names every bad cell.
 */

/** A decimal number written as text, e.g. `"1.25"`: the exact value, never a binary float. */
export type DecimalString = string;

/**
 * What a rating factor looks up: a field of the quote or a value derived from it on the rating date.
 * Numeric sources may be banded or keyed; text sources only keyed.
 */
export const FACTOR_SOURCES = [
  /** The outward code of `vehicle.overnight_postcode` (else `policy.address.postcode`): `SW1A`. */
  'postcode_district',
  /** `vehicle.group_rating_50`, the ABI group 1–50. */
  'vehicle_group',
  /** `vehicle.current_value`, pounds. */
  'vehicle_value',
  /** Whole years from `vehicle.manufacture_date` to the rating date. */
  'vehicle_age',
  /** Each driver's age in whole years on the rating date; the driver with the highest factor rates. */
  'driver_age',
  /** Each driver's whole years since `licence_issued_date`; the driver with the highest factor rates. */
  'years_licensed',
  /** `proposer.ncd`: years of no-claims discount. */
  'no_claims_years',
  /** Claims of all drivers dated in the five years up to the rating date. */
  'claims_in_5_years',
  /** Convictions of all drivers dated in the five years up to the rating date. */
  'convictions_in_5_years',
  /** `vehicle.estimated_yearly_mileage`, in the rate book's unit. */
  'estimated_annual_distance',
  /** `policy.usage`. */
  'use',
  /** `policy.cover`. */
  'cover',
  /** `policy.voluntary_excess`, pounds (0 when absent). */
  'voluntary_excess',
  /** `policy.policy_year` (1 when absent): 1 for new business, +1 at each renewal. */
  'policy_year',
] as const;
export type FactorSource = (typeof FACTOR_SOURCES)[number];

/** Sources whose values are text: only `keys` factors may use them. */
export const TEXT_SOURCES: ReadonlySet<FactorSource> = new Set(['postcode_district', 'use', 'cover']);

/** Which part of the price a factor multiplies: the fixed premium, the rate per unit, or both. */
export const APPLIES_TO = ['fixed', 'per_unit', 'both'] as const;
export type AppliesTo = (typeof APPLIES_TO)[number];

/**
 * A numeric band, half-open: `from ≤ value < to`. `from: null` is unbounded below (first row only),
 * `to: null` unbounded above (last row only). Rows are in ascending order with no gap or overlap.
 */
export interface BandRow {
  readonly from: number | null;
  readonly to: number | null;
  /** Positive decimal, at most 6 places. */
  readonly factor: DecimalString;
}

/**
 * An exact value. For `postcode_district` a key may also be a postcode area (`SW`): the district's
 * own row wins, else its area's. Keys of numeric sources are canonical decimals (`7`, `12.5`).
 */
export interface KeyRow {
  readonly key: string;
  readonly factor: DecimalString;
}

interface FactorCommon {
  /** Unique in the version; lower case, digits, `_` and `-` (it names the factor's CSV table). */
  readonly name: string;
  readonly source: FactorSource;
  readonly applies_to: AppliesTo;
  /** Used when the quote lacks the value or no row matches; without it such a quote cannot be rated. */
  readonly default?: DecimalString;
  /** Whether the customer is shown this factor in their quote's breakdown (staff always see it). */
  readonly customer_visible?: boolean;
}

export interface BandsFactor extends FactorCommon {
  readonly kind: 'bands';
  readonly rows: readonly BandRow[];
}

export interface KeysFactor extends FactorCommon {
  readonly kind: 'keys';
  readonly rows: readonly KeyRow[];
}

export type RatingFactor = BandsFactor | KeysFactor;

/** Fees the rate book sets; not premium (no IPT). */
export interface RateBookFees {
  /** `pricing.admin_fee`: charged on cancellation. */
  readonly admin_fee_pence: number;
  /** `pricing.mta_fee`: added to a mid-term adjustment. */
  readonly adjustment_fee_pence: number;
  /** `pricing.cancel_fee`: deducted from a cancellation refund. */
  readonly cancellation_fee_pence: number;
  /** `pricing.deposit_fee`. */
  readonly deposit_fee_pence: number;
}

/** Pay the term's fixed premium at once, at binding (`upfront_premium`). */
export interface SinglePlan {
  readonly kind: 'single';
}

/**
 * Pay the term's fixed premium, loaded by `loading_rate` (0.05 = 5 % more in all), in `installments`
 * equal monthly installments, the first on the term's start. Its APR is computed (`installmentPlanApr`),
 * never typed in.
 */
export interface MonthlyPlan {
  readonly kind: 'monthly';
  /** 2 to 12. */
  readonly installments: number;
  /** Decimal from 0 to below 1, at most 6 places. */
  readonly loading_rate: DecimalString;
}

export type InstallmentPlan = SinglePlan | MonthlyPlan;
export type InstallmentPlanKind = InstallmentPlan['kind'];

export const CONDITION_OPS = ['lt', 'lte', 'gt', 'gte', 'eq', 'ne', 'in', 'not_in'] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];
export type ConditionScalar = number | string | boolean;

/** One comparison of a quote field (or derived value) with a constant. */
export interface Comparison {
  /** A name of CONDITION_FIELDS or a path of QUOTE_FIELD_PATHS. */
  readonly field: string;
  readonly op: ConditionOp;
  /** A list for `in` and `not_in`; a scalar otherwise (a number, or a `YYYY-MM-DD` date, for lt…gte). */
  readonly value: ConditionScalar | readonly ConditionScalar[];
}

/** An underwriting condition: data, never code. */
export type Condition =
  { readonly all: readonly Condition[] } | { readonly any: readonly Condition[] } | Comparison;

export const UNDERWRITING_OUTCOMES = ['decline', 'refer'] as const;
export type UnderwritingOutcome = (typeof UNDERWRITING_OUTCOMES)[number];

export interface UnderwritingRule {
  readonly outcome: UnderwritingOutcome;
  /** Shown to staff and to the applicant. */
  readonly reason: string;
  readonly when: Condition;
}

/** The content of one rate book version. */
export interface RateBookContent {
  /** The unit `base_rate_per_unit` and distances are in: the product's. */
  readonly usage_unit: UsageUnit;
  /** A year's fixed premium before factors and IPT, integer pence. */
  readonly base_fixed_premium_pence: number;
  /** Pounds per unit before factors and IPT, a decimal of at most 6 places. */
  readonly base_rate_per_unit: DecimalString;
  /** Applied in this order; the breakdown lists them in it. */
  readonly factors: readonly RatingFactor[];
  /** The year's fixed premium after factors is held within [min, max] (pence, before IPT). */
  readonly min_fixed_premium_pence: number;
  readonly max_fixed_premium_pence: number;
  readonly fees: RateBookFees;
  /** Insurance premium tax, a percentage (`"12"` = 12 %). */
  readonly ipt_rate: DecimalString;
  /** The broker's commission, a percentage of the premium net of IPT. */
  readonly commission_rate: DecimalString;
  /** At most one of each kind; the first is a quote's plan when it names none. */
  readonly installment_plans: readonly InstallmentPlan[];
  readonly underwriting_rules: readonly UnderwritingRule[];
}

/**
 * What a quote is rated on: the policy object of POST /policys without `pricing` (and without what
 * only binding uses), plus the installment plan asked for.
 */
export type QuoteInput = Omit<PolicyInput, 'pricing' | 'payment' | 'backfill' | 'effective_date'> & {
  /** Default: the version's first plan. */
  readonly installment_plan?: InstallmentPlanKind;
};

/**
 * Derived values underwriting conditions may name (besides quote paths). Driver values are across
 * every driver: the youngest, the oldest, the least experienced.
 */
export const CONDITION_FIELDS = [
  'postcode_district',
  'postcode_area',
  'vehicle_group',
  'vehicle_value',
  'vehicle_age',
  'youngest_driver_age',
  'oldest_driver_age',
  'min_years_licensed',
  'driver_count',
  'no_claims_years',
  'claims_in_5_years',
  'at_fault_claims_in_5_years',
  'convictions_in_5_years',
  'points_in_5_years',
  'bans_in_3_years',
  'estimated_annual_distance',
  'use',
  'cover',
  'voluntary_excess',
  'policy_year',
  'modification_count',
] as const;
export type ConditionField = (typeof CONDITION_FIELDS)[number];

/** Scalar fields of the quote a condition may name by path (each driver's are under `proposer.`). */
export const QUOTE_FIELD_PATHS = [
  'policy.usage',
  'policy.cover',
  'policy.compulsory_excess',
  'policy.voluntary_excess',
  'policy.address.postcode',
  'policy.address.country',
  'policy.product_reference',
  'policy.policy_year',
  'proposer.dob',
  'proposer.ncd',
  'proposer.licence_type',
  'proposer.licence_issued_date',
  'proposer.employment',
  'proposer.occupation',
  'proposer.business',
  'proposer.residency_date',
  'proposer.has_medical_conditions',
  'proposer.has_informed_dvla_medical_conditions',
  'proposer.has_criminal_conviction',
  'proposer.own_home',
  'proposer.children',
  'vehicle.make',
  'vehicle.model',
  'vehicle.type',
  'vehicle.body_type',
  'vehicle.abi_code',
  'vehicle.engine',
  'vehicle.fuel',
  'vehicle.owner',
  'vehicle.keeper',
  'vehicle.rating',
  'vehicle.group_rating_50',
  'vehicle.group_rating_20',
  'vehicle.current_value',
  'vehicle.estimated_yearly_mileage',
  'vehicle.purchase_date',
  'vehicle.manufacture_date',
  'vehicle.is_rhd',
  'vehicle.is_parked_home',
  'vehicle.is_import',
  'vehicle.seats',
  'vehicle.doors',
  'vehicle.overnight_postcode',
  'vehicle.parked_location',
] as const;
