import { Decimal } from '../../../platform/money.ts';
import type { DerivedValues } from './derived-values.ts';
import type { AppliesTo, FactorSource, RateBookContent, RatingFactor } from './rate-book.ts';

/*
 * Looking up each factor of a rate book for a quote's derived values. A version's tables are compiled
 * once (keys into maps, decimals parsed) and kept while the content object lives, so rating a
 * million policies against one version parses nothing twice. Pure.
 */

/** Exact arithmetic: products of a dozen six-place factors stay far inside 200 digits. */
export const Exact = Decimal.clone({ precision: 200, rounding: Decimal.ROUND_HALF_EVEN });
export type ExactDecimal = InstanceType<typeof Exact>;

interface CompiledBand {
  readonly from: number;
  readonly to: number;
  readonly label: string;
  readonly factor: ExactDecimal;
  readonly text: string;
}

interface Factor {
  readonly factor: ExactDecimal;
  readonly text: string;
}

interface CompiledFactor {
  readonly factor: RatingFactor;
  readonly bands: readonly CompiledBand[] | null;
  readonly keys: ReadonlyMap<string, Factor> | null;
  readonly default: Factor | null;
}

/** A version's content parsed once: its factor tables and the decimals every rating uses. */
export interface CompiledBook {
  readonly factors: readonly CompiledFactor[];
  /** 1 + IPT ÷ 100. */
  readonly withIpt: ExactDecimal;
  readonly baseRatePerUnit: ExactDecimal;
  /** 1 + loading_rate of the monthly plan (1 when there is none). */
  readonly monthlyLoading: ExactDecimal;
}

const compiled = new WeakMap<RateBookContent, CompiledBook>();

const bandLabel = (from: number | null, to: number | null) =>
  `[${from === null ? '−∞' : String(from)}, ${to === null ? '∞' : String(to)})`;

function compileFactor(factor: RatingFactor): CompiledFactor {
  const fallback =
    factor.default === undefined ? null : { factor: new Exact(factor.default), text: factor.default };
  if (factor.kind === 'bands')
    return {
      factor,
      keys: null,
      default: fallback,
      bands: factor.rows.map((row) => ({
        from: row.from ?? -Infinity,
        to: row.to ?? Infinity,
        label: bandLabel(row.from, row.to),
        factor: new Exact(row.factor),
        text: row.factor,
      })),
    };
  return {
    factor,
    bands: null,
    default: fallback,
    keys: new Map(factor.rows.map((row) => [row.key, { factor: new Exact(row.factor), text: row.factor }])),
  };
}

/** The compiled form of `content`, made once per content object. */
export function compileBook(content: RateBookContent): CompiledBook {
  let book = compiled.get(content);
  if (book === undefined) {
    const monthly = content.installment_plans.find((plan) => plan.kind === 'monthly');
    book = {
      factors: content.factors.map(compileFactor),
      withIpt: new Exact(content.ipt_rate).dividedBy(100).plus(1),
      baseRatePerUnit: new Exact(content.base_rate_per_unit),
      monthlyLoading: new Exact(monthly?.loading_rate ?? 0).plus(1),
    };
    compiled.set(content, book);
  }
  return book;
}

/** One factor as applied: what was looked up, what matched, and the factor used. */
export interface FactorLine {
  readonly name: string;
  readonly source: FactorSource;
  readonly applies_to: AppliesTo;
  /** The value looked up; null when the quote lacks it. */
  readonly value: number | string | null;
  /** For a driver source, whose value rated (`proposer`, `additional_drivers[0]`); else null. */
  readonly driver: string | null;
  /** `[17, 21)`, `key EC1A`, `area SW`, or `default`. */
  readonly matched: string;
  readonly factor: string;
  readonly customer_visible: boolean;
}

/** A value the quote needs and lacks (or that no row matches), named by its path in the quote. */
export interface RatingProblem {
  readonly path: string;
  readonly message: string;
}

type Match = { readonly matched: string; readonly factor: ExactDecimal; readonly text: string } | null;

function lookup(entry: CompiledFactor, value: number | string | null, area: string | null): Match {
  if (value === null) return null;
  if (entry.bands !== null) {
    if (typeof value !== 'number') return null;
    const band = entry.bands.find((row) => row.from <= value && value < row.to);
    return band === undefined ? null : { matched: band.label, factor: band.factor, text: band.text };
  }
  const keys = entry.keys ?? new Map<string, Factor>();
  const key = String(value);
  const exact = keys.get(key);
  if (exact !== undefined) return { matched: `key ${key}`, ...exact };
  const byArea = area === null ? undefined : keys.get(area);
  return byArea === undefined || area === null ? null : { matched: `area ${area}`, ...byArea };
}

const SOURCE_PATHS: Record<FactorSource, string> = {
  postcode_district: 'vehicle.overnight_postcode',
  vehicle_group: 'vehicle.group_rating_50',
  vehicle_value: 'vehicle.current_value',
  vehicle_age: 'vehicle.manufacture_date',
  driver_age: 'dob',
  years_licensed: 'licence_issued_date',
  no_claims_years: 'proposer.ncd',
  claims_in_5_years: 'claims',
  convictions_in_5_years: 'convictions',
  estimated_annual_distance: 'vehicle.estimated_yearly_mileage',
  use: 'policy.usage',
  cover: 'policy.cover',
  voluntary_excess: 'policy.voluntary_excess',
  policy_year: 'policy.policy_year',
};

