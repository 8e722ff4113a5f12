import AjvCompiler from '@fastify/ajv-compiler';
import fc from 'fast-check';
import {
  POLICY_INPUT_EXAMPLE,
  PolicyInputSchema,
  type AdditionalDriver,
  type PolicyInput,
  type Proposer,
} from '../../src/modules/policies/policy-schemas.ts';
import { londonDateOf, validatePolicyInput } from '../../src/modules/policies/rules/policy-validation.ts';
import type { FieldError } from '../../src/platform/errors.ts';
import { fieldErrors } from '../../src/platform/http/problem.ts';

// ── Fixtures ────────────────────────────────────────────────────────────────────────────────────

/** Overrides for `examplePolicyInput`: objects merge key by key, arrays and scalars replace, `undefined` removes the key. */
export type PolicyOverrides = DeepPartial<PolicyInput>;
export type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> | undefined }
    : T;

/**
 * A deterministic, valid UK pay-by-mile policy object (the OpenAPI example), deep-merged with
 * `overrides`: e.g. `examplePolicyInput({ proposer: { email: 'someone@example.com' } })`. A fresh copy
 * every call. Removing a required field with `undefined` gives an invalid object on purpose.
 */
export function examplePolicyInput(overrides: PolicyOverrides = {}): PolicyInput {
  const base: PolicyInput = structuredClone(POLICY_INPUT_EXAMPLE);
  // NOTE: the example's payment block names a made-up processor payment, which the service checks
  // with the processor (and refuses). Fixtures are payment-free unless a test passes a `payment`.
  if (overrides.payment === undefined) delete base.payment;
  return merge(base, overrides) as PolicyInput;
}

/**
 * The example policy with a term that covers `now` (it began 30 days before and runs a year), for code
 * on the system clock: the example's own term has ended, and an ended term is refused on creation.
 */
export function livePolicyInput(overrides: PolicyOverrides = {}, now = new Date()): PolicyInput {
  const start = Math.floor(now.getTime() / 1000) - 30 * 86_400;
  const term = { policy: { start_date: start, end_date: start + 365 * 86_400 - 1, inception_date: start } };
  return examplePolicyInput(merge(term, overrides) as PolicyOverrides);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function merge(base: unknown, patch: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(patch)) return structuredClone(patch);
  const entries = new Map(Object.entries(base));
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) entries.delete(key);
    else entries.set(key, merge(entries.get(key), value));
  }
  return Object.fromEntries(entries);
}

// ── The app's view of a body ────────────────────────────────────────────────────────────────────

interface AjvValidate {
  (data: unknown): boolean;
  errors?:
    { instancePath: string; keyword: string; message?: string; params: Record<string, unknown> }[] | null;
}

// Built as app.ts builds the body validator: @fastify/ajv-compiler (Ajv 8 + ajv-formats) with the same options.
const buildValidator = AjvCompiler()(
  {},
  {
    customOptions: { removeAdditional: false, allErrors: true, useDefaults: true, coerceTypes: false },
  },
) as unknown as (route: { schema: unknown; method: string; url: string; httpPart: string }) => AjvValidate;

export const validatePolicyInputSchema: AjvValidate = buildValidator({
  schema: PolicyInputSchema,
  method: 'POST',
  url: '/policys',
  httpPart: 'body',
});

/** Ajv's errors for a POST /policys body as the 422 lists them (`/body/…`). Validates a copy: Ajv inserts defaults. */
export function schemaErrors(body: unknown): FieldError[] {
  const ok = validatePolicyInputSchema(structuredClone(body));
  return ok ? [] : fieldErrors(validatePolicyInputSchema.errors ?? [], 'body');
}

/** Every error a POST /policys body gets: Ajv's, then `validatePolicyInput`'s. */
export function policyBodyErrors(body: unknown): FieldError[] {
  return [...schemaErrors(body), ...validatePolicyInput(body)];
}

// ── Arbitraries ─────────────────────────────────────────────────────────────────────────────────

const DAY_SECONDS = 86_400;
const START_MIN = Date.UTC(2024, 0, 1) / 1000;
const START_MAX = Date.UTC(2030, 0, 1) / 1000 - 1;

