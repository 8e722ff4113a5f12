/** What each of Stripe's refund failure reasons means, for the staff who must pay the money back another way. */
const REFUND_FAILURES: Readonly<Record<string, string>> = {
  expired_or_canceled_card: 'the card has expired or been cancelled',
  lost_or_stolen_card: 'the card was reported lost or stolen',
  declined: 'the card issuer declined it',
  insufficient_funds: 'the account had too little to fund it',
  charge_for_pending_refund_disputed: 'the payment was disputed while the refund was pending',
  merchant_request: 'it was cancelled on our request',
  canceled: 'it was cancelled before it was sent',
};

/**
 * The message recorded on a refund that failed after it was sent, from the processor's
 * `failure_reason` (null or one not known here: the issuer gave none we know).
 */
export function refundFailureMessage(reason: string | null): string {
  const why =
    reason !== null && Object.hasOwn(REFUND_FAILURES, reason)
      ? REFUND_FAILURES[reason]
      : 'the card issuer gave no reason';
  return `The refund failed: ${why}. The amount was not returned and is owed to the policyholder still.`;
}
