import { Type, type Static, type TSchema } from 'typebox';

/*
 * The policy object of the interface (request body of POST /policys), which every version stores
 * normalised, and a version as the interface lists it: the shapes the policy rules work on, with the
 * limits and value sets they check. Declarations only; the requests and responses built from them
 * are in ../policy-schemas.ts, which re-exports this file.
 *
 * Field names are the interface's and must not change: real clients send and read them.
 * Schemas are inlined, not registered by `$id`: TypeBox infers static types through inline schemas
 * (a `Type.Ref` infers `unknown`), and no route depends on `addSchema` having run first.
 *
 * What JSON Schema cannot say is checked by `validatePolicyInput` (policy-validation.ts) after Ajv:
 * calendar dates that exist, date order, ages, ISO country codes, UK postcodes, decimal places of
 * money and rates, `custom` key length, `phone_number` against `mobile_number`.
 */

/** Latest UNIX timestamp accepted anywhere in a policy: 2100-01-01T00:00:00Z. */
export const UNIX_SECONDS_MAX = 4_102_444_800;
/** Largest money amount accepted, in major units (pounds). */
export const MONEY_MAX = 100_000_000;
/** Largest `pricing.usage_rate` accepted: pounds per unit of distance. */
export const USAGE_RATE_MAX = 1_000;
/** Largest `pricing.estimated_distance` accepted: units of distance in the term. */
export const ESTIMATED_DISTANCE_MAX = 10_000_000;
export const MONEY_DECIMALS = 2;
export const RATE_DECIMALS = 6;
export const CUSTOM_MAX_ITEMS = 25;
export const CUSTOM_KEY_MAX_LENGTH = 64;
export const CUSTOM_STRING_MAX_LENGTH = 500;
export const ADDITIONAL_DRIVERS_MAX = 10;
/** E.164: a plus, a non-zero country code digit, 7 to 15 digits in all. */
export const E164_PATTERN = '^\\+[1-9]\\d{6,14}$';
/** Shape only; `validatePolicyInput` checks the day exists. */
/** Years 1000 to 9999: what every store and the calendar code hold (PostgreSQL has no year 0). */
export const DATE_PATTERN = '^[1-9]\\d{3}-\\d{2}-\\d{2}$';
/** Shape only; `validatePolicyInput` checks the code is assigned in ISO 3166-1. Either case; stored upper case. */
export const COUNTRY_PATTERN = '^[A-Za-z]{2}$';
export const PAYMENT_PROVIDER_PATTERN = '^[a-z][a-z0-9_-]*$';

// ── Building blocks ─────────────────────────────────────────────────────────────────────────────

export const unixSeconds = (description: string) =>
  Type.Integer({
    minimum: 0,
    maximum: UNIX_SECONDS_MAX,
    description: `${description} UNIX timestamp (integer seconds, UTC).`,
  });

const calendarDate = (description: string) =>
  Type.String({
    pattern: DATE_PATTERN,
    description: `${description} Date \`YYYY-MM-DD\`; the day must exist.`,
    examples: ['1988-03-14'],
  });

const money = (description: string) =>
  Type.Number({
    minimum: 0,
    maximum: MONEY_MAX,
    description: `${description} Money in major units (pounds), at most 2 decimal places.`,
  });

const rate = (description: string, maximum = 1_000_000) =>
  Type.Number({ minimum: 0, maximum, description: `${description} At most 6 decimal places.` });

/** A coded value whose allowed values the interface leaves open: kept as bounded free text. */
const code = (description: string) =>
  Type.String({ minLength: 1, maxLength: 64, description: `${description} Coded value, free text.` });

const text = (maxLength: number, description: string) => Type.String({ maxLength, description });

export const requiredText = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, description });

/**
 * An id the payment processor made (`pi_…`, `pm_…`, `cus_…`): letters, digits and underscores, as
 * Stripe's are (about 30 characters). Anything else names nothing there, and a control character
 * would not even make a request (ids go into idempotency-key headers and URL paths).
 */
export const processorId = (description: string) =>
  Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_]+$', description });

const count = (maximum: number, description: string) => Type.Integer({ minimum: 0, maximum, description });

const email = (description: string) =>
  Type.String({ format: 'email', maxLength: 254, description, examples: ['amelia.clarke@example.com'] });

const phone = (description: string) =>
  Type.String({
    pattern: E164_PATTERN,
    description: `${description} International E.164 format: \`+\` and digits, no spaces.`,
    examples: ['+447700900123'],
  });