const dayNumber = (date: string): number => Date.parse(`${date}T00:00:00Z`) / (DAY_SECONDS * 1000);
const dateOfDay = (day: number): string => new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 10);
const shiftYears = (date: string, years: number): string => {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y + years, m - 1, d)).toISOString().slice(0, 10);
};
/** A `YYYY-MM-DD` date in `[from, to]`. */
const dateBetween = (from: string, to: string): fc.Arbitrary<string> =>
  fc.integer({ min: dayNumber(from), max: Math.max(dayNumber(from), dayNumber(to)) }).map(dateOfDay);

const money = (maxPounds = 100_000) =>
  fc.integer({ min: 0, max: maxPounds * 100 }).map((pence) => pence / 100);
const rate = (max: number) => fc.integer({ min: 0, max: max * 1_000_000 }).map((micro) => micro / 1_000_000);
const fromChars = (chars: string) => fc.constantFrom(...Array.from(chars));
const digits = (min: number, max: number) =>
  fc.string({ unit: fromChars('0123456789'), minLength: min, maxLength: max });

/** A valid UK postcode in any of the six outward shapes, in canonical form or as a client might type it. */
export function ukPostcode(): fc.Arbitrary<string> {
  const first = fromChars('ABCDEFGHIJKLMNOPRSTUWYZ');
  const second = fromChars('ABCDEFGHKLMNOPQRSTUVWXY');
  const digit = fromChars('0123456789');
  const outward = fc.oneof(
    fc.tuple(first, digit).map((p) => p.join('')),
    fc.tuple(first, digit, digit).map((p) => p.join('')),
    fc.tuple(first, second, digit).map((p) => p.join('')),
    fc.tuple(first, second, digit, digit).map((p) => p.join('')),
    fc.tuple(first, digit, fromChars('ABCDEFGHJKPSTUW')).map((p) => p.join('')),
    fc.tuple(first, second, digit, fromChars('ABEHMNPRVWXY')).map((p) => p.join('')),
  );
  const inward = fc
    .tuple(digit, fromChars('ABDEFGHJLNPQRSTUWXYZ'), fromChars('ABDEFGHJLNPQRSTUWXYZ'))
    .map((p) => p.join(''));
  return fc
    .tuple(outward, inward, fc.constantFrom('canonical', 'compact', 'lower'))
    .map(([out, inw, style]) =>
      style === 'canonical'
        ? `${out} ${inw}`
        : style === 'compact'
          ? `${out}${inw}`
          : `${out} ${inw}`.toLowerCase(),
    );
}

const FIRST_NAMES = [
  'Amelia',
  'Oliver',
  'Isla',
  'George',
  'Ava',
  'Noah',
  'Mia',
  'Arthur',
  'Siobhan',
  'Rhys',
  'Priya',
  'Mohammed',
  'Zofia',
  'Chidi',
  'Anne-Marie',
  'Seán',
];
const LAST_NAMES = [
  'Clarke',
  'Smith',
  'Jones',
  'Williams',
  'Taylor',
  'Davies',
  'Patel',
  'Khan',
  'O’Brien',
  'Nowak',
  'Okafor',
  'MacLeod',
  'Evans',
  'Thomas',
];
const DOMAINS = ['example.com', 'example.co.uk', 'mail.example.org', 'example.net'];

const email = fc
  .tuple(
    fc.constantFrom(...FIRST_NAMES),
    fc.constantFrom(...LAST_NAMES),
    fc.integer({ min: 0, max: 9999 }),
    fc.constantFrom(...DOMAINS),
    fc.boolean(),
  )
  .map(([first, last, n, domain, upper]) => {
    const local = `${first}.${last}${n}`
      .toLowerCase()
      .normalize('NFD')
      .replace(/[^a-z0-9.-]/g, '');
    return upper ? `${local[0]?.toUpperCase() ?? ''}${local.slice(1)}@${domain}` : `${local}@${domain}`;
  });

const phone = fc.oneof(
  digits(9, 9).map((d) => `+447${d}`),
  fc.tuple(fromChars('123456789'), digits(6, 14)).map(([c, d]) => `+${c}${d}`),
);

