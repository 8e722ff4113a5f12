/**
 * The payment gateway port: what the insurance side needs from a card processor, in our own terms.
 *
 * - Amounts are integer minor units (`amountPence`); currencies are lowercase ISO 4217 (`gbp`).
 * - Every write takes an `idempotencyKey` that the caller derives from its own ids
 *   (e.g. `statement:<uuid>:charge:<attempt>`), so a retried call can never act twice.
 * - Vendor failures are thrown as `AppError` with `retryable` set: `UPSTREAM_UNAVAILABLE` (network,
 *   timeouts, 5xx, rate limits: retryable), `PAYMENT_DECLINED`, `VALIDATION_FAILED`, `NOT_FOUND`,
 *   `CONFLICT` (an idempotency key reused with different parameters), `UNAUTHENTICATED` (a webhook
 *   signature that does not verify). Only `chargeOffSession` and `collectDirectDebit` report expected
 *   payment outcomes as values.
 * - Bacs Direct Debit: a SetupIntent collects the bank details and the mandate; a collection is an
 *   off-session PaymentIntent that stays `processing` for about three working days, and its outcome comes
 *   only by webhook (`payment_intent.succeeded` or `payment_intent.payment_failed`).
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

export interface ConfirmPaymentIntentInput {
  readonly paymentIntentId: string;
  readonly paymentMethodId: string;
  readonly idempotencyKey: string;
}

export interface CancelPaymentIntentInput {
  readonly paymentIntentId: string;
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
  /** For `chargeOffSession` and `collectDirectDebit` intents: the idempotency key that created it (kept in metadata). */
  readonly idempotencyKey: string | null;
  /** The kind of payment method it was confirmed with (`card`, `bacs_debit`), when known. */
  readonly paymentMethodType: string | null;
  /** What a browser confirms the intent with (3-D Secure on session); a secret: never logged or stored. */
  readonly clientSecret: string | null;
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

/** The kinds of payment method Milepost collects with. */
export type PaymentMethodType = 'card' | 'bacs_debit';

export interface PaymentMethod {
  readonly id: string;
  /** Another type than these (a processor's dashboard can make any) is `card`'s null fields and its own name. */
  readonly type: PaymentMethodType | (string & {});
  /** The card's brand (`visa`); null for a bank account. */
  readonly brand: string | null;
  /** The last four digits of the card number, or of the bank account number. */
  readonly last4: string | null;
  readonly expMonth: number | null;
  readonly expYear: number | null;
  /** `bacs_debit` only: the bank's six-digit sort code (`108800`). */
  readonly sortCode: string | null;
  /** The name on the account, as the payer gave it (`billing_details.name`). */
  readonly holderName: string | null;
  readonly customerId: string | null;
}

/** Stripe's SetupIntent statuses. */
export type SetupIntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'canceled'
  | 'succeeded';

export interface CreateBacsSetupIntentInput {
  readonly customerId: string;
  readonly metadata: PaymentMetadata;
  readonly idempotencyKey: string;
}

/** A SetupIntent the payer's browser confirms with `clientSecret`, its bank details and their acceptance of the mandate. */
export interface CreatedSetupIntent {
  readonly id: string;
  readonly clientSecret: string;
  readonly status: SetupIntentStatus;
  readonly customerId: string;
}

export interface SetupIntent {
  readonly id: string;
  readonly status: SetupIntentStatus;
  readonly customerId: string | null;
  /** The saved payment method once confirmed. */
  readonly paymentMethodId: string | null;
  /** The mandate the confirmation created (Bacs Direct Debit). */
  readonly mandateId: string | null;
  readonly metadata: PaymentMetadata;
  /** Why the last confirmation failed (e.g. `invalid_bank_account` …), if it did. */
  readonly lastSetupError: PaymentError | null;
}

/**
 * A Direct Debit mandate. `status` is the processor's view (`active`: may be debited); `networkStatus`
 * is the Bacs network's (`pending` until the bank has accepted the instruction, `refused`, `revoked`).
 */
