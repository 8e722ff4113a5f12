import { Type, type Static } from 'typebox';

const nullableString = Type.Union([Type.String(), Type.Null()]);
const nullableDateTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const PolicyReferenceParamsSchema = Type.Object(
  { policy_reference: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const SetupIntentSchema = Type.Object(
  {
    setup_intent_id: Type.String({ description: 'The processor’s SetupIntent (`seti_…`).' }),
    client_secret: Type.String({
      description:
        'Confirm the SetupIntent with it in the browser (Stripe.js `confirmBacsDebitSetup`), with the sort code, account number, the account holder’s name, email and address.',
    }),
    publishable_key: Type.Union([Type.String(), Type.Null()], {
      description: 'Stripe’s publishable key for Stripe.js in production; null in the sandbox.',
    }),
  },
  { description: 'A SetupIntent for a Bacs Direct Debit mandate.' },
);

export const MandateSchema = Type.Object({
  mandate_id: Type.String({ description: 'Milepost’s id of the mandate.' }),
  provider_mandate_id: nullableString,
  mandate_reference: Type.Union([Type.String(), Type.Null()], {
    description: 'The reference the payer sees on their bank statement and notices.',
  }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('inactive')], {
    description: '`pending` until Bacs accepts the instruction; `inactive` once cancelled or refused.',
  }),
  default: Type.Boolean({ description: 'True when the policy pays by this mandate.' }),
  payment_method_id: nullableString,
  account_holder_name: nullableString,
  sort_code: nullableString,
  account_last4: nullableString,
  created_at: Type.String({ format: 'date-time' }),
  activated_at: nullableDateTime,
  cancelled_at: nullableDateTime,
  cancel_reason: nullableString,
});

export const CollectionSchema = Type.Object({
  payment_reference: Type.String({ description: 'As GET /payments shows it.' }),
  policy_version_reference: nullableString,
  amount: Type.Number({ description: 'Pounds.' }),
  currency: Type.String({ examples: ['GBP'] }),
  status: Type.String({
    description:
      '`scheduled` (announced), `processing` (submitted to Bacs), `succeeded` (paid), `failed` (returned unpaid), or `pending`/`succeeded` once taken by card instead.',
  }),
  collect_on: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
    description: 'The London day of the collection.',
  }),
  notice_sent_at: nullableDateTime,
  provider_payment_reference: nullableString,
  settled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the bank paid it.',
  }),
  failure_code: Type.Union([Type.String(), Type.Null()], {
    description:
      'Of a returned collection: the processor’s code (`insufficient_funds`, `account_closed`, …).',
  }),
  failure_message: nullableString,
  attempts: Type.Integer(),
  awaiting_new_method: Type.Boolean({
    description: 'Returned and not to be retried: waits for a new mandate or card.',
  }),
});

export const PolicyDirectDebitSchema = Type.Object({
  policy_reference: Type.String(),
  notice_working_days: Type.Integer({ description: 'Advance notice before each collection (working days).' }),
  mandates: Type.Array(MandateSchema),
  collections: Type.Array(CollectionSchema),
});

export const CollectionsQuerySchema = Type.Object(
  {
    company_reference: Type.String({ minLength: 1, maxLength: 100 }),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
    // Years 1000–9999, as every date the API takes: PostgreSQL has no year 0 (it failed the query).
    from: Type.String({
      format: 'date',
      pattern: '^[1-9]\\d{3}-',
      description: 'First London day (included).',
    }),
    to: Type.String({
      format: 'date',
      pattern: '^[1-9]\\d{3}-',
      description: 'Last London day (included); at most 92 days on.',
    }),
  },
  { additionalProperties: false },
);

const DayTotalSchema = Type.Object({
  count: Type.Integer(),
  amount: Type.Number({ description: 'Pounds.' }),
});

export const CollectionsCalendarSchema = Type.Object({
  company_reference: Type.String(),
  environment: Type.String(),
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  days: Type.Array(
    Type.Object({
      day: Type.String({ format: 'date' }),
      scheduled: DayTotalSchema,
      processing: DayTotalSchema,
      paid: DayTotalSchema,
      failed: DayTotalSchema,
      collections: Type.Array(
        Type.Intersect([
          CollectionSchema,
          Type.Object({ policy_reference: Type.String(), mandate_reference: nullableString }),
        ]),
      ),
    }),
  ),
});

export const CompanyReferenceParamsSchema = Type.Object(
  { company_reference: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const NoticePeriodBodySchema = Type.Object(
  {
    notice_working_days: Type.Integer({
      minimum: 3,
      maximum: 30,
      description:
        'Working days (England and Wales) between a collection’s advance notice and the collection: the Bacs default is 10, and never fewer than 3.',
    }),
  },
  { additionalProperties: false },
);

export const NoticePeriodSchema = Type.Object({
  company_reference: Type.String(),
  notice_working_days: Type.Integer(),
});

export type PolicyDirectDebit = Static<typeof PolicyDirectDebitSchema>;
