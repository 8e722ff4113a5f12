/**
 * Document content from the interface's policy object (pounds, UNIX seconds, codes) for the kinds that
 * state a policy version: the certificate, the schedule, the statement of fact; and a product's IPID in
 * default words from its pay-by-mile rules. Money becomes pence here, once, through platform/money.
 */
import { Decimal, toPence } from '../../../platform/money.ts';
import type { PolicyInput } from '../../policies/index.ts';
import type {
  Addressee,
  CertificateContent,
  DriverContent,
  FactAnswer,
  IpidContent,
  PayByMileRules,
  PriceContent,
  ScheduleContent,
  StatementOfFactContent,
  UsageUnit,
} from '../document-content.ts';
import { limitationsAsToUse } from '../rules/index.ts';
import { payByMileRulesInWords } from './rules-in-words.ts';
import { codeWords, printable, yesNo } from './text.ts';

/** The blocks of a policy object that documents read (a stored version or a request body alike). */
export type PolicyObject = Pick<PolicyInput, 'policy' | 'proposer' | 'vehicle' | 'pricing'> & {
  readonly additional_drivers?: PolicyInput['additional_drivers'];
};

type Driver = PolicyInput['proposer'] | NonNullable<PolicyInput['additional_drivers']>[number];

const fullName = (d: { title?: string; first_names: string; last_names: string }): string =>
  [d.title, d.first_names, d.last_names].filter((p) => p !== undefined && p !== '').join(' ');

const seconds = (unix: number): Date => new Date(unix * 1000);

/** The policyholder and the risk address, postcode last. */
export function addresseeOf(p: PolicyObject): Addressee {
  const a = p.policy.address;
  const lines = [a.line_1, a.line_2, a.line_3, a.city, a.county, a.postcode].filter(
    (line): line is string => line !== undefined && line !== '',
  );
  return { name: fullName(p.proposer), addressLines: lines };
}

function driversOf(p: PolicyObject): DriverContent[] {
  const drivers: Driver[] = [p.proposer, ...(p.additional_drivers ?? [])];
  return drivers.map((d, i) => ({
    name: fullName(d),
    dateOfBirth: d.dob,
    relationship: i === 0 ? 'policyholder' : 'relationship' in d ? d.relationship : 'named driver',
    licenceType: d.licence_type ?? null,
  }));
}

/** The certificate of the policy version: vehicle, policyholder, term, drivers and use. */
export function certificateFromPolicy(
  p: PolicyObject,
  at: { policyReference: string; certificateNumber: string; issuedAt: Date; insurerName: string },
): CertificateContent {
  const named = (p.additional_drivers ?? []).map((d) => `${fullName(d)} (named driver)`);
  return {
    policyReference: at.policyReference,
    issuedAt: at.issuedAt,
    certificateNumber: at.certificateNumber,
    registrationMark: p.vehicle.reg,
    vehicleDescription: `${p.vehicle.make} ${p.vehicle.model}`,
    policyholderName: fullName(p.proposer),
    commencesAt: seconds(p.policy.start_date),
    expiresAt: seconds(p.policy.end_date),
    personsEntitledToDrive: [`The policyholder, ${fullName(p.proposer)}`, ...named],
    limitationsAsToUse: limitationsAsToUse(p.policy.usage),
    insurerName: at.insurerName,
  };
}

const unitOf = (p: PolicyObject): UsageUnit => (p.pricing.usage_unit === 'km' ? 'km' : 'mile');

/** `0.045` pounds per unit → `'4.5'` pence per unit, exactly (decimal text, no binary arithmetic). */
export function pencePerUnitText(poundsPerUnit: number): string {
  return new Decimal(String(poundsPerUnit)).times(100).toFixed();
}