export const uuid = (description: string) => Type.String({ format: 'uuid', description });

const isoDateTime = (description: string) =>
  Type.String({ format: 'date-time', description: `${description} ISO 8601 date-time, UTC.` });

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

// ── policy block ────────────────────────────────────────────────────────────────────────────────

export const AddressSchema = Type.Object(
  {
    line_1: requiredText(200, 'First address line.'),
    line_2: Type.Optional(text(200, 'Second address line.')),
    line_3: Type.Optional(text(200, 'Third address line.')),
    city: Type.Optional(text(100, 'Town or city.')),
    county: Type.Optional(text(100, 'County.')),
    country: Type.Optional(
      Type.String({
        pattern: COUNTRY_PATTERN,
        default: 'GB',
        description: 'ISO 3166-1 alpha-2 country code (`GB`, not `UK`). Defaults to `GB`. Stored upper case.',
        examples: ['GB'],
      }),
    ),
    postcode: requiredText(
      16,
      'Postcode. For `GB`, `GG`, `JE` and `IM` addresses it must be a UK postcode (either case, space optional); it is stored as `SW1A 1AA`.',
    ),
  },
  { additionalProperties: false, description: 'Policy (risk) address. Required: `line_1`, `postcode`.' },
);
export type Address = Static<typeof AddressSchema>;

export const policyBlockProperties = {
  compulsory_excess: Type.Optional(money('Compulsory excess.')),
  voluntary_excess: Type.Optional(money('Voluntary excess.')),
  address: AddressSchema,
  usage: code('Vehicle use, e.g. social, domestic and pleasure with commuting.'),
  cover: code('Level of cover, e.g. comprehensive.'),
  auto_renew: Type.Optional(
    Type.Boolean({
      description: 'Renew automatically at `end_date` when renewal terms exist. Absent means false.',
    }),
  ),
  start_date: unixSeconds('Start of cover (this term).'),
  end_date: unixSeconds('End of cover (this term); after `start_date`.'),
  inception_date: Type.Optional(
    unixSeconds('Start of the first term of the policy; not after `start_date`.'),
  ),
  billing_day_date: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 31,
      description:
        'Day of the month on which the automatic statement is triggered. Days 29–31 fall on the last day of shorter months. When absent, the day of the month of `start_date` (Europe/London) is used.',
    }),
  ),
  underwriter_reference: Type.Optional(text(100, 'Underwriter.')),
  underwriter_policy_reference: Type.Optional(text(100, 'The underwriter’s own reference for this policy.')),
  product_reference: Type.Optional(text(100, 'Insurance product.')),
  policy_year: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      description: 'Policy year: 1 for new business, increased by each renewal.',
    }),
  ),
  subscription_frequency: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 366,
      description: 'Subscription installments per year (12 = monthly, collected on `billing_day_date`).',
    }),
  ),
  created_at: Type.Optional(
    unixSeconds(
      'When the policy was created, as the client records it: stored and returned as sent. When absent, the service fills in the creation time (and an adjustment keeps the value before it). The service’s own times are in the versions.',
    ),
  ),
  policy_reference: Type.Optional(
    requiredText(
      100,
      'The public policy reference. Absent on creation (the service assigns one); naming an existing policy makes the request a mid-term adjustment (`mta`).',
    ),
  ),
};

export const PolicyBlockSchema = Type.Object(policyBlockProperties, {
  additionalProperties: false,
  description: 'General policy details. Required: `address`, `usage`, `cover`, `start_date`, `end_date`.',
});
export type PolicyBlock = Static<typeof PolicyBlockSchema>;

// ── proposer and additional drivers ─────────────────────────────────────────────────────────────

export const ConvictionSchema = Type.Object(
  {
    code: code('Conviction (endorsement) code, e.g. `SP30`.'),
    date: calendarDate('Date of the offence or conviction.'),
    points: Type.Optional(count(99, 'Penalty points.')),
    ban: Type.Optional(count(1200, 'Length of the driving ban in months; 0 for none.')),
  },
  { additionalProperties: false, description: 'A motoring conviction. Required: `code`, `date`.' },
);
export type Conviction = Static<typeof ConvictionSchema>;