/** Person fields valid for a policy starting on `startOn` (Europe/London date). */
function personFields(startOn: string) {
  const dobArb = dateBetween(shiftYears(startOn, -90), shiftYears(startOn, -17));
  return dobArb.chain((dob) => {
    const licensedFrom = shiftYears(dob, 17) < startOn ? shiftYears(dob, 17) : startOn;
    const recent = dateBetween(shiftYears(startOn, -10), startOn);
    return fc
      .tuple(
        fc.record(
          {
            title: fc.constantFrom('Mr', 'Mrs', 'Ms', 'Miss', 'Dr', 'Mx'),
            first_names: fc.constantFrom(...FIRST_NAMES),
            last_names: fc.constantFrom(...LAST_NAMES),
            email,
            children: fc.integer({ min: 0, max: 6 }),
            has_medical_conditions: fc.boolean(),
            has_informed_dvla_medical_conditions: fc.boolean(),
            ncd: fc.integer({ min: 0, max: 20 }),
            dob: fc.constant(dob),
            licence_type: fc.constantFrom('full_uk', 'full_eu', 'provisional', 'international'),
            employment: fc.constantFrom('employed', 'self_employed', 'retired', 'student', 'unemployed'),
            occupation: fc.constantFrom('nurse', 'teacher', 'software_engineer', 'electrician', 'retired'),
            business: fc.constantFrom('health', 'education', 'computer_services', 'construction', 'none'),
            licence_issued_date: dateBetween(licensedFrom, startOn),
            residency_date: dateBetween(dob, startOn),
            has_criminal_conviction: fc.boolean(),
            convictions: fc.array(
              fc.record(
                {
                  code: fc.constantFrom('SP30', 'SP50', 'CU80', 'IN10', 'MS90'),
                  date: recent,
                  points: fc.integer({ min: 0, max: 12 }),
                  ban: fc.integer({ min: 0, max: 36 }),
                },
                { requiredKeys: ['code', 'date'] },
              ),
              { maxLength: 3 },
            ),
            claims: fc.array(
              fc.record(
                {
                  code: fc.constantFrom('windscreen', 'theft', 'accident', 'vandalism', 'fire'),
                  date: recent,
                  at_fault: fc.boolean(),
                  ncd_lost: fc.boolean(),
                },
                { requiredKeys: ['code', 'date'] },
              ),
              { maxLength: 3 },
            ),
            own_home: fc.boolean(),
          },
          { requiredKeys: ['first_names', 'last_names', 'email', 'dob'] },
        ),
        // phone_number, mobile_number (the alias), both equal, or neither.
        fc.option(fc.tuple(phone, fc.constantFrom('phone', 'mobile', 'both')), { nil: undefined }),
      )
      .map(([person, tel]) => {
        if (tel === undefined) return person;
        const [number, as] = tel;
        return {
          ...person,
          ...(as === 'mobile' ? {} : { phone_number: number }),
          ...(as === 'phone' ? {} : { mobile_number: number }),
        };
      });
  });
}

function proposer(startOn: string): fc.Arbitrary<Proposer> {
  return personFields(startOn);
}

function additionalDriver(startOn: string): fc.Arbitrary<AdditionalDriver> {
  return fc
    .tuple(
      personFields(startOn),
      fc.option(fc.constantFrom('spouse', 'partner', 'child', 'parent', 'sibling', 'friend'), {
        nil: undefined,
      }),
      fc.boolean(),
    )
    .map(([{ email: driverEmail, ...person }, relationship, withEmail]) => ({
      ...person,
      ...(relationship === undefined ? {} : { relationship }),
      ...(withEmail ? { email: driverEmail } : {}),
    }));
}

const registration = fc
  .tuple(
    fc.string({ unit: fromChars('ABCDEFGHJKLMNOPRSTUVWXY'), minLength: 2, maxLength: 2 }),
    digits(2, 2),
    fc.string({ unit: fromChars('ABCDEFGHJKLMNOPRSTUVWXYZ'), minLength: 3, maxLength: 3 }),
  )
  .map(([area, age, random]) => `${area}${age} ${random}`);

