import type Stripe from 'stripe';
import { AppError } from '../../platform/errors.ts';
import {
  IDEMPOTENCY_METADATA_KEY,
  type Customer,
  type Mandate,
  type PaymentIntent,
  type PaymentIntentStatus,
  type PaymentMethod,
  type SetupIntent,
} from './gateway.ts';
import { idOf } from './stripe-sdk.ts';

export function toIntent(pi: Stripe.PaymentIntent): PaymentIntent {
  const error = pi.last_payment_error;
  return {
    id: pi.id,
    status: pi.status as PaymentIntentStatus,
    amountPence: pi.amount,
    amountReceivedPence: pi.amount_received,
    currency: pi.currency,
    customerId: idOf(pi.customer),
    paymentMethodId: idOf(pi.payment_method),
    latestChargeId: idOf(pi.latest_charge),
    metadata: { ...pi.metadata },
    lastPaymentError:
      error === null
        ? null
        : {
            code: error.code ?? null,
            declineCode: error.decline_code ?? null,
            message: error.message ?? null,
          },
    idempotencyKey: pi.metadata[IDEMPOTENCY_METADATA_KEY] ?? null,
    clientSecret: pi.client_secret,
    // NOTE: an intent names the type of its payment method only through the types it allows; ours allow one.
    paymentMethodType: pi.payment_method_types.length === 1 ? (pi.payment_method_types[0] ?? null) : null,
  };
}

export function toPaymentMethod(pm: Stripe.PaymentMethod): PaymentMethod {
  return {
    id: pm.id,
    type: pm.type,
    brand: pm.card?.brand ?? null,
    last4: pm.card?.last4 ?? pm.bacs_debit?.last4 ?? null,
    expMonth: pm.card?.exp_month ?? null,
    expYear: pm.card?.exp_year ?? null,
    sortCode: pm.bacs_debit?.sort_code ?? null,
    holderName: pm.billing_details.name,
    customerId: idOf(pm.customer),
  };
}

export function toCustomer(customer: Stripe.Customer | Stripe.DeletedCustomer): Customer {
  if (customer.deleted === true) throw new AppError('NOT_FOUND', `customer ${customer.id} has been deleted`);
  return {
    id: customer.id,
    email: customer.email,
    name: customer.name ?? null,
    defaultPaymentMethodId: idOf(customer.invoice_settings.default_payment_method),
  };
}

const errorOf = (error: Stripe.SetupIntent.LastSetupError | Stripe.PaymentIntent.LastPaymentError | null) =>
  error === null
    ? null
    : { code: error.code ?? null, declineCode: error.decline_code ?? null, message: error.message ?? null };

export function toSetupIntent(si: Stripe.SetupIntent): SetupIntent {
  return {
    id: si.id,
    status: si.status as SetupIntent['status'],
    customerId: idOf(si.customer),
    paymentMethodId: idOf(si.payment_method),
    mandateId: idOf(si.mandate),
    metadata: { ...si.metadata },
    lastSetupError: errorOf(si.last_setup_error),
  };
}

const MANDATE_STATUSES = new Set(['active', 'inactive', 'pending']);
const NETWORK_STATUSES = new Set(['accepted', 'pending', 'refused', 'revoked']);

export function toMandate(mandate: Stripe.Mandate): Mandate {
  const bacs = mandate.payment_method_details.bacs_debit;
  const acceptedAt = mandate.customer_acceptance.accepted_at;
  const paymentMethodId = idOf(mandate.payment_method);
  if (paymentMethodId === null || !MANDATE_STATUSES.has(mandate.status))
    throw new AppError('UPSTREAM_UNAVAILABLE', `mandate ${mandate.id} came back malformed`);
  return {
    id: mandate.id,
    status: mandate.status as Mandate['status'],
    paymentMethodId,
    reference: bacs?.reference ?? null,
    networkStatus:
      bacs !== undefined && NETWORK_STATUSES.has(bacs.network_status)
        ? (bacs.network_status as Mandate['networkStatus'])
        : null,
    revocationReason: bacs?.revocation_reason ?? null,
    acceptedAt: acceptedAt === null ? null : new Date(acceptedAt * 1000),
  };
}
