import { money, type EngineContext, type RequestInfo } from './engine-context.ts';
import { invalidRequest } from './errors.ts';
import { mergeMetadata, readParams, type FormObject } from './form.ts';
import {
  newId,
  refundBehaviourOfLast4,
  type ChargeObject,
  type RefundObject,
  type RefundOutcomeObject,
} from './objects.ts';

/** What the sandbox does on its own: events with no request, as Stripe reports them. */
const NO_REQUEST: RequestInfo = { id: null, idempotencyKey: null };

/**
 * How long after it is made a refund to one of Stripe's refund test cards settles: none, so that the
 * next settlement sweep (every minute in the service) or `settle_due_refunds` settles it.
 */
const REFUND_OUTCOME_AFTER_SECONDS = 0;

/**
 * Refunds part or all of a succeeded charge (named, or its intent's latest) and emits `charge.refunded`.
 * A refund to a card of Stripe's refund test cards settles later, as on Stripe: `pm_card_refundFail`'s
 * answers `succeeded` and then fails (`expired_or_canceled_card`), `pm_card_pendingRefund`'s answers
 * `pending` and then succeeds (see `settleDueRefunds`).
 */
export async function createRefund(
  ctx: EngineContext,
  params: FormObject,
  request: RequestInfo,
): Promise<RefundObject> {
  const p = readParams(params, ['payment_intent', 'charge', 'amount', 'metadata', 'reason']);
  const intentId = p.string('payment_intent');
  const chargeId = p.string('charge');
  if (intentId === undefined && chargeId === undefined) {
    throw invalidRequest(
      'One of the following params should be provided for this request: payment_intent or charge.',
      { code: 'parameter_missing' },
    );
  }
  const reason = p.string('reason');
  if (reason !== undefined && !['duplicate', 'fraudulent', 'requested_by_customer'].includes(reason)) {
    throw invalidRequest('Invalid reason: must be one of duplicate, fraudulent, or requested_by_customer', {
      param: 'reason',
    });
  }
  const requestedAmount = p.integer('amount');
  if (requestedAmount !== undefined && requestedAmount <= 0) {
    throw invalidRequest('Invalid positive integer', {
      param: 'amount',
      code: 'parameter_invalid_integer',
    });
  }
  const metadata = mergeMetadata({}, p.metadata());

  let target = chargeId;
  if (intentId !== undefined) {
    const intent = await ctx.loadIntent(intentId, 'payment_intent');
    if (intent.status !== 'succeeded' || intent.latest_charge === null) {
      throw invalidRequest(`This PaymentIntent (${intent.id}) does not have a successful charge to refund.`, {
        param: 'payment_intent',
        code: 'charge_not_refundable',
      });
    }
    if (chargeId !== undefined && chargeId !== intent.latest_charge) {
      throw invalidRequest(`Charge ${chargeId} does not belong to PaymentIntent ${intent.id}.`, {
        param: 'charge',
      });
    }
    target = intent.latest_charge;
  }
  const chargeToRefund = target ?? '';
  return ctx.withLock(chargeToRefund, async () => {
    const charge = await ctx.loadCharge(chargeToRefund);
    if (charge.disputed)
      throw invalidRequest(`Charge ${charge.id} has been disputed and cannot be refunded.`, {
        code: 'charge_disputed',
      });
    if (charge.status !== 'succeeded')
      throw invalidRequest(`Charge ${charge.id} did not succeed and cannot be refunded.`, {
        code: 'charge_not_refundable',
      });
    const remaining = charge.amount - charge.amount_refunded;
    if (remaining <= 0)
      throw invalidRequest(`Charge ${charge.id} has already been refunded.`, {
        code: 'charge_already_refunded',
      });
    const amount = requestedAmount ?? remaining;
    const details = charge.payment_method_details;
    const later =
      details.type === 'card' ? refundBehaviourOfLast4(String(details.card['last4'])) : 'succeeds';
    if (amount > remaining) {
      throw invalidRequest(
        `Refund amount (${money(amount, charge.currency)}) is greater than unrefunded amount on charge (${money(remaining, charge.currency)})`,
        { param: 'amount', code: 'amount_too_large' },
      );
    }
    const refund: RefundObject = {
      id: newId('re'),
      object: 'refund',
      amount,
      balance_transaction: newId('txn'),
      charge: charge.id,
      created: ctx.now(),
      currency: charge.currency,
      // NOTE: a Direct Debit is refunded by a credit to the payer's bank account, not to a card.
      destination_details:
        charge.payment_method_details.type === 'bacs_debit'
          ? { gb_bank_transfer: { reference: null, reference_status: 'pending' }, type: 'gb_bank_transfer' }
          : {
              card: {
                reference_status: 'pending',
                reference_type: 'acquirer_reference_number',
                type: 'refund',
              },
              type: 'card',
            },
      metadata,
      payment_intent: charge.payment_intent,
      reason: reason ?? null,
      receipt_number: null,
      source_transfer_reversal: null,
      status: later === 'succeeds_later' ? 'pending' : 'succeeded',
      transfer_reversal: null,
    };
    await ctx.store.put(refund);
    if (later !== 'succeeds') {
      const outcome: RefundOutcomeObject = {
        id: newId('sbxrefund'),
        object: 'sandbox_refund_outcome',
        created: ctx.now(),
        refund: refund.id,
        outcome: later === 'fails_later' ? 'failed' : 'succeeded',
        settles_at: ctx.now() + REFUND_OUTCOME_AFTER_SECONDS,
        status: 'pending',
      };
      await ctx.store.put(outcome);
    }
    const refunded: ChargeObject = {
      ...charge,
      amount_refunded: charge.amount_refunded + amount,
      refunded: charge.amount_refunded + amount === charge.amount,
    };
    await ctx.store.put(refunded);
    await ctx.emit('charge.refunded', refunded, request);
    return refund;
  });
}