function vehicle(startOn: string, overnightPostcode: fc.Arbitrary<string>) {
  return dateBetween(shiftYears(startOn, -30), startOn).chain((manufactured) =>
    fc.record(
      {
        reg: registration,
        vin: fc.string({
          unit: fromChars('ABCDEFGHJKLMNPRSTUVWXYZ0123456789'),
          minLength: 17,
          maxLength: 17,
        }),
        make: fc.constantFrom('Volkswagen', 'Ford', 'Vauxhall', 'Toyota', 'Nissan', 'Kia', 'BMW', 'Tesla'),
        model: fc.constantFrom('Golf', 'Fiesta', 'Corsa', 'Yaris', 'Leaf', 'Niro', '320d', 'Model 3'),
        colour: fc.constantFrom('blue', 'black', 'silver', 'white', 'red', 'grey'),
        type: fc.constantFrom('car', 'van'),
        body_type: fc.constantFrom('hatchback', 'saloon', 'estate', 'suv', 'coupe'),
        rating: fc.integer({ min: 1, max: 50 }),
        group_rating_50: fc.integer({ min: 1, max: 50 }),
        group_rating_20: fc.integer({ min: 1, max: 20 }),
        abi_code: digits(8, 8),
        engine: fc.integer({ min: 0, max: 6000 }),
        fuel: fc.constantFrom('petrol', 'diesel', 'electric', 'hybrid'),
        owner: fc.constantFrom('proposer', 'spouse', 'company', 'leasing'),
        keeper: fc.constantFrom('proposer', 'spouse', 'company'),
        estimated_yearly_mileage: fc.integer({ min: 0, max: 30_000 }),
        purchase_date: dateBetween(manufactured, startOn),
        manufacture_date: fc.constant(manufactured),
        current_value: money(200_000),
        is_rhd: fc.boolean(),
        is_parked_home: fc.boolean(),
        is_import: fc.boolean(),
        seats: fc.integer({ min: 1, max: 9 }),
        doors: fc.integer({ min: 0, max: 5 }),
        overnight_postcode: overnightPostcode,
        parked_location: fc.constantFrom('driveway', 'garage', 'street', 'car_park'),
        modifications: fc.array(fc.constantFrom('alloy_wheels', 'tow_bar', 'roof_rack', 'tinted_windows'), {
          maxLength: 3,
        }),
      },
      { requiredKeys: ['reg', 'make', 'model'] },
    ),
  );
}

const pricing = fc.record(
  {
    quote_reference: fc.uuid(),
    quote_version_reference: fc.uuid(),
    quote_model_reference: fc.uuid(),
    upfront_rate: rate(10),
    subscription_rate: rate(10),
    usage_rate: rate(1),
    usage_unit: fc.constantFrom('mile' as const, 'km' as const),
    subscription_installments: fc.integer({ min: 1, max: 12 }),
    upfront_premium: money(5_000),
    subscription_premium: money(500),
    usage_premium: money(5_000),
    base_premium: money(10_000),
    yearly_premium_estimate: money(10_000),
    total_excess: money(2_000),
    estimated_distance: fc.integer({ min: 0, max: 30_000 }),
    withhold_fee: money(100),
    deposit_fee: money(100),
    admin_fee: money(100),
    mta_fee: money(100),
    cancel_fee: money(100),
    ipt_rate: rate(100),
    commission_rate: rate(100),
  },
  { requiredKeys: ['usage_rate', 'upfront_premium', 'subscription_premium'] },
);

