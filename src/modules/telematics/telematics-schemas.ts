import { Type, type Static } from 'typebox';
import type { JsonBodyLimits } from '../../platform/http/body-limits.ts';
import {
  ATTRIBUTE_NAME_PATTERN,
  MAX_ATTRIBUTE_NAME_CHARS,
  MAX_ATTRIBUTE_TEXT_CHARS,
  MAX_ATTRIBUTES_PER_POSITION,
} from './rules/position-attributes.ts';

/** Most positions in one request. */
export const MAX_POSITIONS_PER_REQUEST = 10_000;
export const POSITIONS_PAGE_DEFAULT = 1000;
export const POSITIONS_PAGE_MAX = 10_000;

const UNIX_MAX = 4_102_444_800; // 2100-01-01
const deviceIdOptions = {
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
  description:
    'Your name for the device (IMEI, serial, app install id): letters, digits, `.`, `_`, `:`, `-`.',
  examples: ['obd-356938035643809'],
};
const deviceId = Type.String(deviceIdOptions);
const kind = Type.Union([Type.Literal('obd'), Type.Literal('connected_car'), Type.Literal('phone')], {
  description: 'An OBD II dongle, a connected car’s own telematics, or a phone app.',
});
const policyReference = Type.String({ minLength: 1, maxLength: 100, examples: ['amber-falcon-river'] });
const isoInstant = (description: string) => Type.String({ format: 'date-time', description });

