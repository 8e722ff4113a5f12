import { money, type EngineContext, type RequestInfo } from './engine-context.ts';
import { invalidRequest } from './errors.ts';
import { mergeMetadata, readParams, type FormObject } from './form.ts';
import { newId, type ChargeObject, type RefundObject } from './objects.ts';

/** Refunds part or all of a succeeded charge (named, or its intent's latest) and emits `charge.refunded`. */
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
      status: 'succeeded',
      transfer_reversal: null,
    };
    await ctx.store.put(refund);
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
