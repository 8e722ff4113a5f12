import { Type, type Static } from 'typebox';

const UNIX_MAX = 4_102_444_800; // 2100-01-01

/** A crash a device reports (POST /telematics/events, or the MQTT events topic without `device_id`). */
export const CrashEventSchema = Type.Object(
  {
    device_id: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
      description: 'The device that felt the crash, as bound with POST /devices.',
      examples: ['obd-356938035643809'],
    }),
    type: Type.Literal('crash', { description: 'The kind of event; `crash` is the one kind today.' }),
    time: Type.Integer({
      minimum: 0,
      maximum: UNIX_MAX,
      description: 'When the impact happened, UNIX seconds.',
      examples: [1_749_888_000],
    }),
    lat: Type.Number({ minimum: -90, maximum: 90, description: 'Degrees, WGS84.', examples: [51.501] }),
    lon: Type.Number({ minimum: -180, maximum: 180, description: 'Degrees, WGS84.', examples: [-0.142] }),
    speed_kmh: Type.Number({
      minimum: 0,
      maximum: 500,
      description: 'Speed at the moment of impact, km/h.',
      examples: [48],
    }),
    peak_acceleration_g: Type.Number({
      minimum: 0,
      maximum: 1000,
      description: 'The largest acceleration the device measured in the impact, in g.',
      examples: [6.2],
    }),
    delta_v_kmh: Type.Optional(
      Type.Number({ minimum: 0, maximum: 500, description: 'Change of velocity in the impact, km/h.' }),
    ),
    airbag_deployed: Type.Optional(Type.Boolean({ description: 'Whether an airbag went off.' })),
  },
  { additionalProperties: false },
);
export type CrashEventInput = Static<typeof CrashEventSchema>;

export const CrashEventResultSchema = Type.Object({
  crash_reference: Type.String({ format: 'uuid', description: 'The crash as stored.' }),
  device_id: Type.String(),
  policy_reference: Type.String({ description: 'The policy the device was bound to at `time`.' }),
  time: Type.Integer({ description: 'When the stored crash happened, UNIX seconds.' }),
  duplicate: Type.Boolean({
    description:
      'True when the device had reported a crash within 2 minutes of this one already: this is that crash, and no second claim is opened.',
  }),
});
export type CrashEventResult = Static<typeof CrashEventResultSchema>;
