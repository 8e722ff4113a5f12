/** The policy schedule: who and what is insured, the cover, the excesses, the price and the term. */
import { Decimal, roundPenceHalfEven } from '../../../platform/money.ts';
import type { PriceContent, ScheduleContent, StatementOfFactContent } from '../document-content.ts';
import { bullets, facts, heading, paragraph, table, type Layout } from './layout.ts';
import { payByMileRulesInWords } from './rules-in-words.ts';
import {
  codeWords,
  londonDateTime,
  money,
  printable,
  ratePerUnit,
  shortDate,
  unitDistance,
  yesNo,
} from './text.ts';

/** The rows that state a price: the fixed part, the installments, the rate, the estimate and fees. */
export function priceRows(p: PriceContent): Array<[string, string]> {
  const fixedPence = p.upfrontPremiumPence + p.subscriptionPremiumPence * p.subscriptionInstallments;
  return [
    ['Upfront premium', money(p.upfrontPremiumPence)],
    [
      'Subscription premium',
      `${money(p.subscriptionPremiumPence)} × ${String(p.subscriptionInstallments)} monthly installments`,
    ],
    ['Fixed part of the premium', money(fixedPence)],
    ['Rate for distance driven', ratePerUnit(p.usageRatePencePerUnit, p.usageUnit)],
    [
      'Estimated yearly premium',
      `${money(p.estimatedAnnualPremiumPence)} at ${unitDistance(p.estimatedDistance, p.usageUnit)} a year`,
    ],
    ['Insurance premium tax', `${printable(p.iptRatePercent)}%, included in every premium`],
    [
      'Fees',
      `administration ${money(p.adminFeePence)}; each change ${money(p.adjustmentFeePence)}; cancellation ${money(p.cancellationFeePence)}`,
    ],
  ];
}

/** Lays out a schedule: policy, proposer, drivers, vehicle, cover and excesses, pay-by-mile rules, price. */
export function renderSchedule(l: Layout, s: ScheduleContent): void {
  heading(l, 'The policy');
  facts(l, [
    ['Policy number', s.policyReference],
    ['Version', s.policyVersionReference],
    ['Product', s.productName],
    ['Insurer', s.insurerName],
    ...(s.underwriterPolicyReference === null
      ? []
      : ([['Insurer’s policy reference', s.underwriterPolicyReference]] as Array<[string, string]>)),
    ['Cover starts', londonDateTime(s.term.startsAt)],
    ['Cover ends', londonDateTime(s.term.endsAt)],
    ['Renews automatically', yesNo(s.autoRenew)],
  ]);
  heading(l, 'The proposer');
  facts(l, [
    ['Name', s.policyholder.name],
    ['Address', s.policyholder.addressLines.map(printable).join(', ')],
    ['Email', s.email],
  ]);
  heading(l, 'Drivers');
  table(
    l,
    [
      { header: 'Name', share: 0.42 },
      { header: 'Date of birth', share: 0.18 },
      { header: 'Relationship', share: 0.18 },
      { header: 'Licence', share: 0.22 },
    ],
    s.drivers.map((d) => [
      d.name,
      shortDate(d.dateOfBirth),
      codeWords(d.relationship),
      d.licenceType === null ? '—' : codeWords(d.licenceType),
    ]),
  );
  heading(l, 'The vehicle');
  const v = s.vehicle;
  facts(l, [
    ['Registration mark', v.registrationMark],
    ['Make and model', `${printable(v.make)} ${printable(v.model)}`],
    ...optionalRows([
      ['VIN', v.vin],
      ['Colour', v.colour === null ? null : codeWords(v.colour)],
      ['Engine', v.engineCc === null ? null : `${String(v.engineCc)} cc`],
      ['Fuel', v.fuel === null ? null : codeWords(v.fuel)],
      ['Value', v.valuePence === null ? null : money(v.valuePence)],
      ['Kept overnight at', v.overnightPostcode],
    ]),
  ]);
  heading(l, 'Cover and excesses');
  facts(l, [
    ['Cover', codeWords(s.cover)],
    ['Use', codeWords(s.usage)],
    ['Compulsory excess', money(s.compulsoryExcessPence)],
    ['Voluntary excess', money(s.voluntaryExcessPence)],
    [
      'Total excess for a claim for damage to your vehicle',
      money(s.compulsoryExcessPence + s.voluntaryExcessPence),
    ],
  ]);
  heading(l, 'How pay-by-mile works on this policy');
  bullets(l, payByMileRulesInWords(s.rules));
  heading(l, 'The price');
  facts(l, priceRows(s.price));
  const exampleDistance = 100;
  const examplePence = roundPenceHalfEven(new Decimal(s.price.usageRatePencePerUnit).times(exampleDistance));
  paragraph(
    l,
    `For example, ${unitDistance(exampleDistance, s.price.usageUnit)} driven in a month adds ${String(exampleDistance)} × ${ratePerUnit(s.price.usageRatePencePerUnit, s.price.usageUnit)} = ${money(examplePence)} to that month’s statement, before any cap or free distance.`,
    { sizePt: 8 },
  );
}

function optionalRows(rows: ReadonlyArray<readonly [string, string | null]>): Array<[string, string]> {
  return rows.flatMap(([label, value]) =>
    value === null || value === '' ? [] : [[label, value] as [string, string]],
  );
}

/** Lays out a statement of fact: every answer the proposer gave, by section, with how to correct one. */
export function renderStatementOfFact(l: Layout, s: StatementOfFactContent): void {
  paragraph(
    l,
    `Dear ${printable(s.policyholder.name)}, this is what you told us when you took out or changed policy ${printable(s.policyReference)}. Please check every answer. If anything is wrong or missing, tell us straight away: a wrong answer can mean a claim is not paid in full, or the policy is cancelled.`,
  );
  for (const section of s.sections) {
    heading(l, section.heading);
    table(
      l,
      [
        { header: 'Question', share: 0.5 },
        { header: 'Your answer', share: 0.5 },
      ],
      section.answers.map((a) => [a.question, a.answer]),
    );
  }
  paragraph(
    l,
    'Under the Consumer Insurance (Disclosure and Representations) Act 2012 you must take reasonable care to answer our questions fully and accurately, and tell us of any change.',
    { sizePt: 8 },
  );
}
