import { londonDate } from '../../platform/london-calendar.ts';
import { Decimal, toPence } from '../../platform/money.ts';
import type { PolicySnapshot, VersionRecord } from '../policies/index.ts';
import type { ProductRules } from '../products/index.ts';
import type {
  Addressee,
  CertificateContent,
  DriverContent,
  PayByMileRules,
  PriceContent,
  ScheduleContent,
  TermContent,
  UsageUnit,
  VehicleContent,
} from './document-content.ts';
import { limitationsAsToUse } from './rules/index.ts';

/*
 * The content of the documents that state a policy version (certificate, schedule) from its snapshot,
 * the product's rules and the company's branding: plain data for the renderer (document-content.ts).
 */

/** The product a term is sold under, as the documents state it. */
export interface ProductFacts {
  readonly reference: string | null;
  readonly name: string;
  readonly usageUnit: UsageUnit;
  readonly rules: ProductRules;
  /** The product version's `effective_from`. */
  readonly effectiveFrom: Date | null;
}

export const fromSeconds = (seconds: number): Date => new Date(seconds * 1000);
const pence = (pounds: number | undefined): number => (pounds === undefined ? 0 : toPence(pounds));
const optionalPence = (pounds: number | undefined): number | null =>
  pounds === undefined ? null : toPence(pounds);

/** The policyholder's name and postal address (postcode last). */
export function addresseeOf(snapshot: PolicySnapshot): Addressee {
  const { proposer } = snapshot;
  const { address } = snapshot.policy;
  const name = [proposer.title, proposer.first_names, proposer.last_names]
    .filter((p) => p !== undefined)
    .join(' ');
  const lines = [
    address.line_1,
    address.line_2,
    address.line_3,
    address.city,
    address.county,
    address.postcode,
  ];
  return { name, addressLines: lines.filter((l): l is string => l !== undefined && l.trim() !== '') };
}

export const holderName = (snapshot: PolicySnapshot): string =>
  `${snapshot.proposer.first_names} ${snapshot.proposer.last_names}`;

export const termOf = (snapshot: PolicySnapshot): TermContent => ({
  startsAt: fromSeconds(snapshot.policy.start_date),
  endsAt: fromSeconds(snapshot.policy.end_date),
});

export const usageUnitOf = (snapshot: PolicySnapshot, product: ProductFacts): UsageUnit =>
  snapshot.pricing.usage_unit ?? product.usageUnit;

function driversOf(snapshot: PolicySnapshot): DriverContent[] {
  const { proposer } = snapshot;
  return [
    {
      name: holderName(snapshot),
      dateOfBirth: proposer.dob,
      relationship: 'policyholder',
      licenceType: proposer.licence_type ?? null,
    },
    ...(snapshot.additional_drivers ?? []).map((d) => ({
      name: `${d.first_names} ${d.last_names}`,
      dateOfBirth: d.dob,
      relationship: d.relationship ?? 'named driver',
      licenceType: d.licence_type ?? null,
    })),
  ];
}

function vehicleOf(snapshot: PolicySnapshot): VehicleContent {
  const v = snapshot.vehicle;
  return {
    registrationMark: v.reg,
    make: v.make,
    model: v.model,
    vin: v.vin ?? null,
    colour: v.colour ?? null,
    engineCc: v.engine ?? null,
    fuel: v.fuel ?? null,
    valuePence: optionalPence(v.current_value),
    overnightPostcode: v.overnight_postcode ?? null,
  };
}

/** Pence per unit as exact decimal text: a rate of £0.045 a mile is `'4.5'`. */
const ratePence = (poundsPerUnit: number): string => new Decimal(String(poundsPerUnit)).times(100).toString();

