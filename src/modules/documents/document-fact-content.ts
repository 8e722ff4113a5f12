import { londonDate } from '../../platform/london-calendar.ts';
import type { PolicySnapshot, VersionRecord } from '../policies/index.ts';
import type { FactAnswer, IpidContent, StatementOfFactContent } from './document-content.ts';
import { addresseeOf, fromSeconds, usageUnitOf, type ProductFacts } from './document-policy-content.ts';

/*
 * The IPID of a product version (the Insurance Distribution Directive's standard headings, in the
 * Commission's Implementing Regulation 2017/1469 order) and the statement of fact of a policy version.
 */

const unitName = (unit: 'mile' | 'km'): string => (unit === 'km' ? 'kilometre' : 'mile');

/** What the product covers and how it charges, under the IPID's headings, from its rules. */
export function ipidContent(
  product: ProductFacts,
  snapshot: PolicySnapshot,
  facts: { insurerName: string; issuedAt: Date },
): IpidContent {
  const unit = unitName(usageUnitOf(snapshot, product));
  const { rules } = product;
  const caps = [
    ...(rules.daily_cap_distance === undefined
      ? []
      : [`No more than ${String(rules.daily_cap_distance)} ${unit}s are charged for any one day.`]),
    ...(rules.annual_cap_distance === undefined
      ? []
      : [`No more than ${String(rules.annual_cap_distance)} ${unit}s are charged in a policy year.`]),
    ...(rules.free_distance_per_statement === undefined
      ? []
      : [
          `The first ${String(rules.free_distance_per_statement)} ${unit}s of each monthly statement are free.`,
        ]),
  ];
  return {
    productReference: product.reference ?? 'pay-by-mile',
    productName: product.name,
    effectiveFrom: londonDate(product.effectiveFrom ?? fromSeconds(snapshot.policy.start_date)),
    issuedAt: facts.issuedAt,
    insurerName: facts.insurerName,
    insurerRegulatoryStatus: `${facts.insurerName} is an insurer authorised by the Prudential Regulation Authority and regulated by the Financial Conduct Authority and the Prudential Regulation Authority.`,
    whatIsThisInsurance: `Pay-by-${unit} motor insurance for a private car: a fixed premium for the term, plus a charge for each ${unit} driven, measured from your journeys and billed on a monthly statement. This document summarises the cover; the full terms are in your policy documents.`,
    whatIsInsured: [
      'Injury to other people and damage to their property caused by using the insured car (the cover the Road Traffic Act 1988 requires).',
      'Cover for the named drivers shown on your certificate of motor insurance and schedule.',
      'Loss of or damage to the insured car, where your schedule shows comprehensive or third party, fire and theft cover.',
      'Legal costs of defending a claim against you, where we agree to them in advance.',
    ],
    whatIsNotInsured: [
      'The excesses shown on your schedule.',
      'Anyone driving who is not named on your certificate, or who does not hold a valid licence.',
      'Wear and tear, mechanical or electrical breakdown, and loss of value.',
      'Use not allowed by your certificate, such as hire or reward, racing or the motor trade.',
      'Driving under the influence of alcohol or drugs.',
    ],
    restrictions: [
      'Your journeys must be recorded (by your app or device) for each mile to be charged as the product says; days without data may be estimated.',
      ...caps,
      'Cover is limited to the uses shown on your certificate.',
    ],
    whereCovered: [
      'Great Britain, Northern Ireland, the Isle of Man and the Channel Islands.',
      'The minimum cover the law requires in any other country of the European Union and the European Economic Area.',
    ],
    obligations: [
      'Give complete and accurate answers, and check your statement of fact.',
      'Tell us straight away of any change to the car, its drivers, its use or your address.',
      'Keep your telematics app or device working, and tell us if it stops recording.',
      'Tell us as soon as possible of any accident or loss.',
    ],
    whenAndHowToPay: [
      'The upfront premium when the policy starts, and the subscription installments as your schedule shows.',
      `Each month, a statement charges the ${unit}s driven in its period to your card on file.`,
    ],
    whenCoverStartsAndEnds: [
      'Cover starts at the date and time on your certificate of motor insurance and ends at the expiry shown there, unless the policy is cancelled earlier.',
    ],
    howToCancel: [
      'You may cancel within 14 days of receiving your documents, or of the start of cover if later, and pay only for the time on cover and the distance driven.',
      'You may cancel at any other time by telling us; the schedule shows any cancellation fee.',
    ],
  };
}

// ── statement of fact ─────────────────────────────────────────────────────────────────────────────

/** Fields of the stored policy object that are Milepost's own, not the proposer's answers. */
const NOT_ANSWERS = new Set([
  'policy_reference',
  'policy_ref',
  'created_at',
  'product_reference',
  'underwriter_reference',
  'underwriter_policy_reference',
  'billing_day_date',
  'subscription_frequency',
  'policy_year',
]);
/** Unix-seconds fields, shown as London dates. */
const INSTANTS = new Set(['start_date', 'end_date', 'inception_date']);

const label = (key: string): string => {
  const words = key.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

const scalarText = (value: unknown): string =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';

/** Each answer of a block as `question: answer`, nested blocks and lists flattened with their names. */
function answersOf(block: unknown, prefix = ''): FactAnswer[] {
  if (block === null || block === undefined) return [];
  if (Array.isArray(block)) {
    if (block.every((item) => typeof item !== 'object' || item === null))
      return [{ question: prefix, answer: block.length === 0 ? 'None' : block.map(String).join(', ') }];
    return block.flatMap((item, i) => answersOf(item, `${prefix} ${String(i + 1)}`));
  }
  if (typeof block !== 'object') return [{ question: prefix, answer: scalarText(block) }];
  return Object.entries(block as Record<string, unknown>).flatMap(([key, value]) => {
    if (NOT_ANSWERS.has(key) || value === undefined || value === null) return [];
    const question = prefix === '' ? label(key) : `${prefix}: ${label(key).toLowerCase()}`;
    if (typeof value === 'boolean') return [{ question, answer: value ? 'Yes' : 'No' }];
    if (typeof value === 'number' && INSTANTS.has(key))
      return [{ question, answer: londonDate(fromSeconds(value)) }];
    return answersOf(value, question);
  });
}

/** What the proposer told us: every answer of the version's policy object, by section. */
export function statementOfFactContent(
  policyReference: string,
  version: VersionRecord,
  issuedAt: Date,
): StatementOfFactContent {
  const { snapshot } = version;
  const sections = [
    { heading: 'About you', answers: answersOf(snapshot.proposer) },
    {
      heading: 'Named drivers',
      answers: (snapshot.additional_drivers ?? []).flatMap((d, i) => answersOf(d, `Driver ${String(i + 1)}`)),
    },
    { heading: 'Your car', answers: answersOf(snapshot.vehicle) },
    { heading: 'Your policy', answers: answersOf(snapshot.policy) },
    { heading: 'Other answers', answers: answersOf(snapshot.custom ?? {}) },
  ].filter((s) => s.answers.length > 0);
  return {
    policyReference,
    issuedAt,
    policyVersionReference: version.id,
    policyholder: addresseeOf(snapshot),
    sections,
  };
}
