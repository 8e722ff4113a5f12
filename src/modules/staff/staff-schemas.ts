import { Type } from 'typebox';
import { dateTimeSchema } from '../../platform/instants.ts';

const RoleSchema = Type.Union(
  [Type.Literal('viewer'), Type.Literal('operations'), Type.Literal('admin'), Type.Literal('claims')],
  {
    description:
      '`viewer` reads; `operations` also acts on policies, payments, devices and deliveries; `claims` reads as a viewer and handles claims (states, exposures, reserves, payments, notes, handlers); `admin` also manages companies, secrets, staff, products and billing runs, and may handle claims.',
  },
);
const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const StaffSchema = Type.Object({
  staff_id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: RoleSchema,
  active: Type.Boolean(),
  totp_enabled: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  last_sign_in_at: nullable(Type.String({ format: 'date-time' })),
});

export const StaffListSchema = Type.Object({ data: Type.Array(StaffSchema) });

export const ClaimHandlerListSchema = Type.Object({
  data: Type.Array(
    Type.Object({
      staff_id: Type.String({ format: 'uuid' }),
      email: Type.String(),
      role: Type.Union([Type.Literal('claims'), Type.Literal('admin')]),
    }),
  ),
});

export const CreateStaffSchema = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 254 }), role: RoleSchema },
  { additionalProperties: false },
);

export const CreatedStaffSchema = Type.Intersect([
  StaffSchema,
  Type.Object({
    one_time_password: Type.String({ description: 'Shown once; replaced at the first sign-in.' }),
  }),
]);

export const UpdateStaffSchema = Type.Object(
  {
    role: Type.Optional(RoleSchema),
    active: Type.Optional(Type.Boolean()),
    reset_credentials: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const TotpEnrolmentSchema = Type.Object({
  secret: Type.String({ description: 'Base32, for typing into an authenticator by hand.' }),
  otpauth_uri: Type.String(),
  qr_svg: Type.String({ description: 'The otpauth URI as a QR code: an SVG document.' }),
});

export const SessionViewSchema = Type.Object({
  stage: Type.Union([
    Type.Literal('new_password'),
    Type.Literal('totp_enrol'),
    Type.Literal('totp'),
    Type.Literal('active'),
  ]),
  csrf_token: Type.String({ description: 'Send as `x-csrf-token` on every state-changing request.' }),
  expires_at: Type.String({
    format: 'date-time',
    description: 'Moves on with use (12 hours idle by default).',
  }),
  staff: Type.Object({
    staff_id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    role: RoleSchema,
    totp_enabled: Type.Boolean(),
  }),
  totp_enrolment: Type.Optional(TotpEnrolmentSchema),
});

export const AuditQuerySchema = Type.Object(
  {
    actor: Type.Optional(Type.String({ maxLength: 300, description: '`staff:<email>` or `admin-key`.' })),
    company_reference: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    environment: Type.Optional(Type.Union([Type.Literal('sandbox'), Type.Literal('production')])),
    policy_reference: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'With company_reference and environment.' }),
    ),
    resource: Type.Optional(Type.String({ maxLength: 300, description: 'e.g. `journey_reference:J-1`.' })),
    request_id: Type.Optional(Type.String({ maxLength: 128 })),
    from: Type.Optional(dateTimeSchema()),
    to: Type.Optional(dateTimeSchema()),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    after: Type.Optional(
      Type.String({ pattern: '^\\d{1,18}$', description: 'The previous page’s `next_cursor`.' }),
    ),
  },
  { additionalProperties: false },
);

export const AuditRecordSchema = Type.Object({
  id: Type.String(),
  occurred_at: Type.String({ format: 'date-time' }),
  actor: Type.String(),
  role: nullable(Type.String()),
  action: Type.String({ description: 'The operationId of the route, e.g. `journeys.void`.' }),
  resource: nullable(Type.String()),
  company_reference: nullable(Type.String()),
  environment: nullable(Type.String()),
  policy_reference: nullable(Type.String()),
  request_id: Type.String(),
  source_address: nullable(Type.String()),
  outcome: Type.Union([Type.Literal('ok'), Type.Literal('denied'), Type.Literal('failed')]),
  table: nullable(
    Type.String({ description: 'The table of the changed row; null for a record of the request.' }),
  ),
  key: nullable(Type.String()),
  operation: nullable(Type.Union([Type.Literal('insert'), Type.Literal('update'), Type.Literal('delete')])),
  before: Type.Unknown({
    description: 'The changed fields before (all fields of a deleted row); null for an insert.',
  }),
  after: Type.Unknown({
    description:
      'The changed fields after (all fields of an inserted row); null for a delete. A record of the request itself may carry what it was asked (a billing run’s body, a report’s query); a refusal (`outcome: denied`) or a server error (`outcome: failed`) carries the problem it answered, `{status, code}`.',
  }),
});

export const AuditListSchema = Type.Object({
  data: Type.Array(AuditRecordSchema),
  next_cursor: nullable(Type.String()),
});
