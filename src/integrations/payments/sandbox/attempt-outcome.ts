import type { CardBehaviour, IntentStatus } from './objects.ts';

/** Why an attempt failed, in Stripe's words (`code`, `decline_code`, `message` of the card error). */
export interface AttemptFailure {
  readonly code: string;
  readonly declineCode: string;
  readonly message: string;
}

/**
 * Where one payment attempt takes a confirmable intent:
 * - `succeed`: a charge is made and the intent is `succeeded`;
 * - `require_action`: the intent waits in `requires_action` for the customer's 3-D Secure;
 * - `fail`: back to `requires_payment_method` with a card error; `charged` says whether the issuer saw
 *   (and declined) a charge, which is then kept as a failed charge.
 */
export type AttemptOutcome =
  | { readonly kind: 'succeed' }
  | { readonly kind: 'require_action' }
  | { readonly kind: 'fail'; readonly failure: AttemptFailure; readonly charged: boolean };

const AUTHENTICATION_REQUIRED: AttemptFailure = {
  code: 'authentication_required',
  declineCode: 'authentication_required',
  message: 'Your card was declined. This transaction requires authentication.',
};

/** The outcome of charging a card of this test `behaviour` to an intent in `intent`'s state. */
export function attemptOutcome(
  intent: { readonly status: IntentStatus; readonly paymentMethodId: string | null },
  paymentMethodId: string,
  behaviour: CardBehaviour,
  offSession: boolean,
): AttemptOutcome {
  // NOTE: a sandbox stand-in for 3-D Secure: confirming again an intent that is waiting for the
  // customer's authentication with the same card counts as the customer having authenticated.
  const authenticated =
    intent.status === 'requires_action' && intent.paymentMethodId === paymentMethodId && !offSession;
  if (behaviour.kind === 'succeed' || (behaviour.kind === 'authenticate' && authenticated))
    return { kind: 'succeed' };
  if (behaviour.kind === 'authenticate' && !offSession) return { kind: 'require_action' };
  // Off session, a card that needs authentication fails with no charge made.
  if (behaviour.kind === 'authenticate')
    return { kind: 'fail', failure: AUTHENTICATION_REQUIRED, charged: false };
  const { code, declineCode, message } = behaviour;
  return { kind: 'fail', failure: { code, declineCode, message }, charged: true };
}
