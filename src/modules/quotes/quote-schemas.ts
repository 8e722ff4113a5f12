import { Type, type Static } from 'typebox';
import { ClientHeadersSchema } from '../companies/index.ts';
import { PolicyBlockSchema, PricingSchema, policyObjectProperties } from '../policies/index.ts';
import { EXAMPLE_QUOTE_INPUT } from '../rating/rules/index.ts';

/*
 * Quotes' requests and responses (issue 36): the quote is the policy object without `pricing` (or
 * `payment`), answered with the interface's `pricing` block, the breakdown and the decision.
 */

const { pricing: _pricing, payment: _payment, ...quoteObjectProperties } = policyObjectProperties;

const PlanKindSchema = Type.Union([Type.Literal('single'), Type.Literal('monthly')]);

export const QuoteInputSchema = Type.Object(
  {
    policy: PolicyBlockSchema,
    ...quoteObjectProperties,
    installment_plan: Type.Optional(
      Type.Union([Type.Literal('single'), Type.Literal('monthly')], {
        description: 'The installment plan to price: one the rate book offers. Default: its first.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: [
      'The policy object of POST /policys without `pricing` and `payment`, validated as a policy is (every failing field named).',
      '`policy.product_reference` names the product whose rate book prices it: the approved version in force on `policy.start_date`.',
      '`policy.policy_reference` names a policy to rate an adjustment of: the quote then binds only in that policy’s adjustment.',
    ].join(' '),
    examples: [EXAMPLE_QUOTE_INPUT],
  },
);

const decimal = (description: string) => Type.String({ description, examples: ['1.25'] });

const FactorLineSchema = Type.Object({
  name: Type.String(),
  source: Type.String({ description: 'The quote field or derived value looked up.' }),
  applies_to: Type.Union([Type.Literal('fixed'), Type.Literal('per_unit'), Type.Literal('both')]),
  value: Type.Union([Type.Number(), Type.String(), Type.Null()]),
  driver: Type.Union([Type.String(), Type.Null()], {
    description: 'For a driver source, whose value rated.',
  }),
  matched: Type.String({
    description: 'The band or key matched: `[17, 21)`, `key EC1A`, `area SW`, `default`.',
  }),
  factor: decimal('The factor applied, exactly.'),
  customer_visible: Type.Boolean(),
});

export const BreakdownSchema = Type.Object(
  {
    rated_on: Type.String({ format: 'date', description: 'The date ages and windows are counted to.' }),
    usage_unit: Type.Union([Type.Literal('mile'), Type.Literal('km')]),
    factors: Type.Array(FactorLineSchema, { description: 'Each factor, in the rate book’s order.' }),
    fixed: Type.Object({
      base_pence: Type.Integer(),
      factor: decimal('The fixed factors multiplied, exactly.'),
      before_limits_pence: decimal('Base × factor, exactly.'),
      min_pence: Type.Integer(),
      max_pence: Type.Integer(),
      limit_applied: Type.Union([Type.Literal('minimum'), Type.Literal('maximum'), Type.Null()]),
      after_limits_pence: decimal('Held within the minimum and maximum.'),
      term_days: Type.Integer(),
      year_days: Type.Integer(),
      ipt_rate: decimal('IPT, percent.'),
      exact_pence: decimal('The term’s share with IPT, exactly.'),
      rounded_pence: Type.Integer({ description: 'Rounded once, half to even.' }),
    }),
    per_unit: Type.Object({
      base_rate: decimal('Pounds per unit.'),
      factor: decimal('The per-unit factors multiplied.'),
      exact: decimal('Base × factor with IPT, pounds, exactly.'),
      rounded: decimal('To four decimal places of a pound, half to even.'),
    }),
    installments: Type.Object({
      plan: PlanKindSchema,
      loading_rate: decimal('The plan’s loading: 0.05 = 5 %.'),
      exact_total_pence: decimal('The fixed premium with the loading, exactly.'),
      upfront_pence: Type.Integer(),
      installment_pence: Type.Integer(),
      installments: Type.Integer(),
      apr_percent: decimal(
        'The plan’s APR, percent, one decimal; a deposit fee counts as a charge for credit.',
      ),
    }),
    usage_estimate: Type.Object({
      annual_distance: Type.Number(),
      term_distance: Type.Number(),
      rate: decimal('Pounds per unit.'),
      exact_pence: decimal('Distance × rate, exactly.'),
      rounded_pence: Type.Integer(),
    }),
    rounding: Type.String(),
  },
  {
    $id: 'QuoteBreakdown',
    description:
      'How the price was made: each factor’s band and value in order, the limits applied and the one rounding of each amount. Staff and the company’s integration see every factor; a quote asked for with the client id alone (the web app) shows the factors the rate book marks `customer_visible`.',
  },
);

const ReasonSchema = Type.Object({
  rule: Type.Integer({ description: 'The underwriting rule’s place in the rate book version.' }),
  outcome: Type.Union([Type.Literal('refer'), Type.Literal('decline')]),
  reason: Type.String(),
});

const ReferralSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('declined')]),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'The underwriter’s reason.' }),
    decided_by: Type.Union([Type.String(), Type.Null()], { description: '`staff:<email>`.' }),
    decided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { description: 'A referred quote’s review; null for a quote that was not referred.' },
);

