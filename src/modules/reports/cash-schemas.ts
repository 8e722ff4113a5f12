import { Type, type Static } from 'typebox';

const date = (description: string) =>
  Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description, examples: ['2025-07-01'] });

export const CashReportQuerySchema = Type.Object(
  {
    company_reference: Type.String({ minLength: 1, maxLength: 100 }),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
    from: date('The first Europe/London calendar day, included.'),
    to: date('The last Europe/London calendar day, included. From `from` to `to` is at most 366 days.'),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv')], {
        default: 'json',
        description: '`json` (one document) or `csv` (one table: see `part`).',
      }),
    ),
    part: Type.Optional(
      Type.Union([Type.Literal('payments'), Type.Literal('summary')], {
        description:
          'CSV holds one table: `payments` (the default for CSV) or `summary` (a row per day, then a `total` row). JSON holds both unless one is asked for.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CashReportQuery = Static<typeof CashReportQuerySchema>;

const nullableString = Type.Union([Type.String(), Type.Null()]);
const nullableDateTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
const pounds = (description: string) => Type.Number({ description: `${description} (pounds).` });

export const CashPaymentSchema = Type.Object({
  day: Type.String({
    format: 'date',
    description:
      'The Europe/London day the payment counts on: of `created_at`, or for a Direct Debit collection that settled, of `settled_at` (its cash arrived then, not when it was asked for).',
  }),
  payment_reference: Type.String({ description: 'As GET /payments shows it.' }),
  kind: Type.Union([Type.Literal('charge'), Type.Literal('refund')], {
    description: 'GET /payments calls this `type`.',
  }),
  purpose: Type.String({ description: 'new_business, renewal, adjustment, cancellation or statement.' }),
  status: Type.String({ description: 'As it stands when the report is made (`generated_at`).' }),
  amount: pounds('What was asked for, or paid back for a refund'),
  refunded_amount: pounds('Of a charge: how much of it has been refunded'),
  currency: Type.String({ examples: ['GBP'] }),
  provider: Type.String({ examples: ['stripe'] }),
  provider_payment_reference: Type.Union([Type.String(), Type.Null()], {
    description: 'The processor’s payment intent (charges) or refund id.',
  }),
  refund_of: Type.Union([Type.String(), Type.Null()], {
    description: 'Of a refund: the payment_reference of the charge it pays back.',
  }),
  policy_reference: nullableString,
  policy_version_reference: Type.Union([Type.String(), Type.Null()], {
    description: 'The version the payment settles.',
  }),
  version_type: Type.Union([Type.String(), Type.Null()], {
    description: 'That version’s type: nb, mta, cn, rn or st (a statement).',
  }),
  statement_start_date: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'For a statement (`st`): its period’s start, as the statement shows it.',
  }),
  statement_end_date: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'For a statement (`st`): its period’s end (inclusive), as the statement shows it.',
  }),
  decline_code: nullableString,
  attempts: Type.Integer(),
  in_dunning: Type.Boolean({ description: 'A failed charge that dunning will try again.' }),
  next_attempt_at: nullableDateTime,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  method_type: Type.String({ description: '`card` or `bacs_debit` (Direct Debit).' }),
  settled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'A Direct Debit collection: when the bank paid it; null until then, and for cards.',
  }),
});
export type CashPayment = Static<typeof CashPaymentSchema>;

const totalsFields = {
  charges: Type.Integer({ description: 'Charges asked for.' }),
  refunds: Type.Integer({ description: 'Refunds recorded.' }),
  billed: pounds('Charges asked for: charged + pending + outstanding'),
  charged: pounds('Charges the processor collected (succeeded, including those since refunded)'),
  refunded: pounds('Refunds paid back'),
  collected: pounds('charged − refunded: the net cash (negative on a day of refunds only)'),
  pending: pounds('Charges whose outcome is not known yet'),
  outstanding: pounds('Failed charges not yet collected'),
  in_dunning: pounds('Of outstanding: what dunning will try again'),
  refunds_outstanding: pounds('Refunds owed and not yet paid back (in progress or failed)'),
};

export const CashTotalsSchema = Type.Object(totalsFields);
export const CashDaySchema = Type.Object({
  day: Type.String({ format: 'date', description: 'A Europe/London day: payments created on it.' }),
  ...totalsFields,
});
export type CashTotalsView = Static<typeof CashTotalsSchema>;
export type CashDayView = Static<typeof CashDaySchema>;

export const CashReportSchema = Type.Object({
  company_reference: Type.String(),
  environment: Type.String(),
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  generated_at: Type.String({
    format: 'date-time',
    description: 'Statuses and amounts are as they stood then.',
  }),
  payments: Type.Optional(Type.Array(CashPaymentSchema, { description: 'In created order.' })),
  days: Type.Optional(Type.Array(CashDaySchema, { description: 'Every day of the range, quiet ones too.' })),
  totals: Type.Optional(CashTotalsSchema),
});

/** The CSV columns of `part=payments`, in order: the JSON payment fields. */
export const CASH_PAYMENT_COLUMNS = Object.keys(CashPaymentSchema.properties) as Array<keyof CashPayment>;
/** The CSV columns of `part=summary`: the day (`total` on the last row), then the totals. */
export const CASH_DAY_COLUMNS = Object.keys(CashDaySchema.properties) as Array<keyof CashDayView>;