export const ClaimSchema = Type.Object(
  {
    code: code('Claim type code.'),
    date: calendarDate('Date of the incident.'),
    at_fault: Type.Optional(Type.Boolean({ description: 'Whether the driver was at fault.' })),
    ncd_lost: Type.Optional(Type.Boolean({ description: 'Whether the no-claims discount was lost.' })),
  },
  { additionalProperties: false, description: 'A previous claim. Required: `code`, `date`.' },
);
export type Claim = Static<typeof ClaimSchema>;

/** Fields shared by the proposer and each additional driver, all optional. */
const personOptionalProperties = {
  title: Type.Optional(code('Title, e.g. `Mr`, `Ms`, `Dr`, `Mx`.')),
  phone_number: Type.Optional(phone('Telephone number.')),
  mobile_number: Type.Optional(
    phone(
      'Accepted alias of `phone_number` (some clients send this name). Folded into `phone_number` when stored; if both are sent they must be equal.',
    ),
  ),
  children: Type.Optional(count(30, 'Number of children.')),
  has_medical_conditions: Type.Optional(
    Type.Boolean({ description: 'Has medical conditions relevant to driving.' }),
  ),
  has_informed_dvla_medical_conditions: Type.Optional(
    Type.Boolean({ description: 'Has told the DVLA about those conditions.' }),
  ),
  ncd: Type.Optional(count(99, 'Years of no-claims discount.')),
  licence_type: Type.Optional(code('Driving licence type.')),
  employment: Type.Optional(code('Employment status.')),
  occupation: Type.Optional(code('Occupation.')),
  business: Type.Optional(code('Business or industry of employment.')),
  licence_issued_date: Type.Optional(
    calendarDate('When the licence was issued; after `dob` and not after the policy start.'),
  ),
  residency_date: Type.Optional(calendarDate('UK resident since; not before `dob`.')),
  has_criminal_conviction: Type.Optional(
    Type.Boolean({ description: 'Has an unspent non-motoring criminal conviction.' }),
  ),
  convictions: Type.Optional(
    Type.Array(ConvictionSchema, { maxItems: 50, description: 'Motoring convictions.' }),
  ),
  claims: Type.Optional(Type.Array(ClaimSchema, { maxItems: 50, description: 'Previous claims.' })),
  own_home: Type.Optional(Type.Boolean({ description: 'Owns their home.' })),
};

const first_names = requiredText(100, 'First and middle names.');
const last_names = requiredText(100, 'Surname.');
const dob = calendarDate(
  'Date of birth; the driver must be at least 16 on the policy start date (Europe/London).',
);

export const ProposerSchema = Type.Object(
  {
    first_names,
    last_names,
    email: email(
      'Email address. The policyholder’s login details are sent here, and the account is matched by it.',
    ),
    dob,
    ...personOptionalProperties,
  },
  {
    additionalProperties: false,
    description:
      'The main driver, who holds the policy. Required: `first_names`, `last_names`, `email`, `dob`. `mobile_number` is accepted as an alias of `phone_number`.',
  },
);
export type Proposer = Static<typeof ProposerSchema>;

export const AdditionalDriverSchema = Type.Object(
  {
    first_names,
    last_names,
    dob,
    email: Type.Optional(email('Email address.')),
    relationship: Type.Optional(code('Relationship to the proposer, e.g. spouse.')),
    ...personOptionalProperties,
  },
  {
    additionalProperties: false,
    description:
      'A named driver: the proposer’s fields plus `relationship`. Required: `first_names`, `last_names`, `dob`. `mobile_number` is accepted as an alias of `phone_number`.',
  },
);
export type AdditionalDriver = Static<typeof AdditionalDriverSchema>;

// ── vehicle ─────────────────────────────────────────────────────────────────────────────────────

