import { Type, type Static } from 'typebox';

const nullableUuid = (description: string) =>
  Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description });

export const DocumentKindSchema = Type.Union(
  [
    Type.Literal('certificate'),
    Type.Literal('schedule'),
    Type.Literal('ipid'),
    Type.Literal('statement_of_fact'),
    Type.Literal('renewal_notice'),
    Type.Literal('statement'),
    Type.Literal('credit_note'),
    Type.Literal('cancellation_notice'),
  ],
  {
    description:
      '`certificate` (certificate of motor insurance), `schedule` (policy schedule), `ipid` (insurance product information document), `statement_of_fact`, `renewal_notice`, `statement` (a monthly statement with its map), `credit_note` (a void credited or a refund), `cancellation_notice`.',
  },
);

export const DocumentSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The document; `GET /documents/{id}` serves its PDF.' }),
    kind: DocumentKindSchema,
    issued_at: Type.String({ format: 'date-time', description: 'When it was issued.' }),
    file_name: Type.String({
      description: 'The PDF’s file name, as served.',
      examples: ['certificate-amber-falcon-river-2025-06-01.pdf'],
    }),
    size_bytes: Type.Integer({ minimum: 1, description: 'Size of the PDF in bytes.' }),
    sha256: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: 'SHA-256 of the PDF’s bytes (lower-case hex): the bytes served are always these.',
    }),
    template_version: Type.String({ description: 'The template version it was rendered with.' }),
    policy_reference: Type.String(),
    policy_version_reference: nullableUuid(
      'The policy version it belongs to; for a statement, the statement’s `policy_version_reference`. Null for a renewal notice of terms stored for automatic renewal and for credit notes.',
    ),
    payment_reference: nullableUuid('The refund a credit note is for.'),
    journey_reference: nullableUuid('The voided journey a credit note is for.'),
    reissue_of: nullableUuid('The document this one reissues (the original stays as issued).'),
    current: Type.Boolean({
      description: 'True for the current certificate of motor insurance (listed first); false otherwise.',
    }),
    url: Type.String({ description: 'Where its PDF is served: `/documents/{id}`.' }),
  },
  { description: 'A document issued for a policy: stored as issued, never changed.' },
);
export type DocumentView = Static<typeof DocumentSchema>;

export const DocumentListSchema = Type.Object(
  {
    documents: Type.Array(DocumentSchema, {
      description: 'The current certificate first, then every document newest first.',
    }),
  },
  { description: 'A policy’s documents.' },
);

export const PolicyDocumentsParamsSchema = Type.Object({
  policy_reference: Type.String({ minLength: 1, maxLength: 100 }),
});

export const DocumentParamsSchema = Type.Object({
  document_id: Type.String({ format: 'uuid' }),
});

export const ReissueParamsSchema = Type.Object({
  policy_reference: Type.String({ minLength: 1, maxLength: 100 }),
  document_id: Type.String({ format: 'uuid' }),
});

export const ReissueBodySchema = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Why it is reissued (kept with the new document and in the audit trail).',
    }),
  },
  { additionalProperties: false },
);

export const DocumentSettingsSchema = Type.Object(
  {
    attach_to_emails: Type.Boolean({
      description:
        'Attach each change’s documents (PDF) to an email to the policyholder, beside the link every change’s email carries. Default false.',
    }),
    updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When they were last saved; null while the defaults apply.',
    }),
  },
  { description: 'The company’s document settings, per environment.' },
);

export const DocumentSettingsBodySchema = Type.Object(
  { attach_to_emails: Type.Boolean() },
  { additionalProperties: false },
);