/**
 * Settles the account's refunds whose outcome is due by `until` (Unix seconds), oldest first: a refund
 * that fails goes from `succeeded` to `failed` with `failure_reason: expired_or_canceled_card`, and its
 * amount is no longer refunded on the charge (so it can be refunded again); one that succeeds goes from
 * `pending` to `succeeded`. Each change emits `charge.refund.updated` and `refund.updated`, and a failure
 * `refund.failed` too, as Stripe does. Answers the refunds settled.
 */
export async function settleDueRefunds(ctx: EngineContext, until: number): Promise<RefundObject[]> {
  const pending = (await ctx.store.find(
    'sandbox_refund_outcome',
    { status: 'pending' },
    10_000,
  )) as RefundOutcomeObject[];
  const due = pending.filter((o) => o.settles_at <= until).sort((a, b) => a.settles_at - b.settles_at);
  const settled: RefundObject[] = [];
  for (const outcome of due) {
    const refund = await ctx.load<RefundObject>(outcome.refund, 'refund', 'refund');
    const changed = await ctx.withLock(refund.charge, () => settleRefund(ctx, outcome.id));
    if (changed !== undefined) settled.push(changed);
  }
  return settled;
}

async function settleRefund(ctx: EngineContext, outcomeId: string): Promise<RefundObject | undefined> {
  const outcome = await ctx.load<RefundOutcomeObject>(outcomeId, 'sandbox_refund_outcome', 'refund outcome');
  if (outcome.status !== 'pending') return undefined;
  await ctx.store.put({ ...outcome, status: 'settled' });
  const refund = await ctx.load<RefundObject>(outcome.refund, 'refund', 'refund');
  if (refund.status === 'failed') return undefined;
  if (outcome.outcome === 'succeeded') {
    const succeeded: RefundObject = { ...refund, status: 'succeeded' };
    await ctx.store.put(succeeded);
    await ctx.emit('charge.refund.updated', succeeded, NO_REQUEST);
    await ctx.emit('refund.updated', succeeded, NO_REQUEST);
    return succeeded;
  }
  const failed: RefundObject = {
    ...refund,
    status: 'failed',
    failure_reason: 'expired_or_canceled_card',
    failure_balance_transaction: newId('txn'),
  };
  await ctx.store.put(failed);
  // The card never took the money: the charge has that much less refunded, and may be refunded again.
  const charge = await ctx.loadCharge(refund.charge);
  const amountRefunded = Math.max(0, charge.amount_refunded - refund.amount);
  await ctx.store.put({
    ...charge,
    amount_refunded: amountRefunded,
    refunded: amountRefunded === charge.amount,
  });
  await ctx.emit('charge.refund.updated', failed, NO_REQUEST);
  await ctx.emit('refund.updated', failed, NO_REQUEST);
  await ctx.emit('refund.failed', failed, NO_REQUEST);
  return failed;
}
