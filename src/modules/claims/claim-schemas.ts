import { Type, type Static } from 'typebox';
import { CLAIM_STATES, EXPOSURE_KINDS } from './rules/index.ts';

const UNIX_MAX = 4_102_444_800; // 2100-01-01
const iso = (description: string) => Type.String({ format: 'date-time', description });
const nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const pounds = (description: string) =>
  Type.Number({
    minimum: 0,
    maximum: 100_000_000,
    // NOTE: at most 2 decimals is checked by the route (claim-routes.ts): JSON Schema's multipleOf 0.01
    // divides in binary floats and refused 1.15.
    description: `${description} In pounds, at most 2 decimals.`,
  });

export const ClaimStateSchema = Type.Union(
  [
    Type.Literal('draft'),
    Type.Literal('open'),
    Type.Literal('settled'),
    Type.Literal('closed'),
    Type.Literal('rejected'),
    Type.Literal('withdrawn'),
    Type.Literal('reopened'),
  ],
  {
    description: `The claim’s state (${CLAIM_STATES.join(', ')}); the changes allowed are the state table in docs/api.md.`,
  },
);
export const ExposureKindSchema = Type.Union(
  [
    Type.Literal('own_vehicle'),
    Type.Literal('other_vehicle'),
    Type.Literal('injury'),
    Type.Literal('windscreen'),
    Type.Literal('theft'),
  ],
  { description: `What the exposure covers: ${EXPOSURE_KINDS.join(', ')}.` },
);

const ExposureSchema = Type.Object({
  exposure_id: Type.String({ format: 'uuid' }),
  kind: ExposureKindSchema,
  reserve: Type.Number({ description: 'The reserve, in pounds.' }),
  paid: Type.Number({ description: 'Paid so far, in pounds.' }),
  outstanding: Type.Number({ description: 'Reserve less paid, in pounds (0 once settled).' }),
  settled_at: Type.Union([iso('When its final payment was made.'), Type.Null()]),
});

const PaymentSchema = Type.Object({
  payment_id: Type.String({ format: 'uuid' }),
  exposure_id: Type.String({ format: 'uuid' }),
  amount: Type.Number({ description: 'In pounds.' }),
  final: Type.Boolean({ description: 'The exposure’s last payment: it is settled.' }),
  payee: Type.String(),
  paid_at: iso('When it was paid.'),
  payment_reference: Type.Union([Type.String(), Type.Null()], {
    description: 'The sender’s own id for the payment, if it gave one.',
  }),
});

const NoteSchema = Type.Object({
  note_id: Type.String({ format: 'uuid' }),
  author: Type.String({ description: '`staff:<email>`, `client` or `policyholder`.' }),
  text: Type.String(),
  created_at: iso('When it was written.'),
});

const PhotoSchema = Type.Object({
  photo_id: Type.String({ format: 'uuid' }),
  content_type: Type.String({ description: 'As told by the file’s content.' }),
  size_bytes: Type.Integer(),
  sha256: Type.String(),
  uploaded_at: iso('When it was uploaded.'),
});
export const ClaimPhotoSchema = PhotoSchema;

const TracePointSchema = Type.Object({
  time: Type.Integer({ description: 'UNIX seconds.' }),
  lat: Type.Number(),
  lon: Type.Number(),
  speed_kmh: Type.Union([Type.Number(), Type.Null()]),
});