const custom = fc.dictionary(
  fc
    .tuple(
      fromChars('abcdefghijklmnopqrstuvwxyz'),
      fc.string({ unit: fromChars('abcdefghijklmnopqrstuvwxyz0123456789_'), maxLength: 63 }),
    )
    .map(([a, b]) => a + b),
  fc.oneof(
    fc.string({ maxLength: 500 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
  ),
  { maxKeys: 25, noNullPrototype: true },
);

const payment = fc.record(
  {
    provider_payment_reference: fc
      .string({
        unit: fromChars('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
        minLength: 10,
        maxLength: 24,
      })
      .map((s) => `pi_${s}`),
    payment_method_id: fc
      .string({ unit: fromChars('abcdefghijklmnopqrstuvwxyz0123456789'), minLength: 10, maxLength: 24 })
      .map((s) => `pm_${s}`),
    provider_customer_reference: fc
      .string({ unit: fromChars('abcdefghijklmnopqrstuvwxyz0123456789'), minLength: 10, maxLength: 24 })
      .map((s) => `cus_${s}`),
    payment_provider: fc.constant('stripe'),
    payment_amount: fc.integer({ min: -500_000, max: 500_000 }).map((pence) => pence / 100),
  },
  { requiredKeys: [] },
);

/** The term: starts in 2024–2029, mostly one calendar year (ending a second before the anniversary), else 1–730 days. */
const term = fc.integer({ min: START_MIN, max: START_MAX }).chain((start) =>
  fc
    .oneof(
      { weight: 8, arbitrary: fc.constant(undefined) },
      { weight: 2, arbitrary: fc.integer({ min: 1, max: 730 }) },
    )
    .map((days) => {
      if (days !== undefined) return { start, end: start + days * DAY_SECONDS - 1 };
      const anniversary = new Date(start * 1000);
      anniversary.setUTCFullYear(anniversary.getUTCFullYear() + 1);
      return { start, end: anniversary.getTime() / 1000 - 1 };
    }),
);

/**
 * Any valid policy object: random subsets of the optional fields with realistic values, consistent
 * dates (ages 17–90, licences after 17th birthdays) and postcodes that fit the address country.
 * Every value passes Ajv (as the app runs it) and `validatePolicyInput`.
 */
export function validPolicyInput(): fc.Arbitrary<PolicyInput> {
  return term.chain(({ start, end }) => {
    const startOn = londonDateOf(start);
    const place = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          country: fc.constantFrom(undefined, 'GB', 'gb', 'JE', 'IM', 'GG'),
          postcode: ukPostcode(),
          overnight: ukPostcode(),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          country: fc.constantFrom('IE', 'FR', 'DE', 'US', 'ES'),
          postcode: fc.constantFrom('D02 X285', '75001', '10115', '94105-1804', '28013'),
          overnight: fc.constantFrom('D02 X285', '75008', 'anywhere'),
        }),
      },
    );
    return place.chain(({ country, postcode, overnight }) =>
      fc.record(
        {
          policy: fc.record(
            {
              compulsory_excess: money(1_000),
              voluntary_excess: money(1_000),
              address: fc
                .record(
                  {
                    line_1: fc.constantFrom('12 Station Road', 'Flat 3', '1 High Street', 'Rose Cottage'),
                    line_2: fc.constantFrom('Clerkenwell', 'Old Town', ''),
                    line_3: fc.constantFrom('Northside', ''),
                    city: fc.constantFrom('London', 'Leeds', 'Cardiff', 'Glasgow', 'St Helier'),
                    county: fc.constantFrom('Greater London', 'West Yorkshire', ''),
                  },
                  { requiredKeys: ['line_1'] },
                )
                // The country decides which postcodes are valid, so it is never dropped at random.
                .map((address) => ({ ...address, postcode, ...(country === undefined ? {} : { country }) })),
              usage: fc.constantFrom('sdp', 'sdp_commuting', 'business'),
              cover: fc.constantFrom('comprehensive', 'third_party_fire_theft', 'third_party'),
              auto_renew: fc.boolean(),
              start_date: fc.constant(start),
              end_date: fc.constant(end),
              inception_date: fc.integer({ min: Math.max(0, start - 10 * 365 * DAY_SECONDS), max: start }),
              billing_day_date: fc.integer({ min: 1, max: 31 }),
              underwriter_reference: fc.constantFrom('acme-underwriting', 'uw-42'),
              underwriter_policy_reference: digits(6, 6).map((d) => `ACM/${startOn.slice(0, 4)}/${d}`),
              product_reference: fc.constantFrom('pay-by-mile-car', 'pay-by-mile-van'),
              policy_year: fc.integer({ min: 1, max: 10 }),
              subscription_frequency: fc.constantFrom(1, 4, 12),
            },
            { requiredKeys: ['address', 'usage', 'cover', 'start_date', 'end_date'] },
          ),
          proposer: proposer(startOn),
          vehicle: vehicle(startOn, fc.constant(overnight)),
          additional_drivers: fc.array(additionalDriver(startOn), { maxLength: 4 }),
          pricing,
          custom,
          payment,
          effective_date: fc.integer({ min: start, max: end }),
        },
        { requiredKeys: ['policy', 'proposer', 'vehicle', 'pricing'] },
      ),
    );
  });
}
