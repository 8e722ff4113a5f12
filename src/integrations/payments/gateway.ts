/**
 * The payment gateway port: what the insurance side needs from a card processor, in our own terms.
 *
 * - Amounts are integer minor units (`amountPence`); currencies are lowercase ISO 4217 (`gbp`).
 * - Every write takes an `idempotencyKey` that the caller derives from its own ids
 *   (e.g. `statement:<uuid>:charge:<attempt>`), so a retried call can never act twice.
 * - Vendor failures are thrown as `AppError` with `retryable` set: `UPSTREAM_UNAVAILABLE` (network,
 *   timeouts, 5xx, rate limits: retryable), `PAYMENT_DECLINED`, `VALIDATION_FAILED`, `NOT_FOUND`,
 *   `CONFLICT` (an idempotency key reused with different parameters), `UNAUTHENTICATED` (a webhook
 *   signature that does not verify). Only `chargeOffSession` reports expected card outcomes as values.
 */

/** Stripe's PaymentIntent statuses. */
export type PaymentIntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'requires_capture'
  | 'canceled'
  | 'succeeded';

/** Metadata travels with the processor's object: string keys (≤ 40 chars) and string values (≤ 500 chars). */
export type PaymentMetadata = Readonly<Record<string, string>>;

export interface CreateCustomerInput {
  readonly email: string;
  readonly name: string;
  readonly metadata?: PaymentMetadata;
  readonly idempotencyKey: string;
}

export interface Customer {
  readonly id: string;
  readonly email: string | null;
  readonly name: string | null;
  readonly defaultPaymentMethodId: string | null;
}

export interface CreatePaymentIntentInput {
  readonly amountPence: number;
  readonly currency: string;
  readonly customerId: string;
  readonly metadata: PaymentMetadata;
  readonly idempotencyKey: string;
}

/** An on-session intent: the client confirms it with `clientSecret` and a card; the card is saved for off-session use. */
export interface CreatedPaymentIntent {
  readonly id: string;
  readonly clientSecret: string;
  readonly status: PaymentIntentStatus;
  readonly amountPence: number;
  readonly customerId: string;
}

export interface PaymentError {
  /** Stripe's error code, e.g. `card_declined`, `expired_card`, `authentication_required`. */
  readonly code: string | null;
  /** The issuer's reason, e.g. `insufficient_funds`, `generic_decline`. */
  readonly declineCode: string | null;
  readonly message: string | null;
}

export interface PaymentIntent {
  readonly id: string;
  readonly status: PaymentIntentStatus;
  readonly amountPence: number;
  /** What was actually collected: equals `amountPence` once succeeded. */
  readonly amountReceivedPence: number;
  readonly currency: string;
  readonly customerId: string | null;
  readonly paymentMethodId: string | null;
  readonly latestChargeId: string | null;
  readonly metadata: PaymentMetadata;
  /** The last failed attempt, if the intent went back to `requires_payment_method`. */
  readonly lastPaymentError: PaymentError | null;
  /** For `chargeOffSession` intents: the idempotency key that created it (kept in metadata). */
  readonly idempotencyKey: string | null;
}

export interface ChargeOffSessionInput {
  readonly customerId: string;
  readonly paymentMethodId: string;
  readonly amountPence: number;
  readonly currency: string;
  readonly metadata: PaymentMetadata;
  readonly idempotencyKey: string;
}

/**
 * The outcome of one off-session charge attempt.
 * - `succeeded`: the money is collected.
 * - `declined`: the issuer (or the processor) refused; nothing was collected. Retry later with a new
 *   attempt key only as dunning allows, or ask the customer for another card.
 * - `authentication_required`: the issuer wants 3-D Secure; bring the customer back on session to
 *   confirm `intentId` with `clientSecret`. Nothing was collected.
 * - `unknown`: the request timed out, the connection failed, or the processor answered 5xx/409, so it
 *   may or may not have charged. The caller must NOT charge with a new key. Reconcile by calling
 *   `chargeOffSession` again with the SAME input and idempotency key (the processor replays the first
 *   result, or answers `unknown` again while the first is still in flight, or runs it once if it never
 *   arrived), or, after the key's 24 h lifetime, with `findPaymentIntentByKey`.
 */
export type ChargeResult =
  | { readonly outcome: 'succeeded'; readonly intentId: string; readonly chargeId: string | null }
  | {
      readonly outcome: 'declined';
      readonly intentId?: string;
      readonly code: string;
      readonly declineCode: string;
      readonly message: string;
    }
  | {
      readonly outcome: 'authentication_required';
      readonly intentId: string;
      readonly clientSecret: string | null;
      readonly paymentMethodId: string | null;
      readonly message: string;
    }
  | { readonly outcome: 'unknown'; readonly intentId?: string; readonly message: string };

