import { Type, type Static } from 'typebox';
import { DrivingEventSchema } from '../scores/index.ts';
import { CLOCK_SKEW_ALLOWANCE_SECONDS, ROUTE_MAX_CHARACTERS, ROUTE_MAX_POINTS } from './rules/index.ts';

const UNIX_MAX = 4_102_444_800; // 2100-01-01: far enough for any journey, small enough to catch milliseconds

const unixSeconds = (description: string, example = 1_749_800_000) =>
  Type.Integer({ minimum: 0, maximum: UNIX_MAX, description, examples: [example] });
/** The examples of a journey's times: 08:13 to 08:33 on 2025-06-13 (the OpenAPI document moves them to today). */
export const EXAMPLE_JOURNEY_START = 1_749_802_380;
export const EXAMPLE_JOURNEY_END = 1_749_803_580;

/** Most journeys in one batch upload. */
export const BATCH_MAX_JOURNEYS = 1000;

export const JourneyInputSchema = Type.Object(
  {
    route: Type.String({
      minLength: 1,
      maxLength: ROUTE_MAX_CHARACTERS,
      description: `The route as an encoded polyline (Google's format), at \`precision\` 5 (1e-5°, the default) or 6. At least 2 and at most ${ROUTE_MAX_POINTS.toLocaleString('en-GB')} points; at most ${ROUTE_MAX_CHARACTERS.toLocaleString('en-GB')} characters; latitudes within ±90 and longitudes within ±180.`,
      examples: ['_p~iF~ps|U_ulLnnqC_mqNvxq`@'],
    }),
    start_time: unixSeconds('When the journey started, UNIX seconds.', EXAMPLE_JOURNEY_START),
    end_time: unixSeconds(
      `When it ended, UNIX seconds: after \`start_time\`, and not in the future (${CLOCK_SKEW_ALLOWANCE_SECONDS} s of device clock skew allowed).`,
      EXAMPLE_JOURNEY_END,
    ),
    policy_reference: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'The policy the journey was driven on.',
      examples: ['amber-falcon-river'],
    }),
    provider_reference: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'The sender’s own id for the journey: the idempotency key. Sending the same one again for the same policy returns the stored journey (200) instead of adding another.',
        examples: ['trip-2025-06-13-0815'],
      }),
    ),
    precision: Type.Optional(
      Type.Union([Type.Literal(5), Type.Literal(6)], {
        default: 5,
        description: 'Polyline precision: 5 (Google’s, the default) or 6 (OSRM, Valhalla).',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'A journey as a telematics source sends it. Milepost extensions: `provider_reference`, `precision`.',
  },
);
export type JourneyInput = Static<typeof JourneyInputSchema>;

const nullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
const nullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const JourneySchema = Type.Object(
  {
    journey_reference: Type.String({ format: 'uuid', description: 'The journey’s id.' }),
    provider_reference: nullableString('The sender’s id for the journey, or null.'),
    policy_reference: Type.String(),
    policy_version_reference: Type.String({
      format: 'uuid',
      description: 'The policy version in force when the journey started: the one that rates it.',
    }),
    route: Type.String({ description: 'The encoded polyline as sent.' }),
    precision: Type.Union([Type.Literal(5), Type.Literal(6)], {
      description: 'Milepost extension: the polyline precision of `route`.',
    }),
    distance_in_metres: Type.Integer({
      minimum: 0,
      description: 'Length of the route on the WGS84 ellipsoid, whole metres. The premium is rated on it.',
    }),
    distance_units: Type.Union([Type.Literal('miles'), Type.Literal('kms')], {
      description: 'The unit the policy prices distance in (`pricing.usage_unit`): `miles` or `kms`.',
    }),
    total_miles: Type.Number({ description: 'distance_in_metres / 1,609.344, half-even to 2 decimals.' }),
    total_kms: Type.Number({ description: 'distance_in_metres / 1,000, half-even to 2 decimals.' }),
    duration_in_seconds: Type.Integer({
      minimum: 0,
      description:
        'Milepost extension: end_at − start_at. Only an `odometer_reconciliation` takes no time (0); every other journey takes at least a second.',
    }),
    usage_rate: Type.Number({
      description:
        'Money per unit of distance of the version in force at the start (e.g. 0.045 = £0.045 a mile).',
    }),
    usage_premium: Type.Number({
      description:
        'usage_rate × distance in the policy’s unit, rounded once, half to even, to pence; in pounds.',
    }),
    start_lat: nullableNumber(
      'First point of the route, degrees. A journey without a route (an estimate) has the place last known, or null.',
    ),
    start_long: nullableNumber('Degrees; null as start_lat.'),
    end_lat: nullableNumber('Last point of the route, degrees; null as start_lat.'),
    end_long: nullableNumber('Degrees; null as start_lat.'),
    start_at: Type.Integer({ description: 'UNIX seconds.' }),
    end_at: Type.Integer({ description: 'UNIX seconds.' }),
    start_name: nullableString(
      'Town or place at the start, from the offline reverse geocoder (GeoNames); null where none is near (abroad, at sea). When both ends are in the same town, an end named by the town itself is named by the part of the town it is in, where the gazetteer has one ("St Pancras → Westminster", not "London → London"; "Camden Town → Westminster", not "Camden Town → London").',
    ),
    end_name: nullableString('Town or place at the end; null where none is near.'),
    start_postcode: nullableString(
      'Nearest live GB postcode to the start (OS Code-Point Open); null beyond 15 km of any (abroad, at sea, Northern Ireland).',
    ),
    end_postcode: nullableString('Nearest live GB postcode to the end; null where none is near.'),
    is_void: Type.Boolean(),
    void_reason: nullableString('Milepost extension: why it was voided; null unless void.'),
    voided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Milepost extension: when it was voided (ISO); null unless void.',
    }),
    statement_version_reference: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
      description:
        'Milepost extension: the statement (`st` version) that billed the journey; null until billed.',
    }),
    created_at: Type.String({
      format: 'date-time',
      description: 'Milepost extension: when it was received.',
    }),
    source: Type.Union(
      [
        Type.Literal('api'),
        Type.Literal('device'),
        Type.Literal('estimate'),
        Type.Literal('odometer_reconciliation'),
      ],
      {
        description:
          'Milepost extension: `api` (posted by a client), `device` (a trip cut from a device’s positions), `estimate` (a whole day a device was silent, from the product’s `device_offline` rule; no route) or `odometer_reconciliation` (the odometer’s distance beyond the GPS distance, billed by a statement under the product’s `billing_distance_source`; no route, no duration).',
      },
    ),
    device_id: nullableString(
      'Milepost extension: the device a `device` trip was cut from or an `estimate` stands in for; null otherwise.',
    ),
    is_estimated: Type.Boolean({ description: 'Milepost extension: true for `source: "estimate"`.' }),
    gap_distance_in_metres: Type.Integer({
      minimum: 0,
      description:
        'Milepost extension: the part of distance_in_metres bridged in a straight line across gaps in a device’s data while moving; 0 otherwise.',
    }),
    score: Type.Optional(
      Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], {
        description:
          'Milepost extension, on reads: the driving score of a `device` trip, 0–100 to 1 decimal (docs/api.md, "Driving scores"); null for a trip under a mile and for journeys not cut from a device.',
      }),
    ),
    events: Type.Optional(
      Type.Array(DrivingEventSchema, {
        description: 'Milepost extension, on reads: the driving events of a `device` trip, in time order.',
      }),
    ),
  },
  { $id: 'Journey', description: 'A journey with what the service derived from its route.' },
);
export type Journey = Static<typeof JourneySchema>;