/** The price of the pricing block in pence; the estimate is the fixed part plus the estimated distance's usage. */
export function priceOf(p: PolicyObject): PriceContent {
  const pr = p.pricing;
  const installments = pr.subscription_installments ?? 12;
  const upfront = toPence(pr.upfront_premium);
  const subscription = toPence(pr.subscription_premium);
  const usage = toPence(pr.usage_premium ?? 0);
  return {
    upfrontPremiumPence: upfront,
    subscriptionPremiumPence: subscription,
    subscriptionInstallments: installments,
    usageUnit: unitOf(p),
    usageRatePencePerUnit: pencePerUnitText(pr.usage_rate),
    estimatedDistance: pr.estimated_distance ?? p.vehicle.estimated_yearly_mileage ?? 0,
    estimatedAnnualPremiumPence:
      pr.yearly_premium_estimate === undefined
        ? upfront + subscription * installments + usage
        : toPence(pr.yearly_premium_estimate),
    iptRatePercent: String(pr.ipt_rate ?? 0),
    adminFeePence: toPence(pr.admin_fee ?? 0),
    adjustmentFeePence: toPence(pr.mta_fee ?? 0),
    cancellationFeePence: toPence(pr.cancel_fee ?? 0),
  };
}

/** The schedule of the policy version, with the product's rules and name. */
export function scheduleFromPolicy(
  p: PolicyObject,
  at: {
    policyReference: string;
    policyVersionReference: string;
    issuedAt: Date;
    insurerName: string;
    productName: string;
    rules: PayByMileRules;
  },
): ScheduleContent {
  const v = p.vehicle;
  return {
    policyReference: at.policyReference,
    issuedAt: at.issuedAt,
    policyVersionReference: at.policyVersionReference,
    policyholder: addresseeOf(p),
    email: p.proposer.email,
    drivers: driversOf(p),
    vehicle: {
      registrationMark: v.reg,
      make: v.make,
      model: v.model,
      vin: v.vin ?? null,
      colour: v.colour ?? null,
      engineCc: v.engine ?? null,
      fuel: v.fuel ?? null,
      valuePence: v.current_value === undefined ? null : toPence(v.current_value),
      overnightPostcode: v.overnight_postcode ?? null,
    },
    cover: p.policy.cover,
    usage: p.policy.usage,
    compulsoryExcessPence: toPence(p.policy.compulsory_excess ?? 0),
    voluntaryExcessPence: toPence(p.policy.voluntary_excess ?? 0),
    productName: at.productName,
    rules: at.rules,
    price: priceOf(p),
    term: { startsAt: seconds(p.policy.start_date), endsAt: seconds(p.policy.end_date) },
    autoRenew: p.policy.auto_renew ?? false,
    insurerName: at.insurerName,
    underwriterPolicyReference: p.policy.underwriter_policy_reference ?? null,
  };
}

const answer = (question: string, value: unknown): FactAnswer[] => {
  if (value === undefined || value === null || value === '') return [];
  if (typeof value === 'boolean') return [{ question, answer: yesNo(value) }];
  if (typeof value === 'number') return [{ question, answer: String(value) }];
  if (typeof value === 'string') return [{ question, answer: printable(value) }];
  if (Array.isArray(value)) {
    const items = value.map((item) =>
      typeof item === 'object' && item !== null
        ? Object.entries(item as Record<string, unknown>)
            .map(([k, v]) => `${codeWords(k)} ${String(v)}`)
            .join(', ')
        : String(item),
    );
    return [{ question, answer: items.length === 0 ? 'None' : items.join('; ') }];
  }
  return [];
};

/** Every answer of a block, by the interface's field names in words (`has_medical_conditions` → `has medical conditions`). */
function answersOf(block: object, skip: ReadonlySet<string> = new Set()): FactAnswer[] {
  return Object.entries(block).flatMap(([key, value]) =>
    skip.has(key) ? [] : answer(codeWords(key), value),
  );
}

