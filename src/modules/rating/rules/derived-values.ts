import { postcodeDistrict } from '../../../platform/postcodes.ts';
import type { QuoteInput } from './rate-book.ts';

/*
 * The values a quote is rated and underwritten on, derived from the quote at the rating date: ages in
 * whole years, the postcode district, counts of claims and convictions in a window. Pure: the date is
 * an argument (`YYYY-MM-DD`), never the clock.
 */

/** One driver's rated values; `path` names the driver in the quote (`proposer`, `additional_drivers[0]`). */
export interface DriverValues {
  readonly path: string;
  /** Whole years on the rating date; null when the quote has no date of birth. */
  readonly age: number | null;
  /** Whole years since the licence was issued; null when the quote does not say. */
  readonly yearsLicensed: number | null;
}

export interface DerivedValues {
  readonly postcodeDistrict: string | null;
  /** The district's letters: `SW1A` → `SW`. */
  readonly postcodeArea: string | null;
  readonly vehicleGroup: number | null;
  /** Pounds. */
  readonly vehicleValue: number | null;
  readonly vehicleAge: number | null;
  readonly drivers: readonly DriverValues[];
  readonly noClaimsYears: number | null;
  readonly claimsIn5Years: number;
  readonly atFaultClaimsIn5Years: number;
  readonly convictionsIn5Years: number;
  readonly pointsIn5Years: number;
  /** Convictions carrying a ban, dated in the three years up to the rating date. */
  readonly bansIn3Years: number;
  /** In the product's unit. */
  readonly estimatedAnnualDistance: number | null;
  readonly use: string;
  readonly cover: string;
  /** Pounds; 0 when the quote has none. */
  readonly voluntaryExcess: number;
  readonly policyYear: number;
  readonly modificationCount: number;
}

/**
 * Whole years from `from` to `on` (both `YYYY-MM-DD`): an age on a date. Someone born on 29 February
 * turns a year older on 1 March in a common year. Negative when `on` is before `from`.
 */
export function wholeYears(from: string, on: string): number {
  const years = Number(on.slice(0, 4)) - Number(from.slice(0, 4));
  return on.slice(5) < from.slice(5) ? years - 1 : years;
}

/** Whether `date` falls in the `years` years up to and including `on` (all `YYYY-MM-DD`). */
export function withinYears(date: string, years: number, on: string): boolean {
  const start = `${String(Number(on.slice(0, 4)) - years).padStart(4, '0')}${on.slice(4)}`;
  return date >= start && date <= on;
}

const postcodeArea = (district: string): string => /^[A-Z]+/.exec(district)?.[0] ?? district;

interface Person {
  readonly dob?: string;
  readonly licence_issued_date?: string;
  readonly claims?: readonly { readonly date: string; readonly at_fault?: boolean }[];
  readonly convictions?: readonly {
    readonly date: string;
    readonly points?: number;
    readonly ban?: number;
  }[];
}

/** The derived values of `input` on `onDate` (`YYYY-MM-DD`). */
export function deriveValues(input: QuoteInput, onDate: string): DerivedValues {
  const people: { path: string; person: Person }[] = [
    { path: 'proposer', person: input.proposer },
    ...(input.additional_drivers ?? []).map((person, index) => ({
      path: `additional_drivers[${index}]`,
      person,
    })),
  ];
  let claimsIn5Years = 0;
  let atFaultClaimsIn5Years = 0;
  let convictionsIn5Years = 0;
  let pointsIn5Years = 0;
  let bansIn3Years = 0;
  for (const { person } of people) {
    for (const claim of person.claims ?? []) {
      if (!withinYears(claim.date, 5, onDate)) continue;
      claimsIn5Years++;
      if (claim.at_fault === true) atFaultClaimsIn5Years++;
    }
    for (const conviction of person.convictions ?? []) {
      if (withinYears(conviction.date, 5, onDate)) {
        convictionsIn5Years++;
        pointsIn5Years += conviction.points ?? 0;
      }
      if ((conviction.ban ?? 0) > 0 && withinYears(conviction.date, 3, onDate)) bansIn3Years++;
    }
  }
  const postcode = input.vehicle.overnight_postcode ?? input.policy.address.postcode;
  const district = postcode.trim() === '' ? null : postcodeDistrict(postcode);
  const { vehicle, policy } = input;
  return {
    postcodeDistrict: district,
    postcodeArea: district === null ? null : postcodeArea(district),
    vehicleGroup: vehicle.group_rating_50 ?? null,
    vehicleValue: vehicle.current_value ?? null,
    vehicleAge: vehicle.manufacture_date === undefined ? null : wholeYears(vehicle.manufacture_date, onDate),
    drivers: people.map(({ path, person }) => ({
      path,
      age: person.dob === undefined ? null : wholeYears(person.dob, onDate),
      yearsLicensed:
        person.licence_issued_date === undefined
          ? null
          : Math.max(0, wholeYears(person.licence_issued_date, onDate)),
    })),
    noClaimsYears: input.proposer.ncd ?? null,
    claimsIn5Years,
    atFaultClaimsIn5Years,
    convictionsIn5Years,
    pointsIn5Years,
    bansIn3Years,
    estimatedAnnualDistance: vehicle.estimated_yearly_mileage ?? null,
    use: policy.usage,
    cover: policy.cover,
    voluntaryExcess: policy.voluntary_excess ?? 0,
    policyYear: policy.policy_year ?? 1,
    modificationCount: vehicle.modifications?.length ?? 0,
  };
}