/** A term's price, from the version's pricing block: every amount in pence, the rate exact. */
export function priceOf(snapshot: PolicySnapshot, unit: UsageUnit): PriceContent {
  const { pricing } = snapshot;
  const upfront = pence(pricing.upfront_premium);
  const installment = pence(pricing.subscription_premium);
  const installments = pricing.subscription_installments ?? snapshot.policy.subscription_frequency ?? 12;
  const estimatedDistance = pricing.estimated_distance ?? snapshot.vehicle.estimated_yearly_mileage ?? 0;
  const usage = new Decimal(ratePence(pricing.usage_rate))
    .times(estimatedDistance)
    .toDecimalPlaces(0, Decimal.ROUND_HALF_UP);
  return {
    upfrontPremiumPence: upfront,
    subscriptionPremiumPence: installment,
    subscriptionInstallments: installments,
    usageUnit: unit,
    usageRatePencePerUnit: ratePence(pricing.usage_rate),
    estimatedDistance,
    estimatedAnnualPremiumPence: upfront + installment * installments + usage.toNumber(),
    iptRatePercent: new Decimal(String(pricing.ipt_rate ?? 0)).toString(),
    adminFeePence: pence(pricing.admin_fee),
    adjustmentFeePence: pence(pricing.mta_fee),
    cancellationFeePence: pence(pricing.cancel_fee),
  };
}

/** The product's pay-by-mile rules for the term, as the schedule puts them into words. */
export function rulesOf(snapshot: PolicySnapshot, product: ProductFacts): PayByMileRules {
  const { rules } = product;
  return {
    usageUnit: usageUnitOf(snapshot, product),
    usageRatePencePerUnit: ratePence(snapshot.pricing.usage_rate),
    dailyCapDistance: rules.daily_cap_distance ?? null,
    annualCapDistance: rules.annual_cap_distance ?? null,
    freeDistancePerStatement: rules.free_distance_per_statement ?? null,
    minimumUsagePremiumPence: optionalPence(rules.minimum_usage_premium),
    billingDistanceSource: rules.billing_distance_source ?? 'gps',
    billingDayOfMonth:
      snapshot.policy.billing_day_date ??
      Number(londonDate(fromSeconds(snapshot.policy.start_date)).slice(8, 10)),
  };
}

/** The persons entitled to drive, as a certificate states them (the renderer adds the licence proviso). */
export function personsEntitledOf(snapshot: PolicySnapshot): string[] {
  const named = (snapshot.additional_drivers ?? []).map((d) => `${d.first_names} ${d.last_names}`);
  return [
    `The policyholder, ${holderName(snapshot)}.`,
    ...(named.length === 0 ? [] : [`Any of the following named drivers: ${named.join('; ')}.`]),
  ];
}

/** The certificate of a version: the term as it stands from the version's effect. */
export function certificateContent(
  policyReference: string,
  version: VersionRecord,
  insurerName: string,
  issuedAt: Date,
): CertificateContent {
  const { snapshot } = version;
  const term = termOf(snapshot);
  return {
    policyReference,
    issuedAt,
    certificateNumber: `${policyReference}-${String(version.sequence)}`,
    registrationMark: snapshot.vehicle.reg,
    vehicleDescription: `${snapshot.vehicle.make} ${snapshot.vehicle.model}`,
    policyholderName: holderName(snapshot),
    // An adjustment's certificate takes effect when the adjustment does, never before the term.
    commencesAt: new Date(
      Math.max(term.startsAt.getTime(), Math.min(version.effectiveAt.getTime(), term.endsAt.getTime())),
    ),
    expiresAt: term.endsAt,
    personsEntitledToDrive: personsEntitledOf(snapshot),
    limitationsAsToUse: limitationsAsToUse(snapshot.policy.usage),
    insurerName,
  };
}

/** The schedule of a version. */
export function scheduleContent(
  policyReference: string,
  version: VersionRecord,
  product: ProductFacts,
  facts: { insurerName: string; issuedAt: Date },
): ScheduleContent {
  const { snapshot } = version;
  return {
    policyReference,
    issuedAt: facts.issuedAt,
    policyVersionReference: version.id,
    policyholder: addresseeOf(snapshot),
    email: snapshot.proposer.email,
    drivers: driversOf(snapshot),
    vehicle: vehicleOf(snapshot),
    cover: snapshot.policy.cover,
    usage: snapshot.policy.usage,
    compulsoryExcessPence: pence(snapshot.policy.compulsory_excess),
    voluntaryExcessPence: pence(snapshot.policy.voluntary_excess),
    productName: product.name,
    rules: rulesOf(snapshot, product),
    price: priceOf(snapshot, usageUnitOf(snapshot, product)),
    term: termOf(snapshot),
    autoRenew: snapshot.policy.auto_renew ?? false,
    insurerName: facts.insurerName,
    underwriterPolicyReference: snapshot.policy.underwriter_policy_reference ?? null,
  };
}
