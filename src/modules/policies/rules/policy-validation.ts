import { londonDate } from '../../../platform/london-calendar.ts';
import {
  CUSTOM_KEY_MAX_LENGTH,
  MONEY_DECIMALS,
  RATE_DECIMALS,
  UNIX_SECONDS_MAX,
  type PolicyInput,
} from './policy-object-schemas.ts';

/*
 * The checks on a policy object that JSON Schema cannot express. Pure: no I/O, no clock (the policy's
 * own start date is the reference for ages). Runs after Ajv on the same body and may be handed a body
 * Ajv rejected: every check reads defensively and skips values of the wrong type, which Ajv has
 * already reported, so one 422 can list both sets of errors without repeating one.
 */

const BODY = '/body';

/** ISO 3166-1 alpha-2: the 249 officially assigned codes. */
export const ISO_3166_ALPHA2: ReadonlySet<string> = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR ' +
    'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP ' +
    'KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT ' +
    'MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW ' +
    'SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ ' +
    'UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
);

/** The policy address country when none is sent. */
export const DEFAULT_COUNTRY = 'GB';

/** Countries whose addresses carry UK postcodes: Great Britain and Northern Ireland, and the Crown Dependencies. */
export const UK_POSTCODE_COUNTRIES: ReadonlySet<string> = new Set(['GB', 'GG', 'JE', 'IM']);

/**
 * A UK postcode, either case, with or without the space. The letter rules are Royal Mail's (no Q, V, X
 * first; no I, J, Z second; restricted letters in A9A and AA9A districts; no C, I, K, M, O, V inward);
 * every live GB postcode in the ONS data in shared/data matches.
 */
export const UK_POSTCODE_REGEX =
  /^(?:GIR ?0AA|[A-PR-UWYZ](?:\d{1,2}|[A-HK-Y]\d{1,2}|\d[A-HJKPSTUW]|[A-HK-Y]\d[ABEHMNPRVWXY]) ?\d[ABD-HJLNP-UW-Z]{2})$/i;

/** True when `value` (surrounding spaces ignored) is a UK postcode. */
export function isUkPostcode(value: string): boolean {
  return UK_POSTCODE_REGEX.test(value.trim());
}

/** `" sw1a1aa"` → `"SW1A 1AA"`: upper case, one space before the 3-character inward code. */
export function normalisePostcode(value: string): string {
  const compact = value.replace(/\s+/g, '').toUpperCase();
  return compact.length > 3 ? `${compact.slice(0, -3)} ${compact.slice(-3)}` : compact;
}

/** The key accounts are matched by: trimmed and lower-cased as a whole. */
export function normaliseEmail(value: string): string {
  return value.trim().toLowerCase();
}

const DATE_SHAPE = /^(\d{4})-(\d{2})-(\d{2})$/;
const FIRST_YEAR = 1800;
const LAST_YEAR = 2199;

