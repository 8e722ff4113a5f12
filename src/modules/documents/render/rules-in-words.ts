/** A product's pay-by-mile rules as sentences a policyholder can check their statements against. */
import type { PayByMileRules } from '../document-content.ts';
import { money, ordinal, ratePerUnit, unitDistance } from './text.ts';

const SOURCE_WORDS: Record<PayByMileRules['billingDistanceSource'], string> = {
  gps: 'Distance is measured from your journeys as your telematics device or app records them.',
  odometer:
    'Where odometer readings cover a statement, the distance between the readings is billed; journeys recorded beyond it are still billed as driven.',
  greater:
    'Where odometer readings cover a statement, the greater of the odometer distance and the recorded journeys is billed.',
};

/** One sentence per rule in force, in the order a statement applies them; absent rules say nothing. */
export function payByMileRulesInWords(rules: PayByMileRules): string[] {
  const unit = rules.usageUnit;
  const lines = [
    `You pay a fixed part for the term, and ${ratePerUnit(rules.usageRatePencePerUnit, unit)} for the distance you drive.`,
    `A statement is made on the ${ordinal(rules.billingDayOfMonth)} day of each month (or the month's last day, if earlier) for the distance driven since the last one, and is charged to your card.`,
    SOURCE_WORDS[rules.billingDistanceSource],
  ];
  if (rules.dailyCapDistance !== null)
    lines.push(
      `Daily cap: no more than ${unitDistance(rules.dailyCapDistance, unit)} is charged for any one calendar day (UK time); distance beyond it that day is free.`,
    );
  if (rules.annualCapDistance !== null)
    lines.push(
      `Annual cap: no more than ${unitDistance(rules.annualCapDistance, unit)} is charged in a policy year; after that, driving in the same policy year is free.`,
    );
  if (rules.freeDistancePerStatement !== null)
    lines.push(
      `Free distance: the first ${unitDistance(rules.freeDistancePerStatement, unit)} of each statement is not charged.`,
    );
  if (rules.minimumUsagePremiumPence !== null)
    lines.push(
      `Minimum: each statement's distance charge is at least ${money(rules.minimumUsagePremiumPence)}; a smaller one is topped up to it.`,
    );
  lines.push(
    'A journey that is voided after it was billed is credited, and the credit is used against your next statements before any charge.',
  );
  return lines;
}
