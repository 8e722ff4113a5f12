import { Type, type Static } from 'typebox';

const MONEY_MAX = 100_000_000;
const DISTANCE_MAX = 1_000_000;
const REFERENCE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$';

const distance = (description: string) => Type.Number({ minimum: 0, maximum: DISTANCE_MAX, description });

/** The pay-by-mile rules of a product; every rule is optional, and an absent rule does not apply. */
export const ProductRulesSchema = Type.Object(
  {
    daily_cap_distance: Type.Optional(
      distance('Most distance charged per Europe/London calendar day, in the product’s `usage_unit`.'),
    ),
    annual_cap_distance: Type.Optional(
      distance('Most distance charged per policy year (from the term’s `start_date`), in `usage_unit`.'),
    ),
    free_distance_per_statement: Type.Optional(
      distance('Distance not charged on each statement (the first driven), in `usage_unit`.'),
    ),
    minimum_usage_premium: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: MONEY_MAX,
        description: 'Least usage premium per statement, in pounds (at most 2 decimals).',
      }),
    ),
    billing_distance_source: Type.Optional(
      Type.Union([Type.Literal('gps'), Type.Literal('odometer'), Type.Literal('greater')], {
        description:
          'Which distance a statement bills when odometer readings cover it: `gps` (the journeys, the default), `odometer` (the readings’ difference) or `greater` (the larger). When the odometer’s distance is the larger under `odometer` or `greater`, the difference is billed as an `odometer_reconciliation` journey; journeys are never refunded, so under `odometer` a GPS distance above the odometer’s is billed as driven.',
      }),
    ),
    odometer_discrepancy_percent: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1000,
        description:
          'A statement whose odometer and GPS distances differ by more than this percentage of the odometer’s emits `telematics.odometer_discrepancy`.',
      }),
    ),
    device_offline: Type.Optional(
      Type.Object(
        {
          after_hours: Type.Integer({
            minimum: 1,
            maximum: 720,
            description: 'A bound device that sends nothing for this long is offline (event and email).',
          }),
          estimated_distance_per_day: distance(
            'Distance billed for each whole London day an offline device sends nothing, after the grace days, in `usage_unit`.',
          ),
          grace_days: Type.Integer({
            minimum: 0,
            maximum: 365,
            description: 'Whole days without data after the last data that are not estimated.',
          }),
        },
        {
          additionalProperties: false,
          description: 'Silent devices: what is billed while a policy’s device sends nothing.',
        },
      ),
    ),
    mileage_budget_alerts: Type.Optional(
      Type.Boolean({
        description:
          'Whether policyholders are told when they pass their monthly mileage budget. Default true.',
      }),
    ),
  },
  { additionalProperties: false, description: 'Rules of billing; unknown rule names are refused.' },
);
export type ProductRules = Static<typeof ProductRulesSchema>;

export const USAGE_UNITS = ['mile', 'km'] as const;

export const CreateProductSchema = Type.Object(
  {
    product_reference: Type.String({
      pattern: REFERENCE_PATTERN,
      description:
        'The reference policies name in `policy.product_reference`; unique per company and environment.',
      examples: ['ppm-motor'],
    }),
    name: Type.String({ minLength: 1, maxLength: 200, examples: ['Pay-per-mile motor'] }),
    usage_unit: Type.Enum(USAGE_UNITS, { description: 'The unit of every distance in the rules.' }),
    rules: Type.Optional(ProductRulesSchema),
  },
  {
    additionalProperties: false,
    examples: [
      {
        product_reference: 'ppm-motor',
        name: 'Pay-per-mile motor',
        usage_unit: 'mile',
        rules: { daily_cap_distance: 150, annual_cap_distance: 10_000, free_distance_per_statement: 50 },
      },
    ],
  },
);
export type CreateProductInput = Static<typeof CreateProductSchema>;

export const UpdateProductSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    rules: ProductRulesSchema,
    effective_date: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 4_102_444_800,
        description:
          'UNIX seconds from which the new rules bill; default now, never before the latest version’s. Days before it keep the rules they had.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateProductInput = Static<typeof UpdateProductSchema>;

export const ProductParamsSchema = Type.Object({
  product_reference: Type.String({ pattern: REFERENCE_PATTERN }),
});

const ProductVersionSchema = Type.Object({
  name: Type.String(),
  rules: ProductRulesSchema,
  effective_from: Type.String({ format: 'date-time', description: 'When these rules start to bill.' }),
  created_at: Type.String({ format: 'date-time' }),
});

export const ProductSchema = Type.Object(
  {
    product_reference: Type.String(),
    name: Type.String({ description: 'The name in force now.' }),
    usage_unit: Type.Enum(USAGE_UNITS),
    rules: ProductRulesSchema,
    versions: Type.Array(ProductVersionSchema, {
      description: 'Every rule set, oldest first, each with the time it bills from.',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Product', description: 'A product: its rules in force now and every version of them.' },
);
export type ProductView = Static<typeof ProductSchema>;

/** A product as a policy shows it: what is in force now. */
export const ProductSummarySchema = Type.Object(
  {
    product_reference: Type.String(),
    name: Type.String(),
    usage_unit: Type.Enum(USAGE_UNITS),
    rules: ProductRulesSchema,
  },
  { description: 'The product `policy.product_reference` names, with its name and rules in force now.' },
);
export type ProductSummary = Static<typeof ProductSummarySchema>;

export const ProductListSchema = Type.Object({ products: Type.Array(Type.Ref('Product')) });
