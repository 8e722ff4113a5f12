import { randomBytes } from 'node:crypto';
import type { SandboxObject } from './store.ts';

/** The API version the sandbox speaks: the one `stripe` 23.1.0 pins. */
export const SANDBOX_API_VERSION = '2026-10-28.endive';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random base62 text, as in Stripe's ids (`pi_3Q…`). */
export function randomId(length = 24): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (const byte of bytes) {
    // 248 = 62 × 4: rejecting the rest keeps the characters uniform.
    if (byte < 248) out += ALPHABET[byte % 62] ?? '0';
    if (out.length === length) return out;
  }
  return out.padEnd(length, '0');
}

export const newId = (prefix: string): string => `${prefix}_${randomId()}`;

/** What a test card does when charged. */
export type CardBehaviour =
  | { readonly kind: 'succeed' }
  | {
      readonly kind: 'decline';
      readonly code: string;
      readonly declineCode: string;
      readonly message: string;
    }
  | { readonly kind: 'authenticate' };

/**
 * What becomes of a refund to a test card: most succeed at once; Stripe's refund test cards answer
 * `succeeded` and fail later (`fails_later`, with `expired_or_canceled_card`), or answer `pending` and
 * succeed later (`succeeds_later`).
 */
export type RefundBehaviour = 'succeeds' | 'fails_later' | 'succeeds_later';

export interface TestCard {
  /** The number a browser types for it (`POST /v1/payment_methods` with `card[number]`). */
  readonly number: string;
  readonly brand: string;
  readonly last4: string;
  readonly funding: 'credit' | 'debit';
  readonly country: string;
  readonly behaviour: CardBehaviour;
  /** Absent: `succeeds`. */
  readonly refund?: RefundBehaviour;
}

const DECLINED = 'Your card was declined.';

/** Stripe's documented test payment methods (docs.stripe.com/testing). */
export const TEST_CARDS: Readonly<Record<string, TestCard>> = {
  pm_card_visa: {
    number: '4242424242424242',
    brand: 'visa',
    last4: '4242',
    funding: 'credit',
    country: 'US',
    behaviour: { kind: 'succeed' },
  },
  pm_card_mastercard: {
    number: '5555555555554444',
    brand: 'mastercard',
    last4: '4444',
    funding: 'credit',
    country: 'US',
    behaviour: { kind: 'succeed' },
  },
  pm_card_chargeDeclined: {
    number: '4000000000000002',
    brand: 'visa',
    last4: '0002',
    funding: 'credit',
    country: 'US',
    behaviour: { kind: 'decline', code: 'card_declined', declineCode: 'generic_decline', message: DECLINED },
  },
  pm_card_chargeDeclinedExpiredCard: {
    number: '4000000000000069',
    brand: 'visa',
    last4: '0069',
    funding: 'credit',
    country: 'US',
    behaviour: {
      kind: 'decline',
      code: 'expired_card',
      declineCode: 'expired_card',
      message: 'Your card has expired.',
    },
  },
  pm_card_chargeDeclinedInsufficientFunds: {
    number: '4000000000009995',
    brand: 'visa',
    last4: '9995',
    funding: 'credit',
    country: 'US',
    behaviour: {
      kind: 'decline',
      code: 'card_declined',
      declineCode: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    },
  },
  pm_card_refundFail: {
    number: '4000000000005126',
    brand: 'visa',
    last4: '5126',
    funding: 'credit',
    country: 'US',
    behaviour: { kind: 'succeed' },
    refund: 'fails_later',
  },
  pm_card_pendingRefund: {
    number: '4000000000007726',
    brand: 'visa',
    last4: '7726',
    funding: 'credit',
    country: 'US',
    behaviour: { kind: 'succeed' },
    refund: 'succeeds_later',
  },
  pm_card_authenticationRequired: {
    number: '4000002760003184',
    brand: 'visa',
    last4: '3184',
    funding: 'credit',
    country: 'FR',
    behaviour: { kind: 'authenticate' },
  },
};