export const QuoteSchema = Type.Object(
  {
    quote_reference: Type.String({ format: 'uuid' }),
    quote_version_reference: Type.String({ format: 'uuid' }),
    quote_model_reference: Type.String({
      format: 'uuid',
      description: 'The rate book version that rated it.',
    }),
    rate_book_reference: Type.String(),
    rate_book_version: Type.Integer(),
    policy_reference: Type.Union([Type.String(), Type.Null()], {
      description: 'The policy an adjustment quote rates; null for new business.',
    }),
    status: Type.Union(
      [
        Type.Literal('bindable'),
        Type.Literal('referred'),
        Type.Literal('declined'),
        Type.Literal('expired'),
        Type.Literal('bound'),
      ],
      {
        description:
          '`bindable`: accepted (or referred and approved) and not expired; `referred`: waiting for an underwriter; `declined`: by a rule or an underwriter.',
      },
    ),
    pricing: PricingSchema,
    breakdown: Type.Ref('QuoteBreakdown'),
    decision: Type.Object({
      outcome: Type.Union([Type.Literal('accept'), Type.Literal('refer'), Type.Literal('decline')]),
      reasons: Type.Array(ReasonSchema, {
        description: 'Every matching rule: declines first, then referrals.',
      }),
    }),
    referral: Type.Union([ReferralSchema, Type.Null()]),
    expires_at: Type.String({ format: 'date-time', description: 'Bindable until this instant (exclusive).' }),
    created_at: Type.String({ format: 'date-time' }),
    bound_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    pseudonymised: Type.Boolean({
      description:
        'True once the quote, never bound, has passed the company’s retention: `input` no longer names anyone.',
    }),
    input: Type.Optional(
      Type.Unknown({
        description:
          'The quote as asked (staff and the company’s integration only); its pseudonym once pseudonymised.',
      }),
    ),
    purchase_secret: Type.Optional(
      Type.String({
        description:
          'Only in the answer to `POST /quotes` with the client id alone (the web app), and only then: the secret (256 random bits, base64url) that reading the quote back and buying it with the client id alone need, sent as the `purchase_secret` header. Keep it in memory or session storage, never in a URL.',
      }),
    ),
  },
  { $id: 'Quote' },
);

/** The client headers, with the quote's purchase secret the web app sends to read or buy its quote. */
export const QuoteSecretHeadersSchema = Type.Object({
  ...ClientHeadersSchema.properties,
  purchase_secret: Type.Optional(
    Type.String({
      maxLength: 100,
      description:
        'The `purchase_secret` `POST /quotes` answered the web app with: needed with the client id alone; a missing or wrong one answers 404.',
    }),
  ),
});
export type QuoteView = Static<typeof QuoteSchema>;

