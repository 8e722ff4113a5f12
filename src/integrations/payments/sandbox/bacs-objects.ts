import { createHash } from 'node:crypto';
import { newId, randomId } from './objects.ts';
import type { SandboxObject } from './store.ts';

/** Stripe's test sort code for Bacs Direct Debit; the sandbox, like Stripe's test mode, takes no other. */
export const BACS_TEST_SORT_CODE = '108800';

/** What a Bacs test account does when debited (or when its mandate is set up). */
export type BacsBehaviour =
  | { readonly kind: 'succeed' }
  | {
      readonly kind: 'fail';
      readonly code: string;
      readonly message: string;
      /** The mandate is revoked with the payment (`debit_not_authorized`): it can never be debited again. */
      readonly revokesMandate: boolean;
    }
  | { readonly kind: 'dispute' }
  | { readonly kind: 'mandate_refused' }
  | { readonly kind: 'invalid_account' };

const INSUFFICIENT: BacsBehaviour = {
  kind: 'fail',
  code: 'insufficient_funds',
  message: "The customer's account has insufficient funds to cover this payment.",
  revokesMandate: false,
};
const NOT_AUTHORISED: BacsBehaviour = {
  kind: 'fail',
  code: 'debit_not_authorized',
  message: 'The customer has notified their bank that this payment was unauthorised.',
  revokesMandate: true,
};

/**
 * Stripe's documented Bacs test account numbers (sort code 108800; docs.stripe.com, "Bacs Direct
 * Debit: test your integration"). Stripe's test mode resolves the plain numbers in seconds and the
 * 9-prefixed ones after three minutes; the sandbox resolves both on the payment's settlement day.
 */
export const BACS_TEST_ACCOUNTS: Readonly<Record<string, BacsBehaviour>> = {
  '00012345': { kind: 'succeed' },
  '90012345': { kind: 'succeed' },
  '22222227': INSUFFICIENT,
  '92222227': INSUFFICIENT,
  '33333335': NOT_AUTHORISED,
  '93333335': NOT_AUTHORISED,
  '55555559': { kind: 'dispute' },
  '00033333': { kind: 'mandate_refused' },
  '00044444': { kind: 'invalid_account' },
  '34343434': {
    kind: 'fail',
    code: 'charge_exceeds_source_limit',
    message: 'This payment would take the account over its weekly payment volume limit.',
    revokesMandate: false,
  },
  '12121212': {
    kind: 'fail',
    code: 'charge_exceeds_weekly_limit',
    message: "This payment is over the account's transaction volume limit.",
    revokesMandate: false,
  },
};

/**
 * A stored Bacs payment method keeps its behaviour through its last four digits. The numbers that
 * share four digits (00012345 and 90012345, …) differ only in Stripe's timing, which the sandbox does
 * not copy.
 */
export function bacsBehaviourOfLast4(last4: string): BacsBehaviour {
  const found = Object.entries(BACS_TEST_ACCOUNTS).find(([number]) => number.endsWith(last4));
  return found?.[1] ?? { kind: 'succeed' };
}

export interface BillingDetails {
  address: {
    city: string | null;
    country: string | null;
    line1: string | null;
    line2: string | null;
    postal_code: string | null;
    state: string | null;
  };
  email: string | null;
  name: string | null;
  phone: string | null;
  tax_id: null;
}

export interface BacsPaymentMethodObject extends SandboxObject {
  id: string;
  object: 'payment_method';
  allow_redisplay: 'unspecified';
  bacs_debit: { fingerprint: string; last4: string; sort_code: string };
  billing_details: BillingDetails;
  created: number;
  customer: string | null;
  livemode: false;
  metadata: Record<string, string>;
  type: 'bacs_debit';
}