/** The statement of fact: every answer of the proposer, drivers, vehicle and policy blocks. */
export function statementOfFactFromPolicy(
  p: PolicyObject,
  at: { policyReference: string; policyVersionReference: string; issuedAt: Date },
): StatementOfFactContent {
  const a = p.policy.address;
  return {
    policyReference: at.policyReference,
    issuedAt: at.issuedAt,
    policyVersionReference: at.policyVersionReference,
    policyholder: addresseeOf(p),
    sections: [
      { heading: 'About you', answers: answersOf(p.proposer) },
      ...(p.additional_drivers ?? []).map((d, i) => ({
        heading: `Named driver ${String(i + 1)}: ${printable(fullName(d))}`,
        answers: answersOf(d),
      })),
      { heading: 'Your vehicle', answers: answersOf(p.vehicle) },
      {
        heading: 'Your cover',
        answers: [
          ...answer(
            'address',
            [a.line_1, a.line_2, a.line_3, a.city, a.county, a.postcode, a.country]
              .filter((x) => x !== undefined && x !== '')
              .join(', '),
          ),
          ...answersOf(
            p.policy,
            new Set(['address', 'start_date', 'end_date', 'inception_date', 'created_at']),
          ),
        ],
      },
    ],
  };
}

/** An IPID in default words for a pay-by-mile motor product: what a company without its own text issues. */
export function defaultIpidContent(at: {
  productReference: string;
  productName: string;
  effectiveFrom: string;
  issuedAt: Date;
  insurerName: string;
  insurerRegulatoryStatus: string;
  rules: PayByMileRules;
}): IpidContent {
  return {
    ...at,
    whatIsThisInsurance:
      'Pay-by-mile motor insurance for a private car: a fixed part for the year plus a charge for each unit of distance you drive, measured by telematics and billed monthly. It meets the compulsory insurance the Road Traffic Act 1988 requires and, as your schedule shows, may cover your own car too.',
    whatIsInsured: [
      'Injury to other people and damage to their property caused by the use of your car (unlimited for injury; £20,000,000 for property).',
      'Comprehensive cover: loss of or damage to your car by accident, fire or theft, up to its market value.',
      'Third party, fire and theft: loss of or damage to your car by fire or theft only.',
      'Windscreen and window glass, where the schedule shows comprehensive cover.',
      'Driving in the EU and other countries at the minimum cover their law requires.',
    ],
    whatIsNotInsured: [
      'The excesses shown in your schedule.',
      'Wear and tear, mechanical or electrical failure, and loss of value.',
      'Driving by anyone not named on your certificate, or without a valid licence.',
      'Use not allowed by your certificate, such as hire or reward, racing or motor trade use.',
      'Driving under the influence of alcohol or drugs (we still meet third-party claims the law requires, and may recover them from you).',
    ],
    restrictions: [
      ...payByMileRulesInWords(at.rules),
      'Your telematics device or app must stay fitted and working: distance it cannot record may be estimated.',
    ],
    whereCovered: [
      'England, Scotland, Wales, Northern Ireland, the Isle of Man and the Channel Islands.',
      'EU member states and other countries that are party to the Green Card system, at the minimum cover their law requires.',
    ],
    obligations: [
      'Answer our questions honestly and with reasonable care, and check your statement of fact.',
      'Tell us at once of any change: address, car, drivers, use, convictions or medical conditions.',
      'Tell us of any accident or loss as soon as you can, and do not admit fault.',
      'Keep the car roadworthy, taxed and with a valid MOT.',
    ],
    whenAndHowToPay: [
      'The upfront premium when you buy, by card.',
      'Each month: the subscription installment and the charge for the distance driven, on your statement, taken from your card or by Direct Debit.',
    ],
    whenCoverStartsAndEnds: [
      'Cover starts at the date and time on your certificate of motor insurance and lasts for the term on your schedule, normally twelve months.',
    ],
    howToCancel: [
      'You may cancel within 14 days of buying or receiving your documents, whichever is later, and pay only for the time on cover and the distance driven.',
      'After that you may cancel at any time by contacting us or in the app: the fees in your schedule apply, and you get back the unused part of the fixed premium.',
    ],
  };
}
