import { Type } from 'typebox';
import { processorId } from '../policies/index.ts';

const PAYMENT_TYPES = [
  'CREATE_PAYMENT_INTENT',
  'ADD_NEW_PAYMENT_METHOD',
  'GET_PAYMENT_METHOD',
  'RETRY_PAYMENT',
] as const;

export const PaymentRequestSchema = Type.Object(
  {
    type: Type.Union(
      PAYMENT_TYPES.map((t) => Type.Literal(t)),
      { description: 'What to do; see the operation description for the fields each type needs.' },
    ),
    product_reference: Type.String({ minLength: 1, maxLength: 100, description: 'The insurance product.' }),
    amount: Type.Optional(
      Type.Integer({
        minimum: 30,
        maximum: 10_000_000,
        description:
          'CREATE_PAYMENT_INTENT: in minor units (pence), as in Stripe. At least 30 (Stripe’s minimum for GBP).',
      }),
    ),
    email: Type.Optional(
      Type.String({
        format: 'email',
        maxLength: 254,
        description: 'CREATE_PAYMENT_INTENT: the payer’s email, kept on the processor’s customer.',
      }),
    ),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    policy_reference: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    payment_method_id: Type.Optional(
      processorId('ADD_NEW_PAYMENT_METHOD: a payment method created with the processor’s client SDK.'),
    ),
    refund: Type.Optional(
      Type.Boolean({
        description: 'GET_PAYMENT_METHOD: true for the card a refund would go to (the one that paid first).',
      }),
    ),
    policy_version_reference: Type.Optional(
      Type.String({ format: 'uuid', description: 'RETRY_PAYMENT: the version missing a payment.' }),
    ),
  },
  { additionalProperties: false },
);

const nullableString = Type.Union([Type.String(), Type.Null()]);
const nullableInteger = Type.Union([Type.Integer(), Type.Null()]);

export const PaymentResponseSchema = Type.Object(
  {
    type: Type.Optional(Type.String()),
    payment_provider_customer_ref: Type.Optional(Type.String()),
    payment_provider_transaction_ref: Type.Optional(Type.String()),
    payment_temporary_token: Type.Optional(
      Type.String({ description: 'The intent’s client secret, for the client SDK’s confirmation.' }),
    ),
    payment_method_id: Type.Optional(Type.String()),
    brand: Type.Optional(nullableString),
    last4: Type.Optional(nullableString),
    exp_month: Type.Optional(nullableInteger),
    exp_year: Type.Optional(nullableInteger),
    refund: Type.Optional(Type.Boolean()),
    method_type: Type.Optional(
      Type.Union([Type.Literal('card'), Type.Literal('bacs_debit')], {
        description: 'GET_PAYMENT_METHOD: a card, or a Bacs Direct Debit mandate.',
      }),
    ),
    mandate_reference: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'GET_PAYMENT_METHOD of a Direct Debit: the reference on the payer’s bank statement.',
      }),
    ),
    mandate_status: Type.Optional(
      Type.String({ description: 'GET_PAYMENT_METHOD of a Direct Debit: pending, active or inactive.' }),
    ),
    account_holder_name: Type.Optional(nullableString),
    sort_code: Type.Optional(nullableString),
    payment_amount: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], {
        description: 'RETRY_PAYMENT: the amount collected (pounds), null when it failed.',
      }),
    ),
    error_message: Type.Optional(Type.String()),
    payment_reference: Type.Optional(Type.String()),
    status: Type.Optional(Type.String()),
  },
  {
    description:
      'By type — CREATE_PAYMENT_INTENT: `type`, `payment_provider_customer_ref`, `payment_provider_transaction_ref`, `payment_temporary_token`. ADD_NEW_PAYMENT_METHOD: `type`, `payment_method_id`. GET_PAYMENT_METHOD: `payment_method_id`, `method_type`, and for a card `brand`, `last4`, `exp_month`, `exp_year`, for a Direct Debit `mandate_reference`, `mandate_status`, `account_holder_name`, `sort_code`, `last4` (of the account number). RETRY_PAYMENT: `payment_amount` (null on failure), `error_message`, `payment_reference`, `status`.',
  },
);