/** A journey in a batch result: as POST /journeys returns it, without the route the client already has. */
export type BatchJourney = Omit<Journey, 'route'>;

export const JourneyReferenceParamsSchema = Type.Object({
  journey_reference: Type.String({ minLength: 1, maxLength: 100, description: 'The journey’s id (a UUID).' }),
});

export const VoidJourneySchema = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Why the journey is void (kept in the audit record and the event).',
      examples: ['Duplicate upload from the phone app'],
    }),
  },
  { additionalProperties: false },
);
export type VoidJourney = Static<typeof VoidJourneySchema>;

export const ListJourneysQuerySchema = Type.Object(
  {
    policy_reference: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'The policy whose journeys to list. Required with client credentials; with a policyholder token it narrows the list to one of their policies.',
      }),
    ),
    from: Type.Optional(unixSeconds('Journeys starting at or after this time (UNIX seconds, inclusive).')),
    to: Type.Optional(unixSeconds('Journeys starting at or before this time (UNIX seconds, inclusive).')),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    after: Type.Optional(
      Type.String({ maxLength: 200, description: 'The `next_cursor` of the previous page.' }),
    ),
  },
  { additionalProperties: false },
);
export type ListJourneysQuery = Static<typeof ListJourneysQuerySchema>;

export const JourneyListSchema = Type.Object({
  journeys: Type.Array(Type.Ref('Journey'), { description: 'Oldest start first; void journeys included.' }),
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `after` for the next page; null on the last.',
  }),
});

export const BatchInputSchema = Type.Object(
  {
    journeys: Type.Array(
      Type.Unknown({
        description:
          'A journey as POST /journeys takes it. Each item is validated on its own, so a bad item fails alone.',
      }),
      { minItems: 1, maxItems: BATCH_MAX_JOURNEYS },
    ),
  },
  { additionalProperties: false },
);

const { route: _route, ...batchJourneyProperties } = JourneySchema.properties;

export const BatchItemErrorSchema = Type.Object(
  {
    code: Type.String({ description: 'The stable code POST /journeys would answer with.' }),
    detail: Type.String(),
    errors: Type.Optional(Type.Array(Type.Ref('FieldError'))),
  },
  { description: 'Why this item was not stored.' },
);

export const BatchResultSchema = Type.Object({
  results: Type.Array(
    Type.Object({
      index: Type.Integer({ minimum: 0, description: 'Position of the item in `journeys`.' }),
      status: Type.Integer({
        description:
          'What POST /journeys would have answered for this item: 201 stored, 200 already stored (same `provider_reference`), 404, 409, 422 …',
      }),
      journey: Type.Optional(
        Type.Object(batchJourneyProperties, { description: 'The journey, without `route`; on 200 and 201.' }),
      ),
      error: Type.Optional(BatchItemErrorSchema),
    }),
    { description: 'One result per item, in order.' },
  ),
  created: Type.Integer({ description: 'Items stored now (201).' }),
  existing: Type.Integer({ description: 'Items already stored (200).' }),
  rejected: Type.Integer({ description: 'Items not stored (4xx or 5xx).' }),
});
export type BatchResult = Static<typeof BatchResultSchema>;