export const VehicleSchema = Type.Object(
  {
    reg: requiredText(20, 'Registration mark.'),
    vin: Type.Optional(
      text(32, 'Vehicle identification number (17 characters from 1981; older chassis numbers vary).'),
    ),
    make: requiredText(100, 'Make.'),
    model: requiredText(200, 'Model.'),
    colour: Type.Optional(text(50, 'Colour.')),
    type: Type.Optional(code('Vehicle type.')),
    body_type: Type.Optional(code('Body type.')),
    rating: Type.Optional(count(1_000_000, 'Vehicle rating from the quoting engine.')),
    group_rating_50: Type.Optional(count(50, 'Insurance group, 1–50 scale.')),
    group_rating_20: Type.Optional(count(20, 'Insurance group, old 1–20 scale.')),
    abi_code: Type.Optional(text(20, 'ABI vehicle code.')),
    engine: Type.Optional(count(20_000, 'Engine size in cc.')),
    fuel: Type.Optional(code('Fuel.')),
    owner: Type.Optional(code('Legal owner.')),
    keeper: Type.Optional(code('Registered keeper.')),
    estimated_yearly_mileage: Type.Optional(
      count(1_000_000, 'Estimated distance a year, in the product’s unit (`pricing.usage_unit`).'),
    ),
    purchase_date: Type.Optional(calendarDate('Purchase date.')),
    manufacture_date: Type.Optional(calendarDate('Date of manufacture.')),
    current_value: Type.Optional(money('Current value.')),
    is_rhd: Type.Optional(Type.Boolean({ description: 'Right-hand drive.' })),
    is_parked_home: Type.Optional(Type.Boolean({ description: 'Kept overnight at the policy address.' })),
    is_import: Type.Optional(Type.Boolean({ description: 'Imported vehicle.' })),
    seats: Type.Optional(count(100, 'Seats.')),
    doors: Type.Optional(count(10, 'Doors.')),
    overnight_postcode: Type.Optional(
      requiredText(
        16,
        'Postcode where the vehicle is kept overnight. A UK postcode when the policy address is in GB, GG, JE or IM; stored as `SW1A 1AA`.',
      ),
    ),
    parked_location: Type.Optional(code('Where it is parked overnight, e.g. driveway.')),
    modifications: Type.Optional(
      Type.Array(requiredText(100, 'A modification.'), { maxItems: 50, description: 'Modifications.' }),
    ),
  },
  { additionalProperties: false, description: 'The vehicle on cover. Required: `reg`, `make`, `model`.' },
);
export type Vehicle = Static<typeof VehicleSchema>;

// ── pricing ─────────────────────────────────────────────────────────────────────────────────────

export const USAGE_UNITS = ['mile', 'km'] as const;
export type UsageUnit = (typeof USAGE_UNITS)[number];

export const PricingSchema = Type.Object(
  {
    quote_reference: Type.Optional(uuid('Quote in the quoting engine.')),
    quote_version_reference: Type.Optional(uuid('Version of that quote.')),
    quote_model_reference: Type.Optional(uuid('Rating model that produced it.')),
    upfront_rate: Type.Optional(rate('Rate behind the upfront premium, as set by the quoting engine.')),
    subscription_rate: Type.Optional(
      rate('Rate behind the subscription premium, as set by the quoting engine.'),
    ),
    usage_rate: rate('Money per unit of distance (`usage_unit`): 0.04 means £0.04 a mile.', USAGE_RATE_MAX),
    usage_unit: Type.Optional(
      Type.Enum(USAGE_UNITS, {
        default: 'mile',
        description:
          'Milepost extension, not in the original interface: the unit of distance `usage_rate` is priced in. Defaults to `mile`.',
      }),
    ),
    subscription_installments: Type.Optional(count(366, 'Number of subscription installments in the term.')),
    upfront_premium: money('Premium paid at the start of the term.'),
    subscription_premium: money('Premium collected per subscription installment.'),
    usage_premium: Type.Optional(money('Estimated usage premium for the term.')),
    base_premium: Type.Optional(money('Base premium.')),
    yearly_premium_estimate: Type.Optional(money('Estimated total premium for a year.')),
    total_excess: Type.Optional(money('Total excess.')),
    estimated_distance: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: ESTIMATED_DISTANCE_MAX,
        description: 'Estimated distance for the term, in `usage_unit`.',
      }),
    ),
    withhold_fee: Type.Optional(money('Withhold fee.')),
    deposit_fee: Type.Optional(money('Deposit fee.')),
    admin_fee: Type.Optional(
      money('Administration fee, charged on cancellation after the 14-day cooling-off period.'),
    ),
    mta_fee: Type.Optional(money('Fee added to the amount of a mid-term adjustment.')),
    cancel_fee: Type.Optional(
      money('Fee deducted from the refund on cancellation after the 14-day cooling-off period.'),
    ),
    ipt_rate: Type.Optional(rate('Insurance premium tax as a percentage: 12 means 12 %.', 100)),
    commission_rate: Type.Optional(rate('Commission as a percentage: 15 means 15 %.', 100)),
  },
  {
    additionalProperties: false,
    description:
      'Premium price, normally produced by a quoting engine. Required: `usage_rate`, `upfront_premium`, `subscription_premium`. Extension: `usage_unit` (`mile` or `km`, default `mile`).',
  },
);
export type Pricing = Static<typeof PricingSchema>;