export const ClaimSchema = Type.Object(
  {
    claim_reference: Type.String({ format: 'uuid' }),
    policy_reference: Type.String(),
    state: ClaimStateSchema,
    next_states: Type.Array(ClaimStateSchema, { description: 'The states the table allows next.' }),
    source: Type.Union([Type.Literal('crash'), Type.Literal('reported')], {
      description:
        '`crash`: opened by a crash (first notice of loss); `reported`: reported by the policyholder.',
    }),
    occurred_at: iso('When the incident happened.'),
    lat: Type.Union([Type.Number(), Type.Null()]),
    lon: Type.Union([Type.Number(), Type.Null()]),
    place_name: nullable(Type.String({ description: 'The place the geocoder names.' })),
    postcode: nullable(Type.String()),
    speed_kmh: Type.Union([Type.Number(), Type.Null()], { description: 'Speed at the moment of the crash.' }),
    crash_file: Type.Union([
      Type.Object({
        crash_reference: Type.String({ format: 'uuid' }),
        device_id: Type.String(),
        source: Type.String({ description: '`device` (reported) or `detected` (from positions).' }),
        peak_acceleration_g: Type.Union([Type.Number(), Type.Null()]),
        delta_v_kmh: Type.Union([Type.Number(), Type.Null()]),
        airbag_deployed: Type.Union([Type.Boolean(), Type.Null()]),
        complete: Type.Boolean({
          description: 'False until the 30 s after the impact (and a grace) have passed.',
        }),
        positions: Type.Array(TracePointSchema, {
          description: 'From 60 s before the impact to 30 s after.',
        }),
      }),
      Type.Null(),
    ]),
    cover: Type.Union(
      [
        Type.Object({
          policy_version_reference: Type.String({ format: 'uuid' }),
          version_type: Type.String(),
          in_force: Type.Boolean({ description: 'Whether the policy covered the instant.' }),
          cover: nullable(Type.String()),
          drivers: Type.Array(Type.String()),
          vehicle: Type.Object({
            reg: nullable(Type.String()),
            make: nullable(Type.String()),
            model: nullable(Type.String()),
          }),
        }),
        Type.Null(),
      ],
      { description: 'The policy version in force at the incident: cover, drivers, vehicle.' },
    ),
    description: nullable(Type.String()),
    other_parties: nullable(Type.String()),
    injuries: Type.Union([Type.Boolean(), Type.Null()]),
    other_vehicles: Type.Union([Type.Boolean(), Type.Null()]),
    police_attended: Type.Union([Type.Boolean(), Type.Null()]),
    handler_staff_id: nullable(Type.String({ format: 'uuid' })),
    respond_by: Type.Union([iso('By when the policyholder should confirm or cancel a draft.'), Type.Null()]),
    referred_at: Type.Union([iso('When an unanswered draft went to staff.'), Type.Null()]),
    legal_hold: Type.Union([Type.Object({ reason: Type.String(), since: iso('Since when.') }), Type.Null()]),
    at_fault: Type.Union([Type.Boolean(), Type.Null()], {
      description:
        'Staff’s decision whether the policyholder was at fault; null until made. An at-fault claim settled in a term steps back the no-claims years at renewal.',
    }),
    settled_at: Type.Union([iso('When the claim was last settled.'), Type.Null()]),
    exposures: Type.Array(ExposureSchema),
    payments: Type.Array(PaymentSchema),
    photos: Type.Array(PhotoSchema),
    notes: Type.Optional(
      Type.Array(NoteSchema, { description: 'Staff’s notes; not shown to the policyholder.' }),
    ),
    opened_at: Type.Union([iso('When it became open.'), Type.Null()]),
    closed_at: Type.Union([iso('When it was closed.'), Type.Null()]),
    created_at: iso('When it was created.'),
    updated_at: iso('Its last change.'),
  },
  { $id: 'Claim' },
);
export type ClaimView = Static<typeof ClaimSchema>;

export const ClaimListSchema = Type.Object({ claims: Type.Array(Type.Ref('Claim')) });

export const PolicyClaimParamsSchema = Type.Object({
  policy_reference: Type.String({ minLength: 1, maxLength: 100 }),
});
export const PolicyClaimItemParamsSchema = Type.Object({
  policy_reference: Type.String({ minLength: 1, maxLength: 100 }),
  claim_reference: Type.String({ format: 'uuid' }),
});
export const PhotoParamsSchema = Type.Object({
  policy_reference: Type.String({ minLength: 1, maxLength: 100 }),
  claim_reference: Type.String({ format: 'uuid' }),
  photo_id: Type.String({ format: 'uuid' }),
});
export const ClaimParamsSchema = Type.Object({ claim_reference: Type.String({ format: 'uuid' }) });
export const ExposureParamsSchema = Type.Object({
  claim_reference: Type.String({ format: 'uuid' }),
  exposure_id: Type.String({ format: 'uuid' }),
});

/** A sender's own id for a request: the idempotency key of a report or a payment. */
const reference = (description: string, example: string) =>
  Type.String({
    minLength: 1,
    maxLength: 100,
    pattern: '^[\\x21-\\x7e]+$',
    description,
    examples: [example],
  });
const freeText = (max: number, description: string) =>
  Type.String({ minLength: 1, maxLength: max, description });