/** A materialised card keeps its test behaviour through its last four digits (each test card has its own). */
export function behaviourOfLast4(last4: string): CardBehaviour {
  return Object.values(TEST_CARDS).find((c) => c.last4 === last4)?.behaviour ?? { kind: 'succeed' };
}

/** What becomes of a refund to a card with these last four digits (see `RefundBehaviour`). */
export function refundBehaviourOfLast4(last4: string): RefundBehaviour {
  return Object.values(TEST_CARDS).find((c) => c.last4 === last4)?.refund ?? 'succeeds';
}

export const TEST_CARD_EXP_MONTH = 12;
export const TEST_CARD_EXP_YEAR = 2034;

export interface Card {
  brand: string;
  checks: { address_line1_check: null; address_postal_code_check: null; cvc_check: 'pass' | null };
  country: string;
  display_brand: string;
  exp_month: number;
  exp_year: number;
  fingerprint: string;
  funding: string;
  generated_from: null;
  last4: string;
  networks: { available: string[]; preferred: null };
  regulated_status: 'unregulated';
  three_d_secure_usage: { supported: true };
  wallet: null;
}

export interface PaymentMethodObject extends SandboxObject {
  id: string;
  object: 'payment_method';
  allow_redisplay: 'unspecified';
  billing_details: { address: Record<string, null>; email: null; name: null; phone: null; tax_id: null };
  card: Card;
  created: number;
  customer: string | null;
  livemode: false;
  metadata: Record<string, string>;
  type: 'card';
}

export interface CustomerObject extends SandboxObject {
  id: string;
  object: 'customer';
  address: null;
  balance: number;
  created: number;
  currency: string | null;
  default_source: null;
  delinquent: boolean;
  description: string | null;
  email: string | null;
  invoice_prefix: string;
  invoice_settings: {
    custom_fields: null;
    default_payment_method: string | null;
    footer: null;
    rendering_options: null;
  };
  livemode: false;
  metadata: Record<string, string>;
  name: string | null;
  next_invoice_sequence: number;
  phone: string | null;
  preferred_locales: string[];
  shipping: null;
  tax_exempt: 'none';
  test_clock: string | null;
}

export interface LastPaymentError {
  type: 'card_error';
  code: string;
  decline_code: string;
  doc_url: string;
  message: string;
  charge?: string;
  payment_method: PaymentMethodObject;
}

export type IntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'succeeded'
  | 'canceled';

export interface PaymentIntentObject extends SandboxObject {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_capturable: number;
  amount_details: { tip: Record<string, never> };
  amount_received: number;
  application: null;
  application_fee_amount: null;
  automatic_payment_methods: null;
  /** Once canceled: when (UNIX seconds) and why (`abandoned`, `requested_by_customer`, …). */
  canceled_at: number | null;
  cancellation_reason: string | null;
  capture_method: 'automatic';
  client_secret: string;
  confirmation_method: 'automatic';
  created: number;
  currency: string;
  customer: string | null;
  description: string | null;
  excluded_payment_method_types: null;
  last_payment_error: LastPaymentError | null;
  latest_charge: string | null;
  livemode: false;
  metadata: Record<string, string>;
  next_action: Record<string, unknown> | null;
  on_behalf_of: null;
  payment_method: string | null;
  payment_method_configuration_details: null;
  payment_method_options: {
    card?: { installments: null; mandate_options: null; network: null; request_three_d_secure: 'automatic' };
    bacs_debit?: { mandate_options: Record<string, never> };
  };
  payment_method_types: string[];
  processing: null;
  receipt_email: string | null;
  review: null;
  setup_future_usage: 'off_session' | 'on_session' | null;
  shipping: null;
  source: null;
  statement_descriptor: string | null;
  statement_descriptor_suffix: string | null;
  status: IntentStatus;
  transfer_data: null;
  transfer_group: null;
}

