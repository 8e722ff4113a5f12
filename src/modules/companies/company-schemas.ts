import { Type, type Static } from 'typebox';

export const CreateCompanySchema = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The company’s display name.',
      examples: ['Acme Mutual'],
    }),
    contact_email: Type.Optional(
      Type.String({
        format: 'email',
        maxLength: 254,
        description: 'Optional: where operational emails go, such as a webhook endpoint being disabled.',
        examples: ['integrations@acme.example'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateCompany = Static<typeof CreateCompanySchema>;

export const CompanyCredentialsSchema = Type.Object(
  {
    company_reference: Type.String({ examples: ['co_q3ZbX1d2kPfA'] }),
    name: Type.String(),
    client_id: Type.String({ description: 'Public: sent in the `client_id` header.' }),
    client_secret: Type.String({
      description: 'Production secret. Shown once; only its hash is kept. Empty when not rotated.',
    }),
    client_secret_sandbox: Type.String({
      description: 'Sandbox secret. Shown once; only its hash is kept. Empty when not rotated.',
    }),
    stripe_sandbox_secret_key: Type.String({
      description:
        'The company’s own account in the built-in Stripe sandbox (`/sandbox/stripe/v1/…`): the `sk_test_…` key the service charges the sandbox environment’s cards with. Objects belong to the key that made them; another key gets 404.',
    }),
  },
  { $id: 'CompanyCredentials' },
);

export const CompanySummarySchema = Type.Object(
  {
    company_reference: Type.String(),
    name: Type.String(),
    client_id: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    secrets_rotated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    contact_email: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'CompanySummary' },
);

export const CompanyListSchema = Type.Object({
  companies: Type.Array(Type.Ref('CompanySummary')),
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `after` for the next page; null on the last.',
  }),
});

export const ListCompaniesQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    after: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const RotateSecretsSchema = Type.Union([
  Type.Object(
    {
      environment: Type.Optional(
        Type.Union([Type.Literal('production'), Type.Literal('sandbox')], {
          description: 'Rotate only this one; both when absent.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);

export const CompanyReferenceParamsSchema = Type.Object({
  company_reference: Type.String({ maxLength: 100 }),
});