export const BindDeviceSchema = Type.Object(
  {
    device_id: deviceId,
    policy_reference: policyReference,
    kind,
    vin: Type.Optional(
      Type.String({
        minLength: 11,
        maxLength: 17,
        pattern: '^[A-HJ-NPR-Za-hj-npr-z0-9]+$',
        description: 'The vehicle identification number, when known.',
        examples: ['WVWZZZ1KZAW000001'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type BindDevice = Static<typeof BindDeviceSchema>;

export const DeviceBindingSchema = Type.Object({
  policy_reference: Type.String(),
  bound_at: isoInstant('When the binding began.'),
  unbound_at: Type.Union([isoInstant('When it ended.'), Type.Null()], {
    description: 'Null while the device is bound to this policy.',
  }),
});

export const DeviceSchema = Type.Object(
  {
    device_id: Type.String(),
    kind,
    vin: Type.Union([Type.String(), Type.Null()]),
    policy_reference: Type.Union([Type.String(), Type.Null()], {
      description: 'The policy it is bound to now; null when unbound.',
    }),
    status: Type.Union([Type.Literal('online'), Type.Literal('offline'), Type.Literal('unbound')], {
      description:
        '`unbound` without a binding; `online` when bound and a position was received for a time (or the device was bound) within the last 24 hours; `offline` otherwise.',
    }),
    last_seen_at: Type.Union([isoInstant('The latest position time received.'), Type.Null()]),
    bindings: Type.Array(DeviceBindingSchema, { description: 'Every binding, oldest first.' }),
    created_at: isoInstant('When the device was first bound.'),
  },
  { $id: 'Device' },
);
export type DeviceView = Static<typeof DeviceSchema>;

export const DeviceParamsSchema = Type.Object({ device_id: Type.String({ minLength: 1, maxLength: 100 }) });

export const ListDevicesQuerySchema = Type.Object(
  {
    policy_reference: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Only devices ever bound to this policy.' }),
    ),
    status: Type.Optional(
      Type.Literal('offline', {
        description: 'Only bound devices that have gone silent (offline), for follow-up.',
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    after: Type.Optional(
      Type.String({ maxLength: 100, description: 'The `next_cursor` of the previous page.' }),
    ),
  },
  { additionalProperties: false },
);
export type ListDevicesQuery = Static<typeof ListDevicesQuerySchema>;

export const DeviceListSchema = Type.Object({
  devices: Type.Array(Type.Ref('Device'), { description: 'By `device_id`.' }),
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `after` for the next page; null on the last.',
  }),
});

const optionalNumber = (description: string) => Type.Optional(Type.Number({ description }));

/** What a position's other attribute may hold (the bounds on names and numbers are checked by the service). */
const attributeValue = Type.Union([
  Type.Number(),
  Type.String({ maxLength: MAX_ATTRIBUTE_TEXT_CHARS }),
  Type.Boolean(),
]);
const attributesNote = `at most ${String(MAX_ATTRIBUTES_PER_POSITION)} a position, each named by at most ${String(MAX_ATTRIBUTE_NAME_CHARS)} characters matching \`${ATTRIBUTE_NAME_PATTERN}\` and holding a number, a boolean or a string of at most ${String(MAX_ATTRIBUTE_TEXT_CHARS)} characters`;

export const PositionInputSchema = Type.Object(
  {
    time: Type.Union([Type.Integer(), Type.String({ maxLength: 40 })], {
      description:
        'UNIX seconds (an integer) or an ISO 8601 date-time with an offset (`2025-06-14T08:00:00Z`); kept to the whole second.',
      examples: [1_749_888_000],
    }),
    lat: Type.Number({ description: 'Degrees, WGS84, −90 to 90.', examples: [51.501] }),
    lon: Type.Number({ description: 'Degrees, WGS84, −180 to 180.', examples: [-0.142] }),
    speed_kmh: optionalNumber('Ground speed, km/h (0 to 1,000).'),
    heading: optionalNumber('Degrees clockwise from north (0 to 360).'),
    accuracy_m: optionalNumber('Horizontal accuracy, metres (0 or more).'),
    ignition: Type.Optional(Type.Boolean()),
    odometer_metres: Type.Optional(Type.Number({ description: 'The vehicle’s odometer, whole metres.' })),
  },
  {
    additionalProperties: attributeValue,
    description: `A fix. Any other field the device sends (altitude, satellites, hdop, battery, rssi, its own I/O values) is kept as one of the position’s \`attributes\`: ${attributesNote}. Beyond that the request is 422 naming the position.`,
  },
);

export const PositionBatchSchema = Type.Object(
  {
    device_id: deviceId,
    positions: Type.Array(PositionInputSchema, { minItems: 1, maxItems: MAX_POSITIONS_PER_REQUEST }),
  },
  { additionalProperties: false },
);
export type PositionBatch = Static<typeof PositionBatchSchema>;

/** A batch's largest body (POST /telematics/positions, an MQTT message): 10,000 positions with every field (~200 bytes each). */
export const POSITIONS_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/**
 * A batch's limits on a body's shape beyond the default ones (POST /telematics/positions, an MQTT
 * message): twice what a batch of positions holds, so that one just over (10,001 positions) is still
 * answered by validation: its positions (or a track's coordinates), and their values and keys, each
 * position an object with a key and a value for each field and for each other attribute it may carry.
 */
export const POSITIONS_JSON_LIMITS: Partial<JsonBodyLimits> = {
  itemsPerArray: 2 * MAX_POSITIONS_PER_REQUEST,
  tokens:
    2 *
    MAX_POSITIONS_PER_REQUEST *
    (1 + 2 * (Object.keys(PositionInputSchema.properties).length + MAX_ATTRIBUTES_PER_POSITION)),
};

export const PositionUploadQuerySchema = Type.Object(
  {
    device_id: Type.Optional(
      Type.String({
        ...deviceIdOptions,
        description:
          'The device, for a GPX or GeoJSON body (required then). With a JSON body it may be left out; when given, it must equal the body’s `device_id`.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PositionUploadQuery = Static<typeof PositionUploadQuerySchema>;

const trackFeature = Type.Object(
  {
    type: Type.Literal('Feature'),
    geometry: Type.Object({
      type: Type.Literal('LineString'),
      coordinates: Type.Array(Type.Array(Type.Number(), { minItems: 2 }), {
        maxItems: MAX_POSITIONS_PER_REQUEST,
        description: '`[lon, lat]` or `[lon, lat, elevation]`, WGS84 degrees (elevation is ignored).',
      }),
    }),
    properties: Type.Object({
      coordTimes: Type.Array(Type.String({ maxLength: 40 }), {
        maxItems: MAX_POSITIONS_PER_REQUEST,
        description: 'One ISO 8601 date-time with an offset per coordinate, in the same order.',
      }),
    }),
  },
  { description: 'A track: a LineString Feature with `properties.coordTimes` (the togeojson convention).' },
);

/** `application/geo+json`: a track Feature, or a FeatureCollection of them (positions concatenated). */
export const TrackGeoJsonSchema = Type.Union([
  trackFeature,
  Type.Object({
    type: Type.Literal('FeatureCollection'),
    features: Type.Array(trackFeature, { minItems: 1, maxItems: 1000 }),
  }),
]);
export type TrackGeoJson = Static<typeof TrackGeoJsonSchema>;

/** `application/gpx+xml`: the document as text; the example is a one-point track. */
export const GpxUploadSchema = Type.String({
  description:
    'A GPX 1.1 document: each `<trkpt lat lon>` with its `<time>` is a position; routes, waypoints, elevation and extensions are ignored. No DOCTYPE.',
  examples: [
    '<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="tracker" xmlns="http://www.topografix.com/GPX/1/1">\n  <trk><trkseg>\n    <trkpt lat="51.501" lon="-0.142"><time>2025-06-14T08:00:00Z</time></trkpt>\n  </trkseg></trk>\n</gpx>',
  ],
});

export const PositionBatchResultSchema = Type.Object({
  accepted: Type.Integer({ minimum: 0, description: 'Positions stored by this request.' }),
  duplicates: Type.Integer({
    minimum: 0,
    description: 'Valid positions whose device and second were stored already (or repeated in the request).',
  }),
  rejected: Type.Array(
    Type.Object({
      index: Type.Integer({ minimum: 0, description: 'Index in `positions`.' }),
      reason: Type.Union(
        [
          Type.Literal('invalid_time'),
          Type.Literal('in_future'),
          Type.Literal('outside_binding'),
          Type.Literal('out_of_range'),
        ],
        { description: 'Why it was not stored.' },
      ),
      message: Type.String(),
    }),
  ),
});
export type PositionBatchResult = Static<typeof PositionBatchResultSchema>;

export const ListPositionsQuerySchema = Type.Object(
  {
    from: Type.Optional(
      Type.Integer({ minimum: 0, maximum: UNIX_MAX, description: 'UNIX seconds, inclusive (default 0).' }),
    ),
    to: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: UNIX_MAX,
        description: 'UNIX seconds, inclusive (default: no end).',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: POSITIONS_PAGE_MAX, default: POSITIONS_PAGE_DEFAULT }),
    ),
  },
  { additionalProperties: false },
);
export type ListPositionsQuery = Static<typeof ListPositionsQuerySchema>;

const nullableNumber = Type.Union([Type.Number(), Type.Null()]);
export const PositionListSchema = Type.Object({
  device_id: Type.String(),
  positions: Type.Array(
    Type.Object({
      time: Type.Integer({ description: 'UNIX seconds.' }),
      lat: Type.Number(),
      lon: Type.Number(),
      speed_kmh: nullableNumber,
      heading: nullableNumber,
      accuracy_m: nullableNumber,
      ignition: Type.Union([Type.Boolean(), Type.Null()]),
      odometer_metres: Type.Union([Type.Integer(), Type.Null()]),
      attributes: Type.Record(Type.String(), attributeValue, {
        description:
          'The other fields the device sent with the position, as they came (`{}` when none); the order of their names is not kept.',
      }),
      policy_reference: Type.String({ description: 'The policy the device was bound to at `time`.' }),
      received_at: isoInstant('When Milepost stored it.'),
    }),
    { description: 'Oldest first.' },
  ),
  next_from: Type.Union([Type.Integer(), Type.Null()], {
    description: 'When the page is full: pass as `from` for the next page (the last time + 1); else null.',
  }),
});
export type PositionList = Static<typeof PositionListSchema>;

const odometerSource = Type.Union(
  [Type.Literal('connected_car'), Type.Literal('photo'), Type.Literal('mot')],
  {
    description:
      'Where the reading came from: the car’s own telematics, a photo of the dashboard, or an MOT record.',
  },
);

export const OdometerReadingInputSchema = Type.Object(
  {
    device_id: Type.Optional(
      Type.String({
        ...deviceIdOptions,
        description:
          'The device the reading came with: the policy is the one it was bound to at `time`. Exactly one of `device_id` and `policy_reference`.',
      }),
    ),
    policy_reference: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'The policy. Exactly one of `device_id` and `policy_reference`.',
        examples: ['amber-falcon-river'],
      }),
    ),
    reading_metres: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'The odometer, whole metres. Exactly one of `reading_metres` and `reading_miles`.',
        examples: [52_304_118],
      }),
    ),
    reading_miles: Type.Optional(
      Type.Number({
        minimum: 0,
        description:
          'The odometer in miles (decimals allowed), kept as whole metres (× 1,609.344, rounded half up).',
        examples: [32_500.4],
      }),
    ),
    time: Type.Union([Type.Integer(), Type.String({ maxLength: 40 })], {
      description:
        'When it was read: UNIX seconds or an ISO 8601 date-time with an offset; kept to the whole second. At most 5 minutes ahead of the server.',
      examples: [1_749_888_000],
    }),
    source: odometerSource,
  },
  { additionalProperties: false },
);
export type OdometerReadingInput = Static<typeof OdometerReadingInputSchema>;

export const OdometerReadingSchema = Type.Object(
  {
    reading_reference: Type.String({ format: 'uuid' }),
    policy_reference: Type.String(),
    device_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The device it was sent with; null when it named the policy.',
    }),
    reading_metres: Type.Integer({ minimum: 0 }),
    time: isoInstant('When it was read (whole seconds).'),
    source: odometerSource,
    created_at: isoInstant('When it was received.'),
  },
  { $id: 'OdometerReading' },
);
export type OdometerReadingView = Static<typeof OdometerReadingSchema>;

export const ListOdometerQuerySchema = Type.Object(
  {
    policy_reference: Type.String({ minLength: 1, maxLength: 100 }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    after: Type.Optional(
      Type.String({ maxLength: 100, description: 'The `next_cursor` of the previous page.' }),
    ),
  },
  { additionalProperties: false },
);
export type ListOdometerQuery = Static<typeof ListOdometerQuerySchema>;

export const OdometerReadingListSchema = Type.Object({
  readings: Type.Array(Type.Ref('OdometerReading'), { description: 'Oldest first.' }),
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `after` for the next page; null on the last.',
  }),
});
export type OdometerReadingList = Static<typeof OdometerReadingListSchema>;
