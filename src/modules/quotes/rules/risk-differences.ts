import { londonDate } from '../../../platform/london-calendar.ts';
import { normalisePolicyInput, type FieldError, type PolicyInput } from '../../policies/rules/index.ts';
import type { QuoteInput } from '../../rating/rules/index.ts';

/*
 * Whether the policy being bound is the risk its quote rated (issue 36): a quote's price holds only
 * for what it was asked with. Pure.
 */

/**
 * The fields of a quote's input a binding policy may send differently, as dotted paths (`*` is any
 * driver). Everything else the quote was asked with must be sent as it was.
 *
 * NOTE: these are the ones no rate book can read (neither a factor's source nor an underwriting
 * condition's field, `QUOTE_FIELD_PATHS` and `CONDITION_FIELDS`) and that say how to reach the
 * policyholder or how the policy is administered, not what is insured: contact details (a corrected
 * email or phone number still binds), the postal lines of the address (the risk address is rated by
 * its postcode and country, which must match), and the client's own bookkeeping. Names, the vehicle's
 * registration and every rated fact must match: they say who and what is covered.
 */
export const UNRATED_QUOTE_FIELDS: readonly string[] = [
  'proposer.title',
  'proposer.email',
  'proposer.phone_number',
  'additional_drivers.*.title',
  'additional_drivers.*.email',
  'additional_drivers.*.phone_number',
  'policy.address.line_1',
  'policy.address.line_2',
  'policy.address.line_3',
  'policy.address.city',
  'policy.address.county',
  'policy.auto_renew',
  'policy.billing_day_date',
  'policy.inception_date',
  'policy.underwriter_policy_reference',
  'policy.created_at',
  'custom',
];

const unrated = (path: readonly string[]): boolean =>
  UNRATED_QUOTE_FIELDS.some((pattern) => {
    const parts = pattern.split('.');
    return parts.length === path.length && parts.every((part, i) => part === '*' || part === path[i]);
  });

// A quote has no pricing; normalising needs one, and it is dropped before comparing.
const NO_PRICING = { usage_rate: 0, upfront_premium: 0, subscription_premium: 0 };

/** Both sides as stored (postcodes, country, `mobile_number` folded), without what only binding sends. */
function comparable(input: QuoteInput | PolicyInput): Record<string, unknown> {
  // The installment plan is carried by the quote's pricing (`subscription_installments`), which the
  // policy takes whole; the rest is binding's own (the payment, an adjustment's effective date).
  const {
    pricing: _pricing,
    payment: _payment,
    backfill: _backfill,
    effective_date: _effective,
    installment_plan: _plan,
    ...risk
  } = normalisePolicyInput({ ...input, pricing: NO_PRICING }) as PolicyInput & {
    installment_plan?: unknown;
  };
  return risk;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// An empty list says what a list left out says: no convictions, no claims, no other drivers.
const absentIfEmpty = (value: unknown): unknown =>
  Array.isArray(value) && value.length === 0 ? undefined : value;

const shown = (value: unknown): string => {
  if (value === undefined) return 'not set';
  if (Array.isArray(value)) return `${value.length} item${value.length === 1 ? '' : 's'}`;
  return isObject(value) ? 'set' : JSON.stringify(value);
};

function collect(quoted: unknown, sent: unknown, path: readonly string[], out: FieldError[]): void {
  if (unrated(path)) return;
  const q = absentIfEmpty(quoted);
  const s = absentIfEmpty(sent);
  if (isObject(q) && isObject(s)) {
    for (const key of new Set([...Object.keys(q), ...Object.keys(s)]))
      collect(q[key], s[key], [...path, key], out);
    return;
  }
  if (Array.isArray(q) && Array.isArray(s) && q.length === s.length) {
    q.forEach((item, index) => {
      collect(item, s[index], [...path, String(index)], out);
    });
    return;
  }
  if (q === s) return;
  out.push({ path: `/body/${path.join('/')}`, message: `is ${shown(s)}; the quote’s is ${shown(q)}` });
}

/**
 * Every field of the policy `sent` to bind a quote that is not what the quote (`quoted`, its stored
 * input) was rated and underwritten on, as request paths (`/body/policy/end_date`); empty when it is
 * the quoted risk. Compared as stored (normalised), so a postcode's case or spacing is no difference;
 * the fields of `UNRATED_QUOTE_FIELDS` are not compared.
 */
export function riskDifferences(quoted: QuoteInput, sent: PolicyInput): FieldError[] {
  const errors: FieldError[] = [];
  collect(comparable(quoted), comparable(sent), [], errors);
  return errors;
}

/**
 * How long before its binding a new-business policy from a quote may say its cover starts: the
 * request's time in flight and the sender's clock, not a backdating.
 */
export const BINDING_START_TOLERANCE_S = 300;

const dayOf = (seconds: number): string => londonDate(new Date(seconds * 1000));

/**
 * `riskDifferences` for new business bound at `now`. Its start may be later than the quote's on the
 * same day (London), since cover bought on its start day starts when it is bought, but never on
 * another day, before the quote's start, or before the binding itself (less
 * `BINDING_START_TOLERANCE_S`): cover from a quote is never backdated (see `startHasPassed`).
 */
export function newBusinessRiskDifferences(quoted: QuoteInput, sent: PolicyInput, now: Date): FieldError[] {
  const quotedStart = quoted.policy.start_date;
  const sentStart = sent.policy.start_date;
  const errors = riskDifferences(quoted, { ...sent, policy: { ...sent.policy, start_date: quotedStart } });
  const path = '/body/policy/start_date';
  if (sentStart < quotedStart || dayOf(sentStart) !== dayOf(quotedStart))
    errors.push({
      path,
      message: `is ${String(sentStart)}; the quote’s is ${String(quotedStart)} (cover may start later on the quote’s start day, when it is bought)`,
    });
  else if (sentStart < now.getTime() / 1000 - BINDING_START_TOLERANCE_S)
    errors.push({
      path,
      message: 'is before the time of binding: cover bought from a quote starts no earlier than it is bought',
    });
  return errors;
}