// ── custom and payment ──────────────────────────────────────────────────────────────────────────

export type CustomValue = string | number | boolean | null;
export type Custom = Record<string, CustomValue>;

// NOTE: `additionalProperties`, not TypeBox's Record: a Record's `^.*$` pattern does not match keys
// holding a line break, whose values would then go unchecked.
export const CustomSchema = Type.Unsafe<Custom>({
  type: 'object',
  maxProperties: CUSTOM_MAX_ITEMS,
  additionalProperties: Type.Union([
    Type.String({ maxLength: CUSTOM_STRING_MAX_LENGTH }),
    Type.Number(),
    Type.Boolean(),
    Type.Null(),
  ]),
  description: `Free key/value store: at most ${CUSTOM_MAX_ITEMS} items, keys of 1–${CUSTOM_KEY_MAX_LENGTH} characters, values a string (at most ${CUSTOM_STRING_MAX_LENGTH} characters), number, boolean or null.`,
  examples: [{ broker: 'direct', campaign: 'spring-2025' }],
});

export const PaymentBlockSchema = Type.Object(
  {
    provider_payment_reference: Type.Optional(
      processorId('Id of the confirmed payment, from the client-side confirmation result.'),
    ),
    payment_method_id: Type.Optional(
      processorId('Payment method of the confirmed payment, from the same result.'),
    ),
    provider_customer_reference: Type.Optional(
      processorId('`payment_provider_customer_ref` from the CREATE_PAYMENT_INTENT response.'),
    ),
    payment_provider: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 50,
        pattern: PAYMENT_PROVIDER_PATTERN,
        description: 'Lower-case name of the card payment processor.',
        examples: ['stripe'],
      }),
    ),
    payment_amount: Type.Optional(
      Type.Number({
        minimum: -MONEY_MAX,
        maximum: MONEY_MAX,
        description:
          'Amount in major units, at most 2 decimal places; negative is a refund. When absent on an adjustment or cancellation it is calculated from `pricing` (`upfront_premium`, `mta_fee`, `cancel_fee`, `admin_fee`). At binding on a monthly plan, what it pays beyond `upfront_premium` and `deposit_fee` pays the first term’s first installments (whole ones), which statements then do not bill.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Ties a card payment to the policy. Every field is optional here; the payments service checks them against the processor. A new policy’s or renewal’s block names the payment confirmed for it: with any field sent, `provider_payment_reference` is required (422 naming it otherwise). An adjustment’s `payment_amount` stands alone.',
  },
);
export type PaymentBlock = Static<typeof PaymentBlockSchema>;

// ── the policy object ───────────────────────────────────────────────────────────────────────────

export const policyObjectProperties = {
  proposer: ProposerSchema,
  vehicle: VehicleSchema,
  additional_drivers: Type.Optional(
    Type.Array(AdditionalDriverSchema, {
      maxItems: ADDITIONAL_DRIVERS_MAX,
      description: 'Other named drivers.',
    }),
  ),
  pricing: PricingSchema,
  custom: Type.Optional(CustomSchema),
  payment: Type.Optional(PaymentBlockSchema),
};

// Typed as PolicyInput below, once that type exists (annotating it here would be circular).
const policyInputExample = deepFreeze({
  policy: {
    compulsory_excess: 250,
    voluntary_excess: 100,
    address: {
      line_1: 'Flat 3',
      line_2: '12 Station Road',
      line_3: 'Clerkenwell',
      city: 'London',
      county: 'Greater London',
      country: 'GB',
      postcode: 'EC1A 1BB',
    },
    usage: 'sdp_commuting',
    cover: 'comprehensive',
    auto_renew: true,
    start_date: 1_748_732_400, // 2025-06-01T00:00:00+01:00
    end_date: 1_780_268_399, // 2026-05-31T23:59:59+01:00
    inception_date: 1_748_732_400,
    billing_day_date: 1,
    underwriter_reference: 'acme-underwriting',
    underwriter_policy_reference: 'ACM/2025/000123',
    product_reference: 'pay-by-mile-car',
    policy_year: 1,
    subscription_frequency: 12,
  },
  proposer: {
    title: 'Ms',
    first_names: 'Amelia Rose',
    last_names: 'Clarke',
    email: 'amelia.clarke@example.com',
    phone_number: '+447700900123',
    children: 1,
    has_medical_conditions: false,
    has_informed_dvla_medical_conditions: false,
    ncd: 4,
    dob: '1988-03-14',
    licence_type: 'full_uk',
    employment: 'employed',
    occupation: 'software_engineer',
    business: 'computer_services',
    licence_issued_date: '2006-07-02',
    residency_date: '1988-03-14',
    has_criminal_conviction: false,
    convictions: [{ code: 'SP30', date: '2022-09-18', points: 3, ban: 0 }],
    claims: [{ code: 'windscreen', date: '2023-01-09', at_fault: false, ncd_lost: false }],
    own_home: true,
  },
  vehicle: {
    reg: 'AB12 CDE',
    vin: 'WVWZZZAUZHW123456',
    make: 'Volkswagen',
    model: 'Golf 1.5 TSI Life',
    colour: 'blue',
    type: 'car',
    body_type: 'hatchback',
    rating: 19,
    group_rating_50: 19,
    group_rating_20: 8,
    abi_code: '95176501',
    engine: 1498,
    fuel: 'petrol',
    owner: 'proposer',
    keeper: 'proposer',
    estimated_yearly_mileage: 6000,
    purchase_date: '2021-04-10',
    manufacture_date: '2017-09-01',
    current_value: 11_500,
    is_rhd: true,
    is_parked_home: true,
    is_import: false,
    seats: 5,
    doors: 5,
    overnight_postcode: 'EC1A 1BB',
    parked_location: 'driveway',
    modifications: [],
  },
  additional_drivers: [
    {
      title: 'Mr',
      first_names: 'Daniel',
      last_names: 'Clarke',
      email: 'daniel.clarke@example.com',
      phone_number: '+447700900456',
      dob: '1986-11-02',
      relationship: 'spouse',
      ncd: 0,
      licence_type: 'full_uk',
      employment: 'self_employed',
      occupation: 'electrician',
      business: 'construction',
      licence_issued_date: '2005-05-20',
      residency_date: '1986-11-02',
      has_medical_conditions: false,
      has_criminal_conviction: false,
      convictions: [],
      claims: [],
    },
  ],
  pricing: {
    quote_reference: '3f0c8a52-8d1e-4c57-9a57-0f6f2b8e9d41',
    quote_version_reference: '9b2d7e15-4a60-4f4b-8f3c-2c1d5e6a7b80',
    quote_model_reference: 'c41a6f0e-2b7d-4e38-a915-6d8f3b2c1e09',
    upfront_rate: 0.25,
    subscription_rate: 0.35,
    usage_rate: 0.045,
    usage_unit: 'mile' as const,
    subscription_installments: 12,
    upfront_premium: 95.5,
    subscription_premium: 29.99,
    usage_premium: 270,
    base_premium: 648,
    yearly_premium_estimate: 725.38,
    total_excess: 350,
    estimated_distance: 6000,
    withhold_fee: 0,
    deposit_fee: 0,
    admin_fee: 25,
    mta_fee: 20,
    cancel_fee: 50,
    ipt_rate: 12,
    commission_rate: 15,
  },
  custom: { broker: 'direct', campaign: 'spring-2025', telematics_source: 'mobile_app' },
  // NOTE: no `payment` block: one names a payment intent confirmed moments before, so a copied example
  // could never bind. The description says how to send one.
});

export const PolicyInputSchema = Type.Object(
  {
    policy: PolicyBlockSchema,
    ...policyObjectProperties,
    effective_date: Type.Optional(
      unixSeconds(
        'For a mid-term adjustment: when the change takes effect; within the term. Defaults to now.',
      ),
    ),
    backfill: Type.Optional(
      Type.Boolean({
        description:
          'For a new policy whose term has already ended (an insurer moving its book): create it as it stood, lapsed at its `end_date` and billed through it. Without it such a policy is refused (422 `POLICY_TERM_ENDED`). Not allowed on an adjustment.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: [
      'The policy object (body of POST /policys), bindable as sent.',
      'Required: `policy` (`start_date`, `end_date`, `usage`, `cover`, `address.line_1`, `address.postcode`), `proposer` (`first_names`, `last_names`, `email`, `dob`), `vehicle` (`reg`, `make`, `model`) and `pricing` (`usage_rate`, `upfront_premium`, `subscription_premium`); everything else may be left out by a quoting engine.',
      'Unknown fields are rejected by name, except `mobile_number`, an accepted alias of `phone_number`.',
      'Extension: `pricing.usage_unit` (`mile` | `km`, default `mile`), the unit `usage_rate` prices.',
      'On top of the schema: dates must exist; `start_date` < `end_date`; `inception_date` ≤ `start_date`; `effective_date` within the term; every driver at least 16 on the start date; licence after birth and not after the start; UK postcodes for GB/GG/JE/IM addresses and for `vehicle.overnight_postcode`; real ISO 3166-1 country codes; money at most 2 decimal places, rates at most 6.',
      'Card payment: to collect the upfront premium at binding, first `POST /payments {type: CREATE_PAYMENT_INTENT}`, confirm the intent client-side (Stripe.js, or the sandbox’s `/sandbox/stripe/v1/payment_intents/{id}/confirm`), then send `payment: {provider_payment_reference, payment_method_id, provider_customer_reference, payment_provider, payment_amount}` from that result. Without a `payment` block the policy is created unpaid and a card is added later with `ADD_NEW_PAYMENT_METHOD`.',
      'Stored normalised: postcodes upper case with one space, country upper case (default `GB`), `mobile_number` folded into `phone_number`, `billing_day_date` defaulting to the start date’s day.',
    ].join(' '),
    examples: [policyInputExample],
  },
);
export type PolicyInput = Static<typeof PolicyInputSchema>;

/**
 * A complete, realistic UK pay-by-mile policy: the OpenAPI example and the base of test fixtures.
 * Deeply frozen: clone it (`structuredClone`) before changing it or handing it to Ajv.
 */
export const POLICY_INPUT_EXAMPLE: PolicyInput = policyInputExample;

// ── versions ─────────────────────────────────────────────────────────────────────────────────────

export const VERSION_TYPES = ['nb', 'mta', 'st', 'cn', 'rn', 'ls'] as const;
export type VersionType = (typeof VERSION_TYPES)[number];

export const PolicyVersionSchema = Type.Object(
  {
    version_type: Type.Enum(VERSION_TYPES, {
      description:
        '`nb` new business, `mta` adjustment, `st` usage statement, `cn` cancellation, `rn` renewal, `ls` lapse.',
    }),
    policy_reference: Type.String(),
    policy_version_reference: uuid('This version.'),
    quote_reference: nullable(
      Type.String({ description: '`pricing.quote_reference` of the snapshot; null when it had none.' }),
    ),
    usage: Type.String(),
    vehicle_reg: Type.String(),
    address_postcode: Type.String(),
    email: Type.String(),
    proposer_first_names: Type.String(),
    proposer_last_names: Type.String(),
    inception_date: nullable(isoDateTime('Start of the first term; null when not given.')),
    effective_date: isoDateTime('When this version takes effect.'),
    start_date: isoDateTime('Start of the term.'),
    end_date: isoDateTime('End of the term.'),
    upfront_rate: nullable(Type.Number()),
    subscription_rate: nullable(Type.Number()),
    usage_rate: Type.Number({ description: 'Money per unit of distance.' }),
    upfront_premium: Type.Number(),
    subscription_premium: Type.Number(),
    usage_premium: nullable(
      Type.Number({
        description:
          'On `st` versions, the statement’s usage premium; otherwise the estimate from pricing, or null.',
      }),
    ),
    ipt_rate: nullable(Type.Number({ description: 'Percentage: 12 means 12 %.' })),
    commission_rate: nullable(Type.Number({ description: 'Percentage.' })),
    statement_start_date: nullable(
      isoDateTime('Start of the statement period on `st` versions; null on others.'),
    ),
    statement_end_date: nullable(
      isoDateTime('End of the statement period on `st` versions; null on others.'),
    ),
    created_at: isoDateTime('When the version was written.'),
    superseded: Type.Boolean({
      description:
        'True when the version no longer counts: a stored renewal replaced by a newer one or cancelled with the policy, or a lapse undone by a renewal that continues the cover.',
    }),
  },
  {
    description:
      'One version of a policy. Every field is always present; those that can be unknown are null. Strings and numbers that come from required fields of the policy object are never null.',
  },
);
export type PolicyVersion = Static<typeof PolicyVersionSchema>;

export const POLICY_STATUSES = ['pending', 'active', 'cancelled', 'lapsed'] as const;
export type PolicyStatus = (typeof POLICY_STATUSES)[number];
