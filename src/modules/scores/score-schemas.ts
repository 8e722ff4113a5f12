import { Type, type Static } from 'typebox';
import { MONTH_PATTERN as MONTH } from '../../platform/instants.ts';

export const ScoresParamsSchema = Type.Object({
  policy_reference: Type.String({ minLength: 1, maxLength: 100, examples: ['amber-falcon-river'] }),
});

export const ScoresQuerySchema = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        pattern: MONTH,
        description: 'First Europe/London month, `YYYY-MM`, inclusive. Default: 11 months before `to`.',
        examples: ['2026-01'],
      }),
    ),
    to: Type.Optional(
      Type.String({
        pattern: MONTH,
        description: 'Last month, `YYYY-MM`, inclusive; at most 36 months from `from`. Default: this month.',
        examples: ['2026-06'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type ScoresQuery = Static<typeof ScoresQuerySchema>;

export const DisputeStateSchema = Type.Union(
  [Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('rejected')],
  {
    description: 'pending until staff decide; accepted: the event no longer counts; rejected: it still does.',
  },
);

const KIND = Type.Union(
  [
    Type.Literal('harsh_braking'),
    Type.Literal('rapid_acceleration'),
    Type.Literal('harsh_cornering'),
    Type.Literal('speeding'),
    Type.Literal('fatigue'),
  ],
  { description: 'What happened; docs/api.md ("Driving scores") gives each threshold.' },
);

export const DrivingEventSchema = Type.Object(
  {
    event_reference: Type.String({ format: 'uuid' }),
    kind: KIND,
    occurred_at: Type.String({ format: 'date-time', description: 'When it began.' }),
    lat: Type.Number(),
    lng: Type.Number(),
    speed_mph: Type.Number({ description: 'At its start (speeding: the highest of the spell), 1 decimal.' }),
    acceleration_g: Type.Union([Type.Number(), Type.Null()], {
      description: 'Braking, acceleration, cornering: the peak, in g, 2 decimals; null otherwise.',
    }),
    duration_seconds: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Speeding: the spell; fatigue: the driving without a 20-minute stop; null otherwise.',
    }),
    dispute: Type.Union(
      [
        Type.Object({
          dispute_reference: Type.String({ format: 'uuid' }),
          state: DisputeStateSchema,
        }),
        Type.Null(),
      ],
      {
        description:
          'The event’s dispute, if the policyholder disputed it; an accepted one no longer counts in the trip’s or month’s score.',
      },
    ),
  },
  { description: 'A driving event of a trip cut from a device’s positions.' },
);
export type DrivingEventView = Static<typeof DrivingEventSchema>;

export const MonthScoreSchema = Type.Object({
  month: Type.String({ pattern: MONTH, description: 'Europe/London calendar month.' }),
  score: Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], {
    description: 'Distance-weighted mean of the month’s trip scores, 1 decimal; null without a scored trip.',
  }),
  provisional: Type.Boolean({
    description: 'True until the month is over and 50 miles of scored trips are in it.',
  }),
  closed: Type.Boolean({ description: 'Whether `score.month_closed` has been sent for it.' }),
  distance_miles: Type.Number({ description: 'Distance of the scored trips, 2 decimals.' }),
  scored_trips: Type.Integer({ minimum: 0 }),
  disputed: Type.Boolean({
    description:
      'A pending dispute is on an event of the month: the month is not used for pricing until it is decided.',
  }),
});
export type MonthScore = Static<typeof MonthScoreSchema>;

export const PolicyScoresSchema = Type.Object(
  { policy_reference: Type.String(), months: Type.Array(MonthScoreSchema) },
  { $id: 'PolicyScores', description: 'A policy’s driving scores, month by month.' },
);
export type PolicyScores = Static<typeof PolicyScoresSchema>;

export const DisputeParamsSchema = Type.Object({
  policy_reference: Type.String({ minLength: 1, maxLength: 100, examples: ['amber-falcon-river'] }),
  event_reference: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'The event’s `event_reference`.',
  }),
});

export const PolicyParamsSchema = ScoresParamsSchema;

export const NewDisputeSchema = Type.Object(
  {
    reason: Type.Union([Type.Literal('passenger'), Type.Literal('gps_error'), Type.Literal('other')], {
      description:
        '`passenger`: someone else was driving; `gps_error`: the positions were wrong; `other`: say why.',
    }),
    details: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        pattern: '\\S',
        description: 'In the policyholder’s words; required when `reason` is `other`.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type NewDispute = Static<typeof NewDisputeSchema>;

export const DisputeSchema = Type.Object(
  {
    dispute_reference: Type.String({ format: 'uuid' }),
    policy_reference: Type.String(),
    journey_reference: Type.String({ format: 'uuid' }),
    event_reference: Type.String({ format: 'uuid' }),
    kind: KIND,
    occurred_at: Type.String({ format: 'date-time', description: 'When the disputed event began.' }),
    reason: Type.Union([Type.Literal('passenger'), Type.Literal('gps_error'), Type.Literal('other')]),
    details: Type.Union([Type.String(), Type.Null()]),
    state: DisputeStateSchema,
    created_at: Type.String({ format: 'date-time' }),
    decided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    decision_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'Staff’s reason, once decided.',
    }),
    company_reference: Type.Optional(Type.String({ description: 'Staff reads only: the insurer.' })),
  },
  { $id: 'ScoreDispute', description: 'A policyholder’s dispute of a driving event.' },
);
export type DisputeView = Static<typeof DisputeSchema>;

export const DisputeListSchema = Type.Object({ disputes: Type.Array(Type.Ref('ScoreDispute')) });

export const AdminDisputeQuerySchema = Type.Object(
  {
    state: Type.Optional(
      Type.Union([Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('rejected')], {
        description: 'Default `pending`.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AdminDisputeParamsSchema = Type.Object({
  dispute_reference: Type.String({ minLength: 1, maxLength: 100 }),
});

export const DisputeDecisionSchema = Type.Object(
  {
    decision: Type.Union([Type.Literal('accept'), Type.Literal('reject')]),
    reason: Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S' }),
  },
  { additionalProperties: false },
);
export type DisputeDecision = Static<typeof DisputeDecisionSchema>;