export interface MandateObject extends SandboxObject {
  id: string;
  object: 'mandate';
  customer_acceptance: {
    accepted_at: number;
    online?: { ip_address: string | null; user_agent: string | null };
    offline?: Record<string, never>;
    type: 'online' | 'offline';
  };
  livemode: false;
  multi_use: Record<string, never>;
  payment_method: string;
  payment_method_details: {
    bacs_debit: {
      display_name: string | null;
      network_status: 'accepted' | 'pending' | 'refused' | 'revoked';
      reference: string;
      revocation_reason: string | null;
      service_user_number: string | null;
      url: string;
    };
    type: 'bacs_debit';
  };
  status: 'active' | 'inactive' | 'pending';
  type: 'multi_use';
}

export type SetupIntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'canceled'
  | 'succeeded';

export interface SetupIntentObject extends SandboxObject {
  id: string;
  object: 'setup_intent';
  application: null;
  automatic_payment_methods: null;
  cancellation_reason: null;
  client_secret: string;
  created: number;
  customer: string | null;
  description: string | null;
  flow_directions: null;
  last_setup_error: {
    type: 'invalid_request_error';
    code: string;
    message: string;
    param?: string;
  } | null;
  latest_attempt: null;
  livemode: false;
  mandate: string | null;
  metadata: Record<string, string>;
  next_action: null;
  on_behalf_of: null;
  payment_method: string | null;
  payment_method_options: { bacs_debit: { mandate_options: Record<string, never> } };
  payment_method_types: string[];
  single_use_mandate: null;
  status: SetupIntentStatus;
  usage: 'off_session' | 'on_session';
}

export interface TestClockObject extends SandboxObject {
  id: string;
  object: 'test_helpers.test_clock';
  created: number;
  deletes_after: number;
  frozen_time: number;
  livemode: false;
  name: string | null;
  status: 'ready' | 'advancing' | 'internal_failure';
  status_details: Record<string, never>;
}

/**
 * The sandbox's own record of a Bacs payment waiting for its settlement day (never served: no
 * endpoint loads this type). `test_clock` set: settled when that clock is advanced past `settles_at`;
 * null: when the sandbox's clock passes it.
 */
export interface SettlementObject extends SandboxObject {
  id: string;
  object: 'sandbox_settlement';
  created: number;
  payment_intent: string;
  settles_at: number;
  test_clock: string | null;
  status: 'pending' | 'settled';
}

/** One fingerprint per sort code and account number, as on Stripe; the number itself is never kept. */
const fingerprintOf = (sortCode: string, accountNumber: string): string =>
  createHash('sha256').update(`bacs:${sortCode}:${accountNumber}`).digest('base64url').slice(0, 16);

export function bacsPaymentMethod(
  fields: {
    readonly sortCode: string;
    readonly accountNumber: string;
    readonly billing: BillingDetails;
    readonly customer: string | null;
    readonly metadata: Record<string, string>;
  },
  created: number,
): BacsPaymentMethodObject {
  return {
    id: newId('pm'),
    object: 'payment_method',
    allow_redisplay: 'unspecified',
    bacs_debit: {
      fingerprint: fingerprintOf(fields.sortCode, fields.accountNumber),
      last4: fields.accountNumber.slice(-4),
      sort_code: fields.sortCode,
    },
    billing_details: fields.billing,
    created,
    customer: fields.customer,
    livemode: false,
    metadata: fields.metadata,
    type: 'bacs_debit',
  };
}

export function bacsMandate(
  pm: BacsPaymentMethodObject,
  acceptance: MandateObject['customer_acceptance'],
): MandateObject {
  const id = newId('mandate');
  return {
    id,
    object: 'mandate',
    customer_acceptance: acceptance,
    livemode: false,
    multi_use: {},
    payment_method: pm.id,
    payment_method_details: {
      bacs_debit: {
        display_name: null,
        network_status: 'accepted',
        // NOTE: a Bacs reference is at most 18 characters, upper-case letters and digits.
        reference: `SANDBOX${randomId(10).toUpperCase()}`,
        revocation_reason: null,
        service_user_number: null,
        url: `https://sandbox.invalid/bacs_debit/mandates/${id}`,
      },
      type: 'bacs_debit',
    },
    status: 'active',
    type: 'multi_use',
  };
}
