import { Type, type Static } from 'typebox';
import { fromPence } from '../../platform/money.ts';
import type { RenewalPriceRecord } from './renewal-price-repository.ts';

const pounds = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], { description: `${description} (pounds); null when not priced.` });
const pricingBlock = (description: string) =>
  Type.Union([Type.Record(Type.String(), Type.Union([Type.Number(), Type.String()])), Type.Null()], {
    description,
  });

export const RenewalPriceSchema = Type.Object(
  {
    policy_reference: Type.String(),
    product_reference: Type.String(),
    stage: Type.Union([Type.Literal('notice'), Type.Literal('renewal')], {
      description:
        '`notice`: priced when the automatic renewal was stored before the term’s end (its notice states it); `renewal`: priced when the renewal was made at the term’s end.',
    }),
    outcome: Type.Union(
      [Type.Literal('priced'), Type.Literal('declined'), Type.Literal('referred'), Type.Literal('unratable')],
      {
        description:
          '`priced`, or why the rate book version in force at the renewal’s start would not renew it (`reasons`): its underwriting rules decline or refer it, or it cannot rate it.',
      },
    ),
    start_date: Type.String({ format: 'date-time', description: 'The renewal’s start.' }),
    rated_on: Type.String({ format: 'date', description: 'The London date rated on: the renewal’s start.' }),
    rate_book_reference: Type.Union([Type.String(), Type.Null()]),
    version_number: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The rate book version in force at the renewal’s start; null when none was.',
    }),
    renewal_yearly_premium_estimate: pounds('The renewal’s price: `yearly_premium_estimate` of its pricing'),
    new_business_yearly_premium_estimate: pounds(
      'The equivalent new-business price: the same risk rated as new business on the same version',
    ),
    last_year_yearly_premium_estimate: pounds('Last year’s price: the term renewed, as its pricing held it'),
    cap_applied: Type.Boolean({
      description:
        'Whether the new-business price held the renewal down (ICOBS 6B.2.1R: a renewal never costs more).',
    }),
    capped: Type.Array(Type.Union([Type.Literal('fixed'), Type.Literal('per_unit')]), {
      description: 'The parts held down: the fixed premium, the rate per unit.',
    }),
    held_to_notice: Type.Array(Type.Union([Type.Literal('fixed'), Type.Literal('per_unit')]), {
      description:
        'A renewal made at the term’s end: the parts held to the price its notice stated, because rated again they came higher (an at-fault claim settled after the notice, a version approved since); empty for a notice.',
    }),
    renewal_pricing: pricingBlock('The `pricing` block the renewal takes.'),
    new_business_pricing: pricingBlock('The `pricing` block of the equivalent new business.'),
    rated_pricing: pricingBlock('The renewal as rated, before the cap.'),
    last_year_pricing: pricingBlock('The `pricing` of the term renewed.'),
    reasons: Type.Array(Type.String(), { description: 'Why it was not priced; empty when it was.' }),
    priced_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'RenewalPrice', additionalProperties: false },
);
export type RenewalPriceView = Static<typeof RenewalPriceSchema>;

const money = (pence: number | null): number | null => (pence === null ? null : fromPence(pence));
const block = (value: object | null): Record<string, number | string> | null =>
  value === null
    ? null
    : Object.fromEntries(
        Object.entries(value).filter(([, v]) => typeof v === 'number' || typeof v === 'string'),
      );

const isPart = (part: string): part is 'fixed' | 'per_unit' => part === 'fixed' || part === 'per_unit';

export function renewalPriceView(record: RenewalPriceRecord): RenewalPriceView {
  return {
    policy_reference: record.policyReference,
    product_reference: record.productReference,
    stage: record.stage,
    outcome: record.outcome,
    start_date: record.startAt.toISOString(),
    rated_on: record.ratedOn,
    rate_book_reference: record.rateBookReference,
    version_number: record.versionNumber,
    renewal_yearly_premium_estimate: money(record.renewalYearlyPence),
    new_business_yearly_premium_estimate: money(record.newBusinessYearlyPence),
    last_year_yearly_premium_estimate: money(record.lastYearYearlyPence),
    cap_applied: record.capApplied,
    capped: record.capped.filter(isPart),
    held_to_notice: record.heldToNotice.filter(isPart),
    renewal_pricing: block(record.renewalPricing),
    new_business_pricing: block(record.newBusinessPricing),
    rated_pricing: block(record.ratedPricing),
    last_year_pricing: block(record.lastYearPricing),
    reasons: [...record.reasons],
    priced_at: record.pricedAt.toISOString(),
  };
}
