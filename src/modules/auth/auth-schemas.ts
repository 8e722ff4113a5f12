import { Type, type Static } from 'typebox';

/* Request and response shapes of POST /auth/token, GET /auth/users/:user_reference and the JWKS. */

export const AUTH_REQUEST_TYPES = [
  'USER_PASSWORD_AUTH',
  'NEW_PASSWORD_REQUIRED',
  'FORGOT_PASSWORD',
  'FORGOT_PASSWORD_CODE',
  'RESEND_PASSWORD',
  'REFRESH_TOKEN',
] as const;
export type AuthRequestType = (typeof AUTH_REQUEST_TYPES)[number];

/** The fields each request type needs (the others are refused as unknown for that type). */
export const FIELDS_BY_TYPE: Readonly<Record<AuthRequestType, readonly string[]>> = {
  USER_PASSWORD_AUTH: ['username', 'password'],
  NEW_PASSWORD_REQUIRED: ['username', 'session', 'new_password'],
  FORGOT_PASSWORD: ['username'],
  FORGOT_PASSWORD_CODE: ['username', 'new_password', 'code'],
  RESEND_PASSWORD: ['username'],
  REFRESH_TOKEN: ['refresh_token'],
};

const login = Type.String({
  minLength: 1,
  maxLength: 254,
  description: 'The username from the welcome email, or the account’s email address (any case).',
  examples: ['aclarke4821'],
});

export const TokenRequestSchema = Type.Object(
  {
    type: Type.Enum(AUTH_REQUEST_TYPES, { description: 'The step of the login flow.' }),
    username: Type.Optional(login),
    password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'USER_PASSWORD_AUTH: the temporary or personal password.',
      }),
    ),
    session: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'NEW_PASSWORD_REQUIRED: the `session` of the USER_PASSWORD_AUTH answer (single use, 5 minutes).',
      }),
    ),
    new_password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          'NEW_PASSWORD_REQUIRED and FORGOT_PASSWORD_CODE: the personal password to set. 8–128 characters; not a common password (nor one with digits or symbols around a common word), not repeated or sequential characters, not containing the username or email.',
      }),
    ),
    code: Type.Optional(
      Type.Union(
        [Type.String({ minLength: 1, maxLength: 20 }), Type.Integer({ minimum: 0, maximum: 999_999 })],
        {
          description:
            'FORGOT_PASSWORD_CODE: the 6-digit code from the reset email (a string; a number is accepted and zero-padded).',
          examples: ['042917'],
        },
      ),
    ),
    refresh_token: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'REFRESH_TOKEN: the refresh token of the last DONE answer.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: [
      'Always `type`; the other fields depend on it:',
      '`USER_PASSWORD_AUTH` {username, password};',
      '`NEW_PASSWORD_REQUIRED` {username, session, new_password};',
      '`FORGOT_PASSWORD` {username};',
      '`FORGOT_PASSWORD_CODE` {username, new_password, code};',
      '`RESEND_PASSWORD` {username};',
      '`REFRESH_TOKEN` {refresh_token} (Milepost extension).',
    ].join(' '),
    examples: [
      { type: 'USER_PASSWORD_AUTH', username: 'aclarke4821', password: 'correct horse battery staple' },
    ],
  },
);
export type TokenRequest = Static<typeof TokenRequestSchema>;

export const NewPasswordRequiredSchema = Type.Object(
  {
    username: Type.String({ description: 'The account’s username (use it in the next request).' }),
    session: Type.String({
      description: 'Opaque; send it with NEW_PASSWORD_REQUIRED within 5 minutes. Single use.',
    }),
    type: Type.Literal('NEW_PASSWORD_REQUIRED'),
  },
  { description: 'USER_PASSWORD_AUTH with the temporary password: choose a personal password next.' },
);

export const TokensSchema = Type.Object(
  {
    username: Type.String(),
    refresh_token: Type.String({
      description:
        'Opaque, 30 days, single use: each REFRESH_TOKEN answer carries a new one, and reusing an old one ends the session.',
    }),
    access_token: Type.String({
      description:
        'Ed25519-signed JWT (keys at /.well-known/jwks.json): `sub` = user_reference, `company`, `environment`. Send it as `Authorization: Bearer <access_token>`.',
    }),
    expiry: Type.Integer({
      description: 'UNIX time at which the access token expires (15 minutes by default).',
    }),
    type: Type.Literal('DONE'),
    session: Type.Optional(
      Type.String({ description: 'Only in the `mock` environment, for clients that read it.' }),
    ),
  },
  { description: 'Logged in: tokens.' },
);
export type Tokens = Static<typeof TokensSchema>;