export interface AttachPaymentMethodInput {
  /** A `pm_…` id from the client, or (in test mode) a test token such as `pm_card_visa`. */
  readonly paymentMethodId: string;
  readonly customerId: string;
  readonly idempotencyKey: string;
}

export interface PaymentMethod {
  readonly id: string;
  readonly brand: string | null;
  readonly last4: string | null;
  readonly expMonth: number | null;
  readonly expYear: number | null;
  readonly customerId: string | null;
}

export interface RefundInput {
  readonly paymentIntentId: string;
  /** Omitted: refund everything not yet refunded. */
  readonly amountPence?: number;
  readonly metadata?: PaymentMetadata;
  readonly idempotencyKey: string;
}

export type RefundStatus = 'pending' | 'requires_action' | 'succeeded' | 'failed' | 'canceled';

export interface Refund {
  readonly id: string;
  readonly status: RefundStatus;
  readonly amountPence: number;
}

/** A webhook event from the processor, verified and reduced to what we act on. */
export type PaymentEvent =
  | {
      readonly kind: 'payment_intent';
      readonly id: string;
      /** `payment_intent.succeeded`, `payment_intent.payment_failed`, … */
      readonly type: string;
      readonly createdAt: Date;
      readonly paymentIntent: PaymentIntent;
    }
  | {
      readonly kind: 'charge';
      readonly id: string;
      /** `charge.refunded`, … */
      readonly type: string;
      readonly createdAt: Date;
      readonly charge: {
        readonly id: string;
        readonly paymentIntentId: string | null;
        readonly amountPence: number;
        readonly amountRefundedPence: number;
        readonly refunded: boolean;
        readonly metadata: PaymentMetadata;
      };
    }
  | { readonly kind: 'other'; readonly id: string; readonly type: string; readonly createdAt: Date };

export interface PaymentGateway {
  createCustomer(input: CreateCustomerInput): Promise<Customer>;
  retrieveCustomer(customerId: string): Promise<Customer>;
  /** An intent for an on-session payment whose card is saved for later off-session charges. */
  createPaymentIntent(input: CreatePaymentIntentInput): Promise<CreatedPaymentIntent>;
  retrievePaymentIntent(paymentIntentId: string): Promise<PaymentIntent>;
  /**
   * Finds the intent that `chargeOffSession` created with this idempotency key (kept in its metadata),
   * through the processor's search. Search is eventually consistent (Stripe: usually under a minute),
   * so `undefined` shortly after an `unknown` outcome does not prove that nothing was charged:
   * replaying the charge with the same key is the reconciliation that is always safe.
   */
  findPaymentIntentByKey(idempotencyKey: string): Promise<PaymentIntent | undefined>;
  /**
   * Charges a saved card with the customer absent. Card outcomes are values; see `ChargeResult`.
   * Throws `AppError` only when the request certainly did not run: rate limited (`UPSTREAM_UNAVAILABLE`,
   * retryable: try again with the same key), or refused for its input (`VALIDATION_FAILED`, `NOT_FOUND`,
   * `CONFLICT` for a key reused with other input; not retryable).
   */
  chargeOffSession(input: ChargeOffSessionInput): Promise<ChargeResult>;
  attachPaymentMethod(input: AttachPaymentMethodInput): Promise<PaymentMethod>;
  /** Sets the customer's default card (invoice_settings.default_payment_method). Naturally idempotent. */
  setDefaultPaymentMethod(customerId: string, paymentMethodId: string): Promise<void>;
  retrievePaymentMethod(paymentMethodId: string): Promise<PaymentMethod>;
  /** Refunds part or all of a succeeded intent; more than what remains is `VALIDATION_FAILED`. */
  refund(input: RefundInput): Promise<Refund>;
  /**
   * Verifies a webhook delivery against the raw request body (exact bytes, not re-serialised JSON)
   * and its `Stripe-Signature` header; throws `AppError('UNAUTHENTICATED')` when it does not verify.
   */
  constructWebhookEvent(rawBody: string | Uint8Array, signatureHeader: string | undefined): PaymentEvent;
}

/** The metadata key under which `chargeOffSession` records its idempotency key, for reconciliation. */
export const IDEMPOTENCY_METADATA_KEY = 'milepost_idempotency_key';