export interface Mandate {
  readonly id: string;
  readonly status: 'active' | 'inactive' | 'pending';
  readonly paymentMethodId: string;
  /** The reference the payer sees on their bank statement and in their notices (Bacs: up to 18 characters). */
  readonly reference: string | null;
  readonly networkStatus: 'accepted' | 'pending' | 'refused' | 'revoked' | null;
  /** When revoked: `account_closed`, `bank_account_restricted`, `bank_ownership_changed`, `could_not_process`, `debit_not_authorized`. */
  readonly revocationReason: string | null;
  /** When the payer accepted it. */
  readonly acceptedAt: Date | null;
}

export interface CollectDirectDebitInput {
  readonly customerId: string;
  readonly paymentMethodId: string;
  readonly mandateId: string;
  readonly amountPence: number;
  readonly metadata: PaymentMetadata;
  readonly idempotencyKey: string;
}

/**
 * The outcome of asking for one Direct Debit collection.
 * - `processing`: submitted to Bacs; the money is not collected yet. `payment_intent.succeeded` or
 *   `payment_intent.payment_failed` (with Stripe's failure code) follows about three working days later.
 * - `succeeded`: already collected (not expected of Bacs, but final if a processor says so).
 * - `failed`: refused or failed at once; nothing was collected. `code` is Stripe's: a mandate that is
 *   no longer active (`payment_method_unexpected_state`, `debit_not_authorized`…), or a Bacs failure.
 * - `unknown`: may or may not have been submitted (timeout, 5xx, 409): never collect with a new key;
 *   call again with the SAME input and key, as for `chargeOffSession`.
 */
export type CollectionResult =
  | { readonly outcome: 'processing'; readonly intentId: string }
  | { readonly outcome: 'succeeded'; readonly intentId: string; readonly chargeId: string | null }
  | {
      readonly outcome: 'failed';
      readonly intentId?: string;
      readonly code: string;
      readonly message: string;
    }
  | { readonly outcome: 'unknown'; readonly intentId?: string; readonly message: string };

/**
 * Stripe's failure codes for a Bacs Direct Debit payment (`last_payment_error.code` of a
 * `payment_intent.payment_failed`), and whether the mandate survives them: after `insufficient_funds`
 * the same mandate may be debited again; after the others it is inactive and the payer must set up a
 * new one (or pay another way).
 */
export const BACS_FAILURE_CODES = {
  insufficient_funds: { mandateSurvives: true },
  debit_not_authorized: { mandateSurvives: false },
  account_closed: { mandateSurvives: false },
  bank_account_restricted: { mandateSurvives: false },
  bank_ownership_changed: { mandateSurvives: false },
  no_account: { mandateSurvives: false },
  charge_exceeds_source_limit: { mandateSurvives: true },
  charge_exceeds_weekly_limit: { mandateSurvives: true },
  generic_could_not_process: { mandateSurvives: true },
} as const satisfies Record<string, { mandateSurvives: boolean }>;

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

/**
 * A refund as a refund event reports it. Stripe's statuses move `pending` → `succeeded`, `failed` or
 * `canceled`, and a card refund may go on from `succeeded` to `failed` days later (the issuer could not
 * credit the card); `failed` and `canceled` are final.
 */