/** True for a `YYYY-MM-DD` day that exists (leap years included), in years 1800–2199. */
export function isCalendarDate(value: string): boolean {
  const match = DATE_SHAPE.exec(value);
  if (match === null) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (year < FIRST_YEAR || year > LAST_YEAR || month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const LONDON_DATE = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/** The Europe/London calendar date (`YYYY-MM-DD`) of a UNIX timestamp in seconds. */
export function londonDateOf(unixSeconds: number): string {
  // The memoised calendar for any instant a policy object may hold (Intl's formatting was half of this
  // module's work on each quote); Intl, which throws past its range, for what the schema rejects.
  if (unixSeconds >= 0 && unixSeconds <= UNIX_SECONDS_MAX) return londonDate(new Date(unixSeconds * 1000));
  const parts = LONDON_DATE.formatToParts(new Date(unixSeconds * 1000));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** Whole years from `dob` to `on` (both `YYYY-MM-DD`); someone born on 29 February turns a year older on 1 March in other years. */
export function ageOn(dob: string, on: string): number {
  const years = Number(on.slice(0, 4)) - Number(dob.slice(0, 4));
  return on.slice(5) < dob.slice(5) ? years - 1 : years;
}

/** The billing day when none is sent: the day of the month of `start_date` in Europe/London. */
export function defaultBillingDay(startDateSeconds: number): number {
  return Number(londonDateOf(startDateSeconds).slice(8));
}

/** Decimal places in the shortest form of `value` (`0.1` → 1, `1e-7` → 7, `0.1 + 0.2` → 17). */
export function decimalPlaces(value: number): number {
  if (!Number.isFinite(value)) return Number.POSITIVE_INFINITY;
  const match = /^-?\d+(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (match === null) return Number.POSITIVE_INFINITY;
  return Math.max(0, (match[1]?.length ?? 0) - Number(match[2] ?? 0));
}

export const MIN_DRIVER_AGE = 16;
export const MAX_DRIVER_AGE = 120;

// ── Reading a body that may not match the schema ────────────────────────────────────────────────

type Json = Record<string, unknown>;
const asObject = (value: unknown): Json | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
const asArray = (value: unknown): readonly unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);
const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const asNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
/** Length in code points, as JSON Schema's `maxLength` counts. */
const codePointLength = (value: string): number =>
  value.length - (value.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
/** A JSON pointer segment (RFC 6901). */
const segment = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

const MONEY_FIELDS = {
  policy: ['compulsory_excess', 'voluntary_excess'],
  vehicle: ['current_value'],
  pricing: [
    'upfront_premium',
    'subscription_premium',
    'usage_premium',
    'base_premium',
    'yearly_premium_estimate',
    'total_excess',
    'withhold_fee',
    'deposit_fee',
    'admin_fee',
    'mta_fee',
    'cancel_fee',
  ],
  payment: ['payment_amount'],
} as const;
const RATE_FIELDS = [
  'upfront_rate',
  'subscription_rate',
  'usage_rate',
  'ipt_rate',
  'commission_rate',
] as const;
const REQUIRED_TEXT = {
  policy: ['usage', 'cover'],
  vehicle: ['reg', 'make', 'model'],
} as const;

/** A failing field: a JSON pointer into the request and what is wrong (platform/errors.ts's FieldError). */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/** The checks shared by every block, each adding its errors through `add`. */
function fieldChecks(add: (path: string, message: string) => void) {
  return {
    checkDecimals: (block: Json | undefined, path: string, fields: readonly string[], places: number) => {
      for (const field of fields) {
        const value = asNumber(block?.[field]);
        if (value !== undefined && decimalPlaces(value) > places)
          add(`${path}/${field}`, `must have at most ${places} decimal places`);
      }
    },
    checkNotBlank: (block: Json | undefined, path: string, fields: readonly string[]) => {
      for (const field of fields) {
        const value = asString(block?.[field]);
        if (value !== undefined && value.length > 0 && value.trim() === '')
          add(`${path}/${field}`, 'must not be blank');
      }
    },
    /** The date at `block[field]` when it has the right shape and exists; reports one that does not exist. */
    dateAt: (block: Json | undefined, path: string, field: string): string | undefined => {
      const value = asString(block?.[field]);
      if (value === undefined || !DATE_SHAPE.test(value)) return undefined; // Ajv reports the shape
      if (isCalendarDate(value)) return value;
      add(`${path}/${field}`, `must be a date that exists (YYYY-MM-DD, years ${FIRST_YEAR}–${LAST_YEAR})`);
      return undefined;
    },
  };
}

/** A driver's (the proposer's or an additional driver's) names, dates, age on `startOn` and phone numbers. */
function checkPerson(
  add: (path: string, message: string) => void,
  person: Json | undefined,
  path: string,
  startOn: string | undefined,
): void {
  if (person === undefined) return;
  const { checkNotBlank, dateAt } = fieldChecks(add);
  checkNotBlank(person, path, ['first_names', 'last_names']);
  const dob = dateAt(person, path, 'dob');
  if (dob !== undefined && startOn !== undefined) {
    const age = ageOn(dob, startOn);
    if (age < MIN_DRIVER_AGE)
      add(
        `${path}/dob`,
        `the driver must be at least ${MIN_DRIVER_AGE} on the policy start date (${startOn})`,
      );
    else if (age > MAX_DRIVER_AGE)
      add(`${path}/dob`, `is more than ${MAX_DRIVER_AGE} years before the policy start date`);
  }
  const licensed = dateAt(person, path, 'licence_issued_date');
  if (licensed !== undefined && dob !== undefined && licensed <= dob)
    add(`${path}/licence_issued_date`, 'must be after dob');
  else if (licensed !== undefined && startOn !== undefined && licensed > startOn) {
    add(`${path}/licence_issued_date`, 'must not be after the policy start date');
  }
  const resident = dateAt(person, path, 'residency_date');
  if (resident !== undefined && dob !== undefined && resident < dob)
    add(`${path}/residency_date`, 'must not be before dob');
  asArray(person['convictions']).forEach((c, i) => dateAt(asObject(c), `${path}/convictions/${i}`, 'date'));
  asArray(person['claims']).forEach((c, i) => dateAt(asObject(c), `${path}/claims/${i}`, 'date'));
  const phone = asString(person['phone_number']);
  const mobile = asString(person['mobile_number']);
  if (phone !== undefined && mobile !== undefined && phone !== mobile) {
    add(`${path}/mobile_number`, 'is an alias of phone_number and must equal it when both are sent');
  }
}

/**
 * The cross-field and format checks of a policy object that Ajv cannot do, as `{path, message}` with
 * paths rooted at `/body`. Empty when the object is acceptable. Never throws, whatever it is given.
 */
export function validatePolicyInput(input: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const add = (path: string, message: string) => errors.push({ path: `${BODY}${path}`, message });
  const { checkDecimals, checkNotBlank, dateAt } = fieldChecks(add);

  const body = asObject(input);
  if (body === undefined) return errors;
  const policy = asObject(body['policy']);
  const address = asObject(policy?.['address']);

  // The term.
  const startSeconds = asNumber(policy?.['start_date']);
  const endSeconds = asNumber(policy?.['end_date']);
  const inceptionSeconds = asNumber(policy?.['inception_date']);
  const effectiveSeconds = asNumber(body['effective_date']);
  if (startSeconds !== undefined && endSeconds !== undefined && endSeconds <= startSeconds) {
    add('/policy/end_date', 'must be after start_date');
  }
  if (startSeconds !== undefined && inceptionSeconds !== undefined && inceptionSeconds > startSeconds) {
    add('/policy/inception_date', 'must not be after start_date');
  }
  if (
    effectiveSeconds !== undefined &&
    startSeconds !== undefined &&
    endSeconds !== undefined &&
    startSeconds < endSeconds
  ) {
    if (effectiveSeconds < startSeconds || effectiveSeconds > endSeconds)
      add('/effective_date', 'must be within the policy term (start_date to end_date)');
  }
  const startOn = startSeconds === undefined ? undefined : londonDateOf(startSeconds);

  // Address: country code, and UK postcodes where the country uses them.
  const country = asString(address?.['country']);
  const countryUpper = country?.toUpperCase();
  if (countryUpper !== undefined && /^[A-Z]{2}$/.test(countryUpper) && !ISO_3166_ALPHA2.has(countryUpper)) {
    add(
      '/policy/address/country',
      `is not an ISO 3166-1 alpha-2 country code${countryUpper === 'UK' ? '; the United Kingdom is GB' : ''}`,
    );
  }
  const ukAddress = country === undefined || UK_POSTCODE_COUNTRIES.has(countryUpper ?? '');
  const postcode = asString(address?.['postcode']);
  if (ukAddress && postcode !== undefined && postcode.length > 0 && !isUkPostcode(postcode)) {
    add('/policy/address/postcode', 'is not a UK postcode');
  }
  checkNotBlank(address, '/policy/address', ['line_1', 'postcode']);
  checkNotBlank(policy, '/policy', REQUIRED_TEXT.policy);
  checkDecimals(policy, '/policy', MONEY_FIELDS.policy, MONEY_DECIMALS);

  // People.
  checkPerson(add, asObject(body['proposer']), '/proposer', startOn);
  asArray(body['additional_drivers']).forEach((d, i) => {
    checkPerson(add, asObject(d), `/additional_drivers/${i}`, startOn);
  });

  // Vehicle.
  const vehicle = asObject(body['vehicle']);
  checkNotBlank(vehicle, '/vehicle', REQUIRED_TEXT.vehicle);
  dateAt(vehicle, '/vehicle', 'purchase_date');
  dateAt(vehicle, '/vehicle', 'manufacture_date');
  const overnight = asString(vehicle?.['overnight_postcode']);
  if (ukAddress && overnight !== undefined && overnight.length > 0 && !isUkPostcode(overnight)) {
    add('/vehicle/overnight_postcode', 'is not a UK postcode');
  }
  checkDecimals(vehicle, '/vehicle', MONEY_FIELDS.vehicle, MONEY_DECIMALS);

  // Pricing and payment.
  const pricing = asObject(body['pricing']);
  checkDecimals(pricing, '/pricing', MONEY_FIELDS.pricing, MONEY_DECIMALS);
  checkDecimals(pricing, '/pricing', RATE_FIELDS, RATE_DECIMALS);
  checkDecimals(asObject(body['payment']), '/payment', MONEY_FIELDS.payment, MONEY_DECIMALS);

  // Custom store: the item count is the schema's maxProperties; key length is checked here so the
  // error names the key.
  const custom = asObject(body['custom']);
  for (const key of Object.keys(custom ?? {})) {
    if (key.length === 0 || codePointLength(key) > CUSTOM_KEY_MAX_LENGTH) {
      add(`/custom/${segment(key)}`, `key must be 1 to ${CUSTOM_KEY_MAX_LENGTH} characters long`);
    }
  }

  return errors;
}

// ── Normalisation ───────────────────────────────────────────────────────────────────────────────

/**
 * The policy object as stored: a copy with the country upper case (default GB), UK postcodes as
 * `SW1A 1AA` (others trimmed), `mobile_number` folded into `phone_number`, emails trimmed,
 * `billing_day_date` defaulting to the start date's day (Europe/London) and `pricing.usage_unit`
 * defaulting to `mile`. Expects an input that passed Ajv and `validatePolicyInput`.
 */
export function normalisePolicyInput(input: PolicyInput): PolicyInput {
  const out = structuredClone(input);
  const { address } = out.policy;
  const country = (address.country ?? DEFAULT_COUNTRY).toUpperCase();
  address.country = country;
  const ukAddress = UK_POSTCODE_COUNTRIES.has(country);
  address.postcode = ukAddress ? normalisePostcode(address.postcode) : address.postcode.trim();
  if (out.vehicle.overnight_postcode !== undefined) {
    out.vehicle.overnight_postcode = ukAddress
      ? normalisePostcode(out.vehicle.overnight_postcode)
      : out.vehicle.overnight_postcode.trim();
  }
  out.policy.billing_day_date ??= defaultBillingDay(out.policy.start_date);
  out.pricing.usage_unit ??= 'mile';

  out.proposer.email = out.proposer.email.trim();
  foldMobileNumber(out.proposer);
  for (const driver of out.additional_drivers ?? []) {
    if (driver.email !== undefined) driver.email = driver.email.trim();
    foldMobileNumber(driver);
  }
  return out;
}

function foldMobileNumber(person: { phone_number?: string; mobile_number?: string }): void {
  if (person.mobile_number === undefined) return;
  person.phone_number ??= person.mobile_number;
  delete person.mobile_number;
}