const typeOnly = (type: string, description: string) =>
  Type.Object({ type: Type.Literal(type) }, { description });

export const TokenResponseSchema = Type.Union(
  [
    TokensSchema,
    NewPasswordRequiredSchema,
    typeOnly(
      'PASSWORD_RESET',
      'NEW_PASSWORD_REQUIRED or FORGOT_PASSWORD_CODE: the password is set; log in with it.',
    ),
    typeOnly(
      'FORGOT_PASSWORD_CODE',
      'FORGOT_PASSWORD: a reset code has been emailed (unknown usernames get the same answer, and no email).',
    ),
    typeOnly(
      'RESEND_PASSWORD',
      'FORGOT_PASSWORD for an account still on its temporary password (expired or not): send RESEND_PASSWORD next.',
    ),
    typeOnly(
      'TEMPORARY_PASSWORD_SENT',
      'RESEND_PASSWORD: if the account is waiting for its first password, a new temporary password has been emailed, and the account is back at the start: USER_PASSWORD_AUTH with it answers NEW_PASSWORD_REQUIRED. Every other username gets the same answer, and no email.',
    ),
  ],
  { description: 'Depends on the request type and the account; see the state table in docs/api.md.' },
);
export type TokenResponse = Static<typeof TokenResponseSchema>;

export const IDP_STATUSES = ['CONFIRMED', 'FORCE_CHANGE_PASSWORD'] as const;

const secretWithheld = (name: string) =>
  Type.Null({
    description: `Always null. The interface lists \`${name}\` on the User, but a company's secrets are shown once when they are created and kept only as hashes; and a policyholder (or anyone holding a policyholder's token) must never see the credentials that act for the whole company.`,
  });

export const UserSchema = Type.Object(
  {
    f_names: Type.String({ description: 'First names.' }),
    l_names: Type.String({ description: 'Last names.' }),
    email: Type.String(),
    username: Type.String(),
    client_id: Type.String({ description: 'The company’s public client id.' }),
    client_secret: secretWithheld('client_secret'),
    client_secret_sandbox: secretWithheld('client_secret_sandbox'),
    role: Type.Literal('policyholder'),
    active: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    idp_status: Type.Enum(IDP_STATUSES, {
      description:
        '`CONFIRMED`: a personal password is set (FORGOT_PASSWORD sends a code). `FORCE_CHANGE_PASSWORD`: the temporary password is still in use (FORGOT_PASSWORD answers RESEND_PASSWORD).',
    }),
    company_reference: Type.String(),
    user_reference: Type.String(),
    policies: Type.Array(Type.String(), { description: 'References of the user’s policies, oldest first.' }),
  },
  { description: 'A policyholder account.' },
);
export type UserView = Static<typeof UserSchema>;

export const UserParamsSchema = Type.Object({
  user_reference: Type.String({ minLength: 1, maxLength: 100, examples: ['usr_Qm9uZDAwNw'] }),
});

export const DetailsQuerySchema = Type.Object(
  {
    policy_reference: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'Which of the policyholder’s policies; absent means the current one (the latest live policy, else the latest).',
      }),
    ),
  },
  { additionalProperties: true },
);

export const JwksSchema = Type.Object(
  {
    keys: Type.Array(
      Type.Object({
        kty: Type.Literal('OKP'),
        crv: Type.Literal('Ed25519'),
        x: Type.String(),
        kid: Type.String(),
        alg: Type.Literal('Ed25519'),
        use: Type.Literal('sig'),
      }),
    ),
  },
  { description: 'The public keys that verify access tokens (RFC 7517), newest first.' },
);

export const RotateKeysBodySchema = Type.Object(
  {
    withdraw_previous: Type.Optional(
      Type.Boolean({
        description:
          'Also unpublish the previous keys at once, so that every access token they signed stops working (for a key that may have leaked). Default false: they stay published until their tokens expire.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RevokeRequestSchema = Type.Object(
  {
    refresh_token: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'The refresh token of the last DONE answer.',
    }),
  },
  { additionalProperties: false },
);