export const ConfirmClaimSchema = Type.Object(
  {
    injuries: Type.Boolean({ description: 'Was anyone hurt?' }),
    other_vehicles: Type.Boolean({ description: 'Were other vehicles involved?' }),
    police_attended: Type.Boolean({ description: 'Did the police attend?' }),
    description: Type.Optional(freeText(5000, 'What happened.')),
    other_parties: Type.Optional(
      freeText(5000, 'Other drivers, vehicles and witnesses: names, registrations, contacts.'),
    ),
  },
  { additionalProperties: false },
);
export type ConfirmClaim = Static<typeof ConfirmClaimSchema>;

export const ReportClaimSchema = Type.Object(
  {
    occurred_at: Type.Integer({
      minimum: 0,
      maximum: UNIX_MAX,
      description: 'When it happened, UNIX seconds.',
    }),
    lat: Type.Number({
      minimum: -90,
      maximum: 90,
      description: 'Where, degrees WGS84 (as picked on a map).',
    }),
    lon: Type.Number({ minimum: -180, maximum: 180 }),
    description: freeText(5000, 'What happened.'),
    other_parties: Type.Optional(freeText(5000, 'Other drivers, vehicles and witnesses.')),
    injuries: Type.Boolean(),
    other_vehicles: Type.Boolean(),
    police_attended: Type.Boolean(),
    report_reference: Type.Optional(
      reference(
        'The sender’s own id for the report (printable ASCII, no spaces): the idempotency key. The same report sent again under it opens nothing more and answers 200 with the claim it opened; another report under it, 409.',
        'app-7f3c9a1e52d04b8c',
      ),
    ),
  },
  { additionalProperties: false },
);
export type ReportClaim = Static<typeof ReportClaimSchema>;

export const TransitionSchema = Type.Object(
  {
    state: ClaimStateSchema,
    reason: Type.Optional(freeText(2000, 'Why; kept as a note.')),
  },
  { additionalProperties: false },
);
export type Transition = Static<typeof TransitionSchema>;

export const FaultSchema = Type.Object(
  {
    at_fault: Type.Boolean({ description: 'Whether the policyholder was at fault.' }),
    reason: Type.Optional(freeText(2000, 'Why; kept as a note.')),
  },
  { additionalProperties: false },
);
export type Fault = Static<typeof FaultSchema>;

export const NewExposureSchema = Type.Object(
  { kind: ExposureKindSchema, reserve: pounds('The first reserve.') },
  { additionalProperties: false },
);
export const ReserveSchema = Type.Object(
  { reserve: pounds('The new reserve.') },
  { additionalProperties: false },
);
export const NewPaymentSchema = Type.Object(
  {
    amount: Type.Number({
      exclusiveMinimum: 0,
      maximum: 100_000_000,
      description: 'In pounds, at most 2 decimals.',
    }),
    final: Type.Boolean({ description: 'The last payment of the exposure: it is settled after it.' }),
    payee: freeText(200, 'Who is paid (the policyholder, a repairer, a third party).'),
    payment_reference: Type.Optional(
      reference(
        'The sender’s own id for the payment (printable ASCII, no spaces): the idempotency key. The same one sent again for the exposure, with the same amount, finality and payee, records nothing more and answers 200 with the claim; with another payment, 409.',
        'ledger-2025-000123',
      ),
    ),
  },
  { additionalProperties: false },
);
export const NoteBodySchema = Type.Object(
  { text: freeText(10_000, 'The note.') },
  { additionalProperties: false },
);
export const HandlerSchema = Type.Object(
  {
    staff_id: Type.String({
      format: 'uuid',
      description: 'A staff member with the `claims` or `admin` role.',
    }),
  },
  { additionalProperties: false },
);
export const ClaimQuerySchema = Type.Object(
  {
    state: Type.Optional(ClaimStateSchema),
    referred: Type.Optional(
      Type.Boolean({ description: 'Only drafts sent to staff unanswered (true), or not (false).' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  },
  { additionalProperties: false },
);
export const ClaimSettingsSchema = Type.Object({
  response_hours: Type.Integer({
    description: 'Hours a policyholder has to answer a draft before it goes to staff.',
  }),
  retention_years: Type.Integer({
    description:
      'Years after a claim ended (closed, rejected or withdrawn) that its personal data is kept; then it is pseudonymised by a nightly job.',
  }),
  updated_at: Type.Union([iso('When set.'), Type.Null()]),
});
export const ClaimSettingsBodySchema = Type.Object(
  {
    response_hours: Type.Integer({ minimum: 1, maximum: 720 }),
    retention_years: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
);