export interface ChargeObject extends SandboxObject {
  id: string;
  object: 'charge';
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  balance_transaction: string | null;
  billing_details: PaymentMethodObject['billing_details'];
  captured: boolean;
  created: number;
  currency: string;
  customer: string | null;
  description: string | null;
  disputed: boolean;
  failure_code: string | null;
  failure_message: string | null;
  livemode: false;
  metadata: Record<string, string>;
  outcome: Record<string, unknown>;
  paid: boolean;
  payment_intent: string;
  payment_method: string;
  payment_method_details:
    | { card: Record<string, unknown>; type: 'card' }
    | { bacs_debit: Record<string, unknown>; type: 'bacs_debit' };
  receipt_url: null;
  refunded: boolean;
  status: 'succeeded' | 'failed' | 'pending';
}

export interface RefundObject extends SandboxObject {
  id: string;
  object: 'refund';
  amount: number;
  balance_transaction: string | null;
  charge: string;
  created: number;
  currency: string;
  destination_details:
    | {
        card: { reference_status: 'pending'; reference_type: 'acquirer_reference_number'; type: 'refund' };
        type: 'card';
      }
    | { gb_bank_transfer: { reference: null; reference_status: 'pending' }; type: 'gb_bank_transfer' };
  metadata: Record<string, string>;
  payment_intent: string;
  reason: string | null;
  receipt_number: null;
  source_transfer_reversal: null;
  status: 'pending' | 'succeeded' | 'failed';
  /** Once failed: Stripe's reason (`expired_or_canceled_card`, …) and the balance transaction giving it back. */
  failure_reason?: string;
  failure_balance_transaction?: string;
  transfer_reversal: null;
}

/**
 * The sandbox's own record (never served) of what becomes of a refund later, and when: settled by the
 * settlement sweep or `settle_due_refunds`, as Stripe's refund test cards settle some time after.
 */
export interface RefundOutcomeObject extends SandboxObject {
  id: string;
  object: 'sandbox_refund_outcome';
  created: number;
  refund: string;
  outcome: 'failed' | 'succeeded';
  /** Unix seconds. */
  settles_at: number;
  status: 'pending' | 'settled';
}

export interface EventObject extends SandboxObject {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: SandboxObject };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

/** A card's payment method: the test card's brand and behaviour, with the expiry typed in when there was one. */
export function paymentMethodFromTestCard(
  card: TestCard,
  created: number,
  customer: string | null,
  typed?: { readonly expMonth: number; readonly expYear: number; readonly cvcGiven: boolean },
): PaymentMethodObject {
  return {
    id: newId('pm'),
    object: 'payment_method',
    allow_redisplay: 'unspecified',
    billing_details: {
      address: { city: null, country: null, line1: null, line2: null, postal_code: null, state: null },
      email: null,
      name: null,
      phone: null,
      tax_id: null,
    },
    card: {
      brand: card.brand,
      checks: {
        address_line1_check: null,
        address_postal_code_check: null,
        cvc_check: typed === undefined || typed.cvcGiven ? 'pass' : null,
      },
      country: card.country,
      display_brand: card.brand,
      exp_month: typed?.expMonth ?? TEST_CARD_EXP_MONTH,
      exp_year: typed?.expYear ?? TEST_CARD_EXP_YEAR,
      // One fingerprint per card number, as on Stripe.
      fingerprint: `fp${card.brand}${card.last4}`.padEnd(16, 'x').slice(0, 16),
      funding: card.funding,
      generated_from: null,
      last4: card.last4,
      networks: { available: [card.brand], preferred: null },
      regulated_status: 'unregulated',
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created,
    customer,
    livemode: false,
    metadata: {},
    type: 'card',
  };
}

export const docUrl = (code: string): string =>
  `https://docs.stripe.com/error-codes/${code.replaceAll('_', '-')}`;
