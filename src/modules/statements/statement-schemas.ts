import { Type, type Static } from 'typebox';

const nullableString = Type.Union([Type.String(), Type.Null()]);
const nullableNumber = Type.Union([Type.Number(), Type.Null()]);
const StatementJourneySchema = Type.Object({
  journey_reference: Type.String(),
  provider_reference: nullableString,
  policy_reference: Type.String(),
  policy_version_reference: Type.String(),
  route: Type.String(),
  distance_in_metres: Type.Integer(),
  distance_units: Type.String(),
  total_miles: Type.Number(),
  total_kms: Type.Number(),
  usage_rate: Type.Number(),
  usage_premium: Type.Number(),
  start_lat: nullableNumber,
  start_long: nullableNumber,
  end_lat: nullableNumber,
  end_long: nullableNumber,
  start_at: Type.String({ format: 'date-time' }),
  end_at: Type.String({ format: 'date-time' }),
  start_name: nullableString,
  end_name: nullableString,
  start_postcode: nullableString,
  end_postcode: nullableString,
  is_void: Type.Boolean(),
  source: Type.String({
    description:
      'As the journey’s `source`: api, device, estimate or odometer_reconciliation (the odometer’s distance beyond the GPS distance; no route, no duration).',
  }),
  is_estimated: Type.Boolean(),
});

export const StatementSchema = Type.Object(
  {
    policy_reference: Type.String(),
    policy_version_reference: Type.String({
      format: 'uuid',
      description: 'The `st` version this statement created.',
    }),
    current: Type.Boolean({ description: 'True for the policy’s latest statement.' }),
    distance_in_metres: Type.Integer(),
    duration_in_mins: Type.Integer(),
    total_miles: Type.Number(),
    total_kms: Type.Number(),
    subscription_premium: Type.Number({
      description: 'Installments due in the period × the subscription premium (pounds).',
    }),
    usage_premium: Type.Number({ description: 'The exact sum of the journeys’ usage premiums (pounds).' }),
    total_premium: Type.Number({ description: 'usage_premium + subscription_premium.' }),
    billed_premium: Type.Number({
      description:
        'total_premium − cap_credit − annual_cap_credit − free_distance_credit + minimum_top_up + score_adjustment − credits_used (+ brought_forward); never negative. Charged to the default card.',
    }),
    capped_days: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date', description: 'The Europe/London calendar day.' }),
        distance_driven_in_metres: Type.Integer({
          description:
            'Everything driven that day (journeys counted by the day they start), earlier statements’ included.',
        }),
        distance_charged_in_metres: Type.Integer({ description: 'At most the day’s cap.' }),
        credit: Type.Number({
          description:
            'The usage premium of the distance above the cap, at the rates of the journeys that went over it (the day’s latest first).',
        }),
      }),
      {
        description:
          'Days over the product’s daily cap that this statement credits; empty without a daily cap.',
      },
    ),
    cap_credit: Type.Number({ description: 'The sum of `capped_days[].credit` (pounds).' }),
    annual_cap_credit: Type.Number({
      description:
        'The usage premium of distance above the product’s annual cap in the policy year, after daily caps.',
    }),
    free_distance_credit: Type.Number({
      description:
        'The usage premium of the product’s free distance: the first still charged, in journey order.',
    }),
    minimum_top_up: Type.Number({
      description: 'What brings the usage premium after the credits above up to the product’s minimum.',
    }),
    score_adjustment: Type.Number({
      description:
        'Price by driving score (the product’s `score_pricing` rule): the sum of `score_months[].adjustment`, in pounds; negative is a credit. 0 without the rule.',
    }),
    score_months: Type.Array(
      Type.Object({
        month: Type.String({ description: 'The Europe/London calendar month adjusted, `YYYY-MM`.' }),
        score: Type.Union([Type.Number(), Type.Null()], {
          description:
            'The month’s driving score that priced it; null when it has none that stands (no scored trip, or under 50 miles scored): then its target is no adjustment.',
        }),
        adjustment_percent: Type.Number({
          description:
            'The score’s band, capped: percent of the month’s usage premium (negative: a discount).',
        }),
        usage_premium: Type.Number({
          description:
            'The month’s usage premium billed so far, this statement’s included, less the caps’ and free distance’s credits of its journeys (pounds).',
        }),
        adjusted_before: Type.Number({
          description: 'What earlier statements adjusted the month by (pounds).',
        }),
        adjustment: Type.Number({
          description:
            'What this statement adjusts the month by: usage_premium × adjustment_percent / 100, rounded half to even to the penny, less adjusted_before (pounds).',
        }),
      }),
      {
        description:
          'Each month this statement adjusts by score: a month is adjusted once it is over and no dispute of it is pending, and again on a later statement when its usage or score changes (a late upload, a void, a dispute accepted) by the difference only. Empty without the rule.',
      },
    ),
    credits_used: Type.Number(),
    carried_forward: Type.Number({
      description:
        'Billed but below the card processor’s minimum charge (30p in GBP): not charged now, carried to the next statement.',
    }),
    brought_forward: Type.Number({
      description: 'Carried in from an earlier statement below the minimum charge, and billed in this one.',
    }),
    subscription_installments: Type.Integer({ description: 'Installments that fell due in the period.' }),
    statement_start_date: Type.String({
      format: 'date-time',
      description: 'The previous statement’s end + 1 s; the first starts at the policy’s start_date.',
    }),
    statement_end_date: Type.String({ format: 'date-time', description: 'The effective_date (inclusive).' }),
    journey_count: Type.Integer(),
    journeys: Type.Array(StatementJourneySchema),
    odometer: Type.Union(
      [
        Type.Object({
          start_reading_metres: Type.Integer({
            description:
              'The reading the span starts at: the previous statement’s end reading when it had one, else the reading nearest the period’s start within 3 days.',
          }),
          start_reading_time: Type.String({ format: 'date-time' }),
          end_reading_metres: Type.Integer({
            description: 'The reading nearest the period’s end within 3 days, after the start reading.',
          }),
          end_reading_time: Type.String({ format: 'date-time' }),
          odometer_distance_in_metres: Type.Integer({ description: 'end − start reading.' }),
          gps_distance_in_metres: Type.Integer({
            description:
              'The policy’s journeys (not void, reconciliations aside) starting from the start reading’s time up to (not including) the end reading’s, as the statement was written.',
          }),
          discrepancy_percent: Type.Union([Type.Number(), Type.Null()], {
            description:
              '(odometer − GPS) / odometer × 100, rounded half-even to 2 decimals; negative when GPS is the larger; null when the odometer did not move.',
          }),
        }),
        Type.Null(),
      ],
      {
        description:
          'The odometer readings the statement compared (`POST /telematics/odometer`); null without readings around both ends of its period. Under the product’s `billing_distance_source` `odometer` or `greater`, an odometer distance above the GPS distance is billed as a journey with `source: "odometer_reconciliation"`.',
      },
    ),
    payment: Type.Optional(
      Type.Object(
        {
          payment_amount: Type.Union([Type.Number(), Type.Null()]),
          error_message: Type.Optional(Type.String()),
        },
        {
          description:
            'Present when a payment was attempted: `payment_amount` on success; null and `error_message` on failure.',
        },
      ),
    ),
  },
  { description: 'A usage statement.' },
);

export type Statement = Static<typeof StatementSchema>;
