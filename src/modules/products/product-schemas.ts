import { Type, type Static } from 'typebox';

const MONEY_MAX = 100_000_000;
const DISTANCE_MAX = 1_000_000;
const REFERENCE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$';

const scoreWeight = (fallback: number) =>
  Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: `Default ${String(fallback)}.` }));

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
    crash_detection: Type.Optional(
      Type.Object(
        {
          min_speed_before_kmh: Type.Optional(
            Type.Number({
              minimum: 15,
              maximum: 200,
              description: 'Least speed before the drop, km/h. Default 30.',
            }),
          ),
          min_drop_kmh: Type.Optional(
            Type.Number({ minimum: 5, maximum: 200, description: 'Least fall in speed, km/h. Default 25.' }),
          ),
          drop_window_seconds: Type.Optional(
            Type.Number({
              minimum: 0.5,
              maximum: 10,
              description: 'Longest time over which the fall may happen, seconds. Default 2.',
            }),
          ),
          min_deceleration_g: Type.Optional(
            Type.Number({
              minimum: 0.1,
              maximum: 5,
              description:
                'Least peak deceleration, in g (9.80665 m/s²), each fall between two fixes taken over at least 1 s. Default 0.65; a fall measured on speeds derived from positions must reach 0.4 g more.',
            }),
          ),
          stop_speed_kmh: Type.Optional(
            Type.Number({
              minimum: 0,
              maximum: 10,
              description: 'A speed at or below this is stopped, km/h. Default 5.',
            }),
          ),
          stop_within_seconds: Type.Optional(
            Type.Number({
              minimum: 1,
              maximum: 120,
              description: 'Longest time from the fall to the stop, seconds. Default 10.',
            }),
          ),
        },
        {
          additionalProperties: false,
          description:
            'Crash detection from positions: when a trip’s speed falls this fast and the vehicle stops, it is a crash. Every field is optional and takes its default when absent.',
        },
      ),
    ),
    no_claims_step_back: Type.Optional(
      Type.Record(Type.String({ pattern: '^[0-9]{1,2}$' }), Type.Integer({ minimum: 0, maximum: 99 }), {
        minProperties: 1,
        description:
          'The no-claims step-back at renewal: years of no-claims discount held → years kept after one at-fault claim settled in the term, e.g. `{"3": 1, "4": 2, "5": 3}`. The row of the greatest key not above the years held applies (`"5"` serves 5 or more); years below every key fall to 0; each further at-fault claim steps back again. A row may not keep more years than its key. Default: two years back per claim (5 or more → 3, 4 → 2, 3 → 1, fewer → 0).',
        examples: [{ '1': 0, '2': 0, '3': 1, '4': 2, '5': 3 }],
      }),
    ),
    mileage_budget_alerts: Type.Optional(
      Type.Boolean({
        description:
          'Whether policyholders are told when they pass their monthly mileage budget. Default true.',
      }),
    ),
    score_pricing: Type.Optional(
      Type.Object(
        {
          bands: Type.Array(
            Type.Object(
              {
                min_score: Type.Number({
                  minimum: 0,
                  maximum: 100,
                  description: 'The least month score (0–100, at most one decimal) the band applies from.',
                }),
                adjustment_percent: Type.Number({
                  minimum: -100,
                  maximum: 100,
                  description:
                    'Percent of the month’s usage premium added (negative: taken off), at most two decimals.',
                }),
              },
              { additionalProperties: false },
            ),
            {
              minItems: 1,
              maxItems: 20,
              description:
                'A month takes the band with the highest `min_score` at or below its score; a score below every band is not adjusted. Each `min_score` once.',
            },
          ),
          cap_percent: Type.Number({
            minimum: 0,
            maximum: 100,
            description:
              'The most a month is adjusted either way, percent of its usage premium (at most two decimals).',
          }),
        },
        {
          additionalProperties: false,
          description:
            'Price by driving score (off when absent): each London month’s usage premium, less the caps’ and free distance’s credits, adjusted by its score’s band, as the statement line `score_adjustment` (docs/api.md, "Price by score").',
          examples: [
            {
              bands: [
                { min_score: 90, adjustment_percent: -10 },
                { min_score: 50, adjustment_percent: 0 },
                { min_score: 0, adjustment_percent: 10 },
              ],
              cap_percent: 10,
            },
          ],
        },
      ),
    ),
    driving_score: Type.Optional(
      Type.Object(
        {
          harsh_acceleration_mps2: Type.Optional(
            Type.Number({
              minimum: 1,
              maximum: 20,
              description:
                'Harsh braking and rapid acceleration: a speed change of at least this, m/s², over 1 s or more. Default 3.1.',
            }),
          ),
          harsh_cornering_g: Type.Optional(
            Type.Number({
              minimum: 0.1,
              maximum: 2,
              description: 'Harsh cornering: lateral acceleration of at least this, in g. Default 0.4.',
            }),
          ),
          speeding_above_mph: Type.Optional(
            Type.Number({
              minimum: 10,
              maximum: 200,
              description:
                'Speeding: above this speed, mph, for `speeding_min_seconds`. Default 79 (70 mph plus the police’s usual 10 % + 2 mph).',
            }),
          ),
          speeding_min_seconds: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 600,
              description: 'Speeding: how long above the speed counts. Default 15.',
            }),
          ),
          weights: Type.Optional(
            Type.Object(
              {
                harsh_braking: scoreWeight(2),
                rapid_acceleration: scoreWeight(1),
                harsh_cornering: scoreWeight(1),
                speeding: scoreWeight(2),
                fatigue: scoreWeight(5),
                night_driving: scoreWeight(0.2),
              },
              {
                additionalProperties: false,
                description:
                  'Points off the score per event per 100 miles; night_driving per mile driven 00:00–04:00 London time per 100 miles.',
              },
            ),
          ),
        },
        {
          additionalProperties: false,
          description:
            'Driving scores: the thresholds of the events and their weights (docs/api.md, "Driving scores"); each part absent takes its default.',
        },
      ),
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