function valueOf(source: Exclude<FactorSource, 'driver_age' | 'years_licensed'>, values: DerivedValues) {
  switch (source) {
    case 'postcode_district':
      return values.postcodeDistrict;
    case 'vehicle_group':
      return values.vehicleGroup;
    case 'vehicle_value':
      return values.vehicleValue;
    case 'vehicle_age':
      return values.vehicleAge;
    case 'no_claims_years':
      return values.noClaimsYears;
    case 'claims_in_5_years':
      return values.claimsIn5Years;
    case 'convictions_in_5_years':
      return values.convictionsIn5Years;
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
  }
}

interface Applied {
  readonly line: FactorLine;
  readonly factor: ExactDecimal;
}

/** The line of one factor, or the problem that stops it (no value, no row, no default). */
function applyFactor(entry: CompiledFactor, values: DerivedValues): Applied | RatingProblem {
  const { factor } = entry;
  const line = (value: number | string | null, match: Match, driver?: string): Applied | null => {
    const used = match ?? (entry.default === null ? null : { matched: 'default', ...entry.default });
    if (used === null) return null;
    const applied: FactorLine = {
      name: factor.name,
      source: factor.source,
      applies_to: factor.applies_to,
      value,
      driver: driver ?? null,
      matched: used.matched,
      factor: used.text,
      customer_visible: factor.customer_visible === true,
    };
    return { line: applied, factor: used.factor };
  };
  const missing = (path: string, value: number | string | null): RatingProblem => ({
    path,
    message:
      value === null
        ? `is needed to rate ${factor.name}`
        : `${JSON.stringify(value)} matches no row of ${factor.name}, which has no default`,
  });
  if (factor.source === 'driver_age' || factor.source === 'years_licensed') {
    // NOTE: every named driver is rated and the highest factor applies: the riskiest driver prices the cover.
    let worst: Applied | null = null;
    for (const driver of values.drivers) {
      const value = factor.source === 'driver_age' ? driver.age : driver.yearsLicensed;
      const candidate = line(value, lookup(entry, value, null), driver.path);
      if (candidate === null) return missing(`${driver.path}.${SOURCE_PATHS[factor.source]}`, value);
      if (worst === null || candidate.factor.greaterThan(worst.factor)) worst = candidate;
    }
    return worst ?? missing(`proposer.${SOURCE_PATHS[factor.source]}`, null);
  }
  const value = valueOf(factor.source, values);
  const area = factor.source === 'postcode_district' ? values.postcodeArea : null;
  return line(value, lookup(entry, value, area)) ?? missing(SOURCE_PATHS[factor.source], value);
}

/** The factor `entry` uses for `value`: its row, else its default; null when neither. */
function factorFor(entry: CompiledFactor, value: number | string | null, area: string | null) {
  return lookup(entry, value, area)?.factor ?? entry.default?.factor ?? null;
}

/**
 * The products `applyFactors` makes, without its lines: what re-rating a whole book needs. Null
 * exactly when `applyFactors` reports a problem (then it says which).
 */
export function factorProducts(
  content: RateBookContent,
  values: DerivedValues,
): { readonly fixed: ExactDecimal; readonly perUnit: ExactDecimal } | null {
  let fixed = new Exact(1);
  let perUnit = new Exact(1);
  for (const entry of compileBook(content).factors) {
    const { source, applies_to: appliesTo } = entry.factor;
    let factor: ExactDecimal | null = null;
    if (source === 'driver_age' || source === 'years_licensed') {
      for (const driver of values.drivers) {
        const candidate = factorFor(entry, source === 'driver_age' ? driver.age : driver.yearsLicensed, null);
        if (candidate === null) return null;
        if (factor === null || candidate.greaterThan(factor)) factor = candidate;
      }
    } else {
      const area = source === 'postcode_district' ? values.postcodeArea : null;
      factor = factorFor(entry, valueOf(source, values), area);
    }
    if (factor === null) return null;
    if (appliesTo !== 'per_unit') fixed = fixed.times(factor);
    if (appliesTo !== 'fixed') perUnit = perUnit.times(factor);
  }
  return { fixed, perUnit };
}

export interface AppliedFactors {
  readonly lines: readonly FactorLine[];
  /** Product of the factors applying to the fixed premium. */
  readonly fixed: ExactDecimal;
  /** Product of the factors applying to the rate per unit. */
  readonly perUnit: ExactDecimal;
}

/** Every factor of the version, in order, for the quote's values; or every problem that stops one. */
export function applyFactors(
  content: RateBookContent,
  values: DerivedValues,
): { ok: true; value: AppliedFactors } | { ok: false; problems: readonly RatingProblem[] } {
  const lines: FactorLine[] = [];
  const problems: RatingProblem[] = [];
  let fixed = new Exact(1);
  let perUnit = new Exact(1);
  for (const entry of compileBook(content).factors) {
    const result = applyFactor(entry, values);
    if ('path' in result) {
      problems.push(result);
      continue;
    }
    lines.push(result.line);
    if (result.line.applies_to !== 'per_unit') fixed = fixed.times(result.factor);
    if (result.line.applies_to !== 'fixed') perUnit = perUnit.times(result.factor);
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: { lines, fixed, perUnit } };
}
