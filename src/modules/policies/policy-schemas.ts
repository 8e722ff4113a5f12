import { ProductSummarySchema } from '../products/index.ts';
import { Type, type Static } from 'typebox';
import {
  ADDITIONAL_DRIVERS_MAX,
  AdditionalDriverSchema,
  CustomSchema,
  nullable,
  PaymentBlockSchema,
  POLICY_INPUT_EXAMPLE,
  POLICY_STATUSES,
  PolicyBlockSchema,
  policyBlockProperties,
  policyObjectProperties,
  PolicyVersionSchema,
  PricingSchema,
  ProposerSchema,
  requiredText,
  unixSeconds,
  uuid,
  VehicleSchema,
} from './rules/policy-object-schemas.ts';

/*
 * The policy's requests and responses beyond the policy object: the renewal body, and the policy as
 * returned with its renewal, product and payment records. The policy object itself, as sent and as
 * stored, and a version as listed are declared with the rules (rules/policy-object-schemas.ts) and
 * re-exported here.
 */
export * from './rules/policy-object-schemas.ts';

/**
 * The body of `POST /policys/:policy_reference/renewals`: the policy object of `POST /policys` for the
 * new term, every block optional but `pricing`.
 */
export const RenewalInputSchema = Type.Object(
  {
    policy: Type.Optional(
      Type.Partial(PolicyBlockSchema, {
        description:
          'Fields of the policy block for the new term; those sent replace the current ones. `start_date` and `end_date` set the term (default: 1 s after the current end, to the same anniversary); `policy_year` defaults to the current one + 1; `policy_reference`, when sent, must name this policy.',
      }),
    ),
    proposer: Type.Optional(ProposerSchema),
    vehicle: Type.Optional(VehicleSchema),
    additional_drivers: Type.Optional(
      Type.Array(AdditionalDriverSchema, { maxItems: ADDITIONAL_DRIVERS_MAX }),
    ),
    pricing: PricingSchema,
    custom: Type.Optional(CustomSchema),
    payment: Type.Optional(PaymentBlockSchema),
    start_date: Type.Optional(unixSeconds('Start of the new term (the older form of `policy.start_date`).')),
    end_date: Type.Optional(unixSeconds('End of the new term (the older form of `policy.end_date`).')),
  },
  {
    additionalProperties: false,
    description:
      'The new term: the policy object of POST /policys, every block optional but `pricing`. Blocks sent (`proposer`, `vehicle`, `additional_drivers`, `custom`) replace the current ones; blocks not sent carry over; `policy` fields sent replace the current ones. The result is validated as a new policy is, every failing field listed. `payment`: the renewal premium paid by card as at binding (a confirmed payment intent for `pricing.upfront_premium`, or `payment_amount`), checked with the processor and recorded against the `rn` version; a paid renewal is written at once, even for a policy with `auto_renew`.',
    examples: [
      {
        policy: { cover: 'comprehensive' },
        vehicle: { reg: 'LB24 XYZ', make: 'Kia', model: 'Niro', colour: 'Grey' },
        pricing: POLICY_INPUT_EXAMPLE.pricing,
      },
    ],
  },
);
export type RenewalInput = Static<typeof RenewalInputSchema>;

// ── responses ────────────────────────────────────────────────────────────────────────────────────

