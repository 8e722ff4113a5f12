import { Type, type Static } from 'typebox';

/** The largest monthly budget accepted: far beyond any car, small enough to stay exact. */
const BUDGET_MAX = 1_000_000;

export const MileageBudgetParamsSchema = Type.Object({
  policy_reference: Type.String({ minLength: 1, maxLength: 100, examples: ['amber-falcon-river'] }),
});
export type MileageBudgetParams = Static<typeof MileageBudgetParamsSchema>;

export const MileageBudgetInputSchema = Type.Object(
  {
    distance_per_month: Type.Number({
      exclusiveMinimum: 0,
      maximum: BUDGET_MAX,
      description:
        'The monthly distance the policyholder means to stay within, in the unit of the policy’s product (`usage_unit`), or miles when the policy names no registered product.',
      examples: [500],
    }),
  },
  { additionalProperties: false, examples: [{ distance_per_month: 500 }] },
);
export type MileageBudgetInput = Static<typeof MileageBudgetInputSchema>;

export const MileageBudgetSchema = Type.Object(
  {
    policy_reference: Type.String(),
    distance_per_month: Type.Number({ description: 'The budget, in `usage_unit`.' }),
    usage_unit: Type.Union([Type.Literal('mile'), Type.Literal('km')], {
      description: 'The unit of the budget: the product’s when it was set (miles without a product).',
    }),
    month: Type.String({
      pattern: '^[0-9]{4}-[0-9]{2}$',
      description: 'The current calendar month in Europe/London, `YYYY-MM`.',
      examples: ['2025-06'],
    }),
    distance_this_month_in_metres: Type.Integer({
      minimum: 0,
      description: 'Distance of the policy’s journeys (not void) that started this month, whole metres.',
    }),
    exceeded: Type.Boolean({ description: 'True when this month’s distance is over the budget.' }),
  },
  {
    $id: 'MileageBudget',
    description:
      'A policyholder’s own monthly mileage budget and this month’s distance against it. A budget never changes what is billed.',
  },
);
export type MileageBudget = Static<typeof MileageBudgetSchema>;