export interface RefundUpdate extends Refund {
  /** The charge's intent the refund is of. */
  readonly paymentIntentId: string | null;
  /**
   * Why it failed, in Stripe's words: `expired_or_canceled_card`, `lost_or_stolen_card`, `declined`,
   * `insufficient_funds`, `charge_for_pending_refund_disputed`, `merchant_request` or `unknown`.
   */
  readonly failureReason: string | null;
  readonly metadata: PaymentMetadata;
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
  | {
      readonly kind: 'refund';
      readonly id: string;
      /** `charge.refund.updated`, `refund.updated`, `refund.failed`, `refund.created`. */
      readonly type: string;
      readonly createdAt: Date;
      readonly refund: RefundUpdate;
    }
  | {
      readonly kind: 'setup_intent';
      readonly id: string;
      /** `setup_intent.succeeded`, `setup_intent.setup_failed`, … */
      readonly type: string;
      readonly createdAt: Date;
      readonly setupIntent: SetupIntent;
    }
  | {
      readonly kind: 'mandate';
      readonly id: string;
      /** `mandate.updated`: its status changed (e.g. to `inactive` when the bank cancelled it). */
      readonly type: string;
      readonly createdAt: Date;
      readonly mandate: Mandate;
    }
  | {
      readonly kind: 'dispute';
      readonly id: string;
      /**
       * `charge.dispute.created`, …: the payer's bank took a payment back (for a Direct Debit, an
       * indemnity claim under the Direct Debit Guarantee, which the payee cannot contest: `status: lost`).
       */
      readonly type: string;
      readonly createdAt: Date;
      readonly dispute: PaymentDispute;
    }
  | { readonly kind: 'other'; readonly id: string; readonly type: string; readonly createdAt: Date };

/** A payment the payer's bank took back, in whole or part. */
export interface PaymentDispute {
  readonly id: string;
  readonly chargeId: string | null;
  readonly paymentIntentId: string | null;
  readonly amountPence: number;
  /** Stripe's reason, e.g. `debit_not_authorized`, `fraudulent`. */
  readonly reason: string;
  /** `lost` once the money is gone for good; `needs_response`, `under_review`, `won`… for cards. */
  readonly status: string;
}

export interface PaymentGateway {
  createCustomer(input: CreateCustomerInput): Promise<Customer>;
  retrieveCustomer(customerId: string): Promise<Customer>;
  /** An intent for an on-session payment whose card is saved for later off-session charges. */
  createPaymentIntent(input: CreatePaymentIntentInput): Promise<CreatedPaymentIntent>;
  retrievePaymentIntent(paymentIntentId: string): Promise<PaymentIntent>;
  /**
   * Confirms an on-session intent with the customer's card, as the server-side confirmation of
   * Stripe's "finalize payments on the server" flow: `succeeded`, or `requires_action` when the issuer
   * wants 3-D Secure (the browser completes it with the client secret). A declined card throws
   * `PAYMENT_DECLINED`, and the intent goes back to `requires_payment_method` for another card.
   */
  confirmPaymentIntent(input: ConfirmPaymentIntentInput): Promise<PaymentIntent>;
  /**
   * Cancels an on-session intent nobody will pay (`abandoned`), so that its client secret can no
   * longer complete it: one waiting for a card, a confirmation or 3-D Secure. An intent in another
   * state (paid meanwhile) throws `VALIDATION_FAILED`, and the intent is as it was.
   */
  cancelPaymentIntent(input: CancelPaymentIntentInput): Promise<PaymentIntent>;
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
  /** Refunds part or all of a succeeded intent (card or Direct Debit); more than what remains is `VALIDATION_FAILED`. */
  refund(input: RefundInput): Promise<Refund>;
  /** A SetupIntent for a Bacs Direct Debit mandate, which the payer's browser confirms with its client secret. */
  createBacsSetupIntent(input: CreateBacsSetupIntentInput): Promise<CreatedSetupIntent>;
  retrieveSetupIntent(setupIntentId: string): Promise<SetupIntent>;
  retrieveMandate(mandateId: string): Promise<Mandate>;
  /**
   * Asks for one Direct Debit collection under an active mandate: an off-session PaymentIntent,
   * confirmed at once. Outcomes are values; see `CollectionResult`. Throws `AppError` only when the
   * request certainly did not run (as `chargeOffSession`).
   */
  collectDirectDebit(input: CollectDirectDebitInput): Promise<CollectionResult>;
  /**
   * Verifies a webhook delivery against the raw request body (exact bytes, not re-serialised JSON)
   * and its `Stripe-Signature` header; throws `AppError('UNAUTHENTICATED')` when it does not verify.
   */
  constructWebhookEvent(rawBody: string | Uint8Array, signatureHeader: string | undefined): PaymentEvent;
}

/** The metadata key under which `chargeOffSession` records its idempotency key, for reconciliation. */
export const IDEMPOTENCY_METADATA_KEY = 'milepost_idempotency_key';