export const PaymentRecordSchema = Type.Object(
  {
    payment_reference: Type.String({ description: 'Milepost’s id of this payment record.' }),
    type: Type.Union([Type.Literal('charge'), Type.Literal('refund')]),
    purpose: Type.Union(
      [
        Type.Literal('new_business'),
        Type.Literal('renewal'),
        Type.Literal('adjustment'),
        Type.Literal('cancellation'),
        Type.Literal('statement'),
        Type.Literal('intent'),
      ],
      { description: 'What the payment is for.' },
    ),
    status: Type.Union(
      [
        Type.Literal('pending'),
        Type.Literal('succeeded'),
        Type.Literal('failed'),
        Type.Literal('refunded'),
        Type.Literal('requires_action'),
        Type.Literal('canceled'),
        Type.Literal('scheduled'),
        Type.Literal('processing'),
      ],
      {
        description:
          '`pending` until the processor answers; `refunded` once a charge is refunded in full. A refund is `failed` when the card could not take the money back, even after it first `succeeded` (`decline_code` is the processor’s reason, e.g. `expired_or_canceled_card`): its amount is then no longer in the charge’s `refunded_amount`. A Direct Debit collection is `scheduled` (announced, waiting for its day), then `processing` (submitted to Bacs) until the bank pays it (`succeeded`) or returns it (`failed`).',
      },
    ),
    method_type: Type.Optional(
      Type.Union([Type.Literal('card'), Type.Literal('bacs_debit')], {
        description: 'How it is collected: a card, or Bacs Direct Debit.',
      }),
    ),
    collect_on: Type.Optional(
      Type.Union([Type.String({ format: 'date' }), Type.Null()], {
        description: 'A Direct Debit collection’s day (London); null for a card payment.',
      }),
    ),
    amount: Type.Number({ description: 'In major units (pounds).' }),
    refunded_amount: Type.Number({ description: 'Of a charge: how much has been refunded (pounds).' }),
    currency: Type.String({ examples: ['GBP'] }),
    policy_version_reference: Type.Union([Type.String(), Type.Null()]),
    payment_provider: Type.String({ examples: ['stripe'] }),
    provider_payment_reference: Type.Union([Type.String(), Type.Null()], {
      description: 'The processor’s payment intent (charges) or refund id.',
    }),
    payment_method_id: Type.Union([Type.String(), Type.Null()]),
    decline_code: Type.Union([Type.String(), Type.Null()]),
    error_message: Type.Union([Type.String(), Type.Null()]),
    attempts: Type.Integer(),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When dunning tries again; null when nothing is scheduled.',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { description: 'A card payment or refund recorded against the policy.' },
);
export type PaymentRecordView = Static<typeof PaymentRecordSchema>;

export const StoredPolicyBlockSchema = Type.Object(
  {
    ...policyBlockProperties,
    policy_reference: requiredText(100, 'The public policy reference.'),
    policy_ref: Type.Optional(
      Type.String({
        description: 'Legacy name of `policy_reference`, for older clients; the same value when present.',
      }),
    ),
  },
  { description: 'General policy details as stored, with `policy_reference` filled.' },
);
export type StoredPolicyBlock = Static<typeof StoredPolicyBlockSchema>;

export const RenewalViewSchema = Type.Object(
  {
    start_date: unixSeconds('Start of the next term.'),
    end_date: unixSeconds('End of the next term.'),
    policy_year: Type.Optional(Type.Integer({ description: 'The policy year of the next term.' })),
    policy_version_reference: nullable(
      uuid(
        'The `rn` version written for the term (its latest version); null for terms stored for automatic renewal, written at the end of the current term.',
      ),
    ),
    automatic: Type.Boolean({
      description: 'True for terms stored for automatic renewal (`auto_renew`), applied at `end_date`.',
    }),
    pricing: PricingSchema,
  },
  {
    description:
      'The next term, stored before it starts: a renewal written early (an `rn` version effective at its start) or terms kept for automatic renewal. The policy object shows the term in force until then. Absent when no next term is stored.',
  },
);

export type RenewalView = Static<typeof RenewalViewSchema>;

export const PolicyResponseSchema = Type.Object(
  {
    policy_reference: Type.String({
      description: 'The public policy reference.',
      examples: ['amber-falcon-river'],
    }),
    policy_version_reference: uuid('The latest version, not counting those of a stored renewal.'),
    user_reference: Type.String({ description: 'The policyholder’s account.' }),
    status: Type.Enum(POLICY_STATUSES, {
      description:
        'Derived from the versions and the time: `cancelled` after a `cn` version, `lapsed` after an `ls` version or once `end_date` has passed with no renewal to follow, otherwise `pending` before `start_date` and `active` from then on.',
    }),
    policy: StoredPolicyBlockSchema,
    ...policyObjectProperties,
    renewal: Type.Optional(RenewalViewSchema),
    product: Type.Union([ProductSummarySchema, Type.Null()], {
      description:
        'The registered product `policy.product_reference` names, as in force now; null when it names none.',
    }),
    versions: Type.Array(PolicyVersionSchema, {
      description: 'Every version, oldest first, including `st` versions.',
    }),
    payments: Type.Array(PaymentRecordSchema, {
      description: 'Card payments and refunds of the policy, oldest first (the original service’s name).',
    }),
  },
  {
    description:
      'The policy object of the term in force (its latest snapshot, normalised) plus `policy_reference`, `policy_version_reference`, `user_reference`, `status`, `renewal` (the next term when one is stored) and `versions`.',
  },
);
export type PolicyResponse = Static<typeof PolicyResponseSchema>;
