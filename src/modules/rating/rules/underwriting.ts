import { deriveValues, type DerivedValues } from './derived-values.ts';
import {
  CONDITION_FIELDS,
  type Comparison,
  type Condition,
  type ConditionField,
  type ConditionScalar,
  type QuoteInput,
  type RateBookContent,
  type UnderwritingOutcome,
} from './rate-book.ts';

/*
 * Underwriting (issue 36, item 4): the rate book's rules are data, conditions over the quote's fields
 * and derived values, each leading to `decline` or `refer` with a reason. Every rule is evaluated; the
 * decision is `decline` when any declining rule matches, else `refer` when any referring rule does,
 * else `accept`, so it never depends on the rules' order. Pure.
 */

export type UnderwritingDecision = 'accept' | UnderwritingOutcome;

export interface MatchedRule {
  /** The rule's place in the version's list. */
  readonly rule: number;
  readonly outcome: UnderwritingOutcome;
  readonly reason: string;
}

export interface DecisionResult {
  readonly decision: UnderwritingDecision;
  /** Every matching rule, declines first, then referrals, each group in the version's order. */
  readonly reasons: readonly MatchedRule[];
}

type FieldValue = ConditionScalar | null;

interface DriverSummary {
  readonly ages: readonly number[];
  readonly licensed: readonly number[];
}

const summaries = new WeakMap<DerivedValues, DriverSummary>();

/** The drivers' ages and years licensed that are known, worked out once per set of values. */
function summary(values: DerivedValues): DriverSummary {
  let known = summaries.get(values);
  if (known === undefined) {
    known = {
      ages: values.drivers.map((d) => d.age).filter((age) => age !== null),
      licensed: values.drivers.map((d) => d.yearsLicensed).filter((years) => years !== null),
    };
    summaries.set(values, known);
  }
  return known;
}

function derivedField(field: ConditionField, values: DerivedValues): FieldValue {
  const { ages, licensed } = summary(values);
  switch (field) {
    case 'postcode_district':
      return values.postcodeDistrict;
    case 'postcode_area':
      return values.postcodeArea;
    case 'vehicle_group':
      return values.vehicleGroup;
    case 'vehicle_value':
      return values.vehicleValue;
    case 'vehicle_age':
      return values.vehicleAge;
    case 'youngest_driver_age':
      return ages.length === 0 ? null : Math.min(...ages);
    case 'oldest_driver_age':
      return ages.length === 0 ? null : Math.max(...ages);
    case 'min_years_licensed':
      return licensed.length === 0 ? null : Math.min(...licensed);
    case 'driver_count':
      return values.drivers.length;
    case 'no_claims_years':
      return values.noClaimsYears;
    case 'claims_in_5_years':
      return values.claimsIn5Years;
    case 'at_fault_claims_in_5_years':
      return values.atFaultClaimsIn5Years;
    case 'convictions_in_5_years':
      return values.convictionsIn5Years;
    case 'points_in_5_years':
      return values.pointsIn5Years;
    case 'bans_in_3_years':
      return values.bansIn3Years;
    case 'estimated_annual_distance':
      return values.estimatedAnnualDistance;
    case 'use':
      return values.use;
    case 'cover':
      return values.cover;
    case 'voluntary_excess':
      return values.voluntaryExcess;
    case 'policy_year':
      return values.policyYear;
    case 'modification_count':
      return values.modificationCount;
  }
}

const DERIVED: ReadonlySet<string> = new Set<string>(CONDITION_FIELDS);

/** A scalar at a dotted path of the quote (`vehicle.is_import`); null when absent or not a scalar. */
function quoteField(input: QuoteInput, path: string): FieldValue {
  let at: unknown = input;
  for (const key of path.split('.')) {
    if (typeof at !== 'object' || at === null) return null;
    at = (at as Record<string, unknown>)[key];
  }
  return typeof at === 'string' || typeof at === 'number' || typeof at === 'boolean' ? at : null;
}

function compare(actual: FieldValue, comparison: Comparison): boolean {
  // NOTE: a rule speaks only of values the quote has: an absent value matches no comparison.
  if (actual === null) return false;
  const { op, value } = comparison;
  if (op === 'in' || op === 'not_in') {
    const listed = (Array.isArray(value) ? value : [value]).includes(actual);
    return op === 'in' ? listed : !listed;
  }
  if (op === 'eq') return actual === value;
  if (op === 'ne') return actual !== value;
  // Ordered comparisons hold only between two numbers or two texts (dates as `YYYY-MM-DD`).
  if (typeof actual !== typeof value || typeof actual === 'boolean') return false;
  const [a, b] = [actual, value] as [number | string, number | string];
  switch (op) {
    case 'lt':
      return a < b;
    case 'lte':
      return a <= b;
    case 'gt':
      return a > b;
    case 'gte':
      return a >= b;
  }
}

/** Whether `condition` holds for the quote: `all` of an empty list holds, `any` of one does not. */
export function holds(condition: Condition, input: QuoteInput, values: DerivedValues): boolean {
  if ('all' in condition) return condition.all.every((inner) => holds(inner, input, values));
  if ('any' in condition) return condition.any.some((inner) => holds(inner, input, values));
  const actual = DERIVED.has(condition.field)
    ? derivedField(condition.field as ConditionField, values)
    : quoteField(input, condition.field);
  return compare(actual, condition);
}

/**
 * The underwriting decision for `input` on `content` at `onDate` (`YYYY-MM-DD`): `decline` beats
 * `refer` beats `accept`, with every matching rule's reason. Independent of the rules' order.
 */
export function decide(
  content: RateBookContent,
  input: QuoteInput,
  onDate: string,
  values: DerivedValues = deriveValues(input, onDate),
): DecisionResult {
  const matched: MatchedRule[] = [];
  content.underwriting_rules.forEach((rule, index) => {
    if (holds(rule.when, input, values))
      matched.push({ rule: index, outcome: rule.outcome, reason: rule.reason });
  });
  const declines = matched.filter((m) => m.outcome === 'decline');
  const referrals = matched.filter((m) => m.outcome === 'refer');
  const decision = declines.length > 0 ? 'decline' : referrals.length > 0 ? 'refer' : 'accept';
  return { decision, reasons: [...declines, ...referrals] };
}