export const StaffQuoteSchema = Type.Object(
  {
    ...QuoteSchema.properties,
    bound_policy_reference: Type.Union([Type.String(), Type.Null()], {
      description: 'The policy the quote is bound to; null while it is not.',
    }),
  },
  {
    $id: 'StaffQuote',
    description: 'A quote as staff read it: the whole quote, with the policy it is bound to.',
  },
);
export type StaffQuoteView = Static<typeof StaffQuoteSchema>;

export const StaffQuoteQuerySchema = Type.Object(
  {
    company_reference: Type.String({ minLength: 1, maxLength: 100 }),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
  },
  { additionalProperties: false },
);

export const QuoteParamsSchema = Type.Object(
  { quote_reference: Type.String({ format: 'uuid' }) },
  { additionalProperties: false },
);

const environment = Type.Union([Type.Literal('sandbox'), Type.Literal('production')]);

export const ReferralQuerySchema = Type.Object(
  {
    company_reference: Type.String({ minLength: 1, maxLength: 100 }),
    environment,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  },
  { additionalProperties: false },
);

export const ReferralDecisionSchema = Type.Object(
  {
    company_reference: Type.String({ minLength: 1, maxLength: 100 }),
    environment,
    decision: Type.Union([Type.Literal('approve'), Type.Literal('decline')]),
    reason: Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S' }),
  },
  { additionalProperties: false },
);

export const QuoteSettingsSchema = Type.Object(
  {
    validity_days: Type.Integer({
      minimum: 1,
      maximum: 365,
      description: 'Days a quote may be bound after it is made (default 30).',
    }),
    retention_days: Type.Integer({
      minimum: 1,
      maximum: 3650,
      description:
        'Days after which a quote never bound is pseudonymised, once it has also expired (default 90).',
    }),
    quote_page_product: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], {
        description:
          'The product the public quote page (`/app/quote`) quotes: a web app quote that names no `policy.product_reference` is for it. Null: none. Left out of a PUT, it stays as it is.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CompanyParamsSchema = Type.Object(
  { company_reference: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const PurchaseBodySchema = Type.Object(
  {
    payment_method_id: Type.String({
      minLength: 3,
      maxLength: 255,
      pattern: '^pm_[A-Za-z0-9_]+$',
      description:
        'The card as the browser made it at the processor (Stripe.js, or the sandbox’s `POST /sandbox/stripe/v1/payment_methods`): `pm_…`.',
    }),
    installment_plan: Type.Optional(
      Type.Union([Type.Literal('single'), Type.Literal('monthly')], {
        description: 'The plan the buyer chose; it must be the one the quote was priced for.',
      }),
    ),
  },
  { additionalProperties: false },
);

const SignInSchema = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('TEMPORARY_PASSWORD_SENT'),
        username: Type.String({
          description:
            'A new account: its temporary password is emailed with the welcome, and signing in with it leads to choosing a password.',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('SIGN_IN'),
        username: Type.String({ description: 'The account existed already: sign in with its own password.' }),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'How the buyer signs in: a new account with the temporary password emailed to it, or one they had with its own password. Nothing that signs in is in this answer: only the mailbox proves the email is the buyer’s.',
  },
);

export const PurchaseBoundSchema = Type.Object(
  {
    status: Type.Literal('bound'),
    quote_reference: Type.String(),
    policy_reference: Type.String(),
    user_reference: Type.String(),
    amount_paid: Type.Number({
      description:
        'The first payment, in pounds: the quote’s `upfront_premium`; on the monthly plan, plus its `deposit_fee` and first installment.',
    }),
    sign_in: SignInSchema,
  },
  { additionalProperties: false },
);

export const PurchaseActionSchema = Type.Object(
  {
    status: Type.Literal('requires_action'),
    quote_reference: Type.String(),
    payment_intent: Type.String(),
    client_secret: Type.String({
      description:
        'Complete 3-D Secure with it (Stripe.js `handleNextAction`; in the sandbox, confirm the intent again with the same card), then send the purchase again.',
    }),
    payment_method: Type.Union([Type.String(), Type.Null()], {
      description: 'The card waiting for 3-D Secure, as the processor names it.',
    }),
    amount: Type.Number({ description: 'The first payment, in pounds.' }),
  },
  { additionalProperties: false },
);
