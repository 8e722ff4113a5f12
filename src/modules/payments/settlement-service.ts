import { inTransaction } from '../../platform/db/database.ts';
import { recordEvent } from '../../platform/events.ts';
import { toPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import type { PolicyChange, PolicyPaymentHooks } from '../policies/index.ts';
import { attemptCharge } from './charge-service.ts';
import { CURRENCY, eventBase, PROVIDER, SETTLE_QUEUE, type PaymentContext } from './payment-context.ts';
import { recordRefundSent, recordRefundSucceeded } from './attempt-repository.ts';
import {
  findPayment,
  findPaymentById,
  insertPayment,
  listPaymentsOfPolicy,
  lockPaymentById,
  updatePayment,
  type PaymentRecord,
} from './payment-repository.ts';
import {
  adjustmentAmountPence,
  cancellationAmountPence,
  inCoolingOff,
  remainingShare,
} from './rules/index.ts';

/**
 * In the change's transaction: the charge (adjustment) or refund (cancellation, or an adjustment down)
 * a policy change owes, recorded pending and settled by the SETTLE_QUEUE job after commit; what it is,
 * or undefined when nothing is owed or the policy pays elsewhere.
 */
export async function settleChange(
  ctx: PaymentContext,
  trx: Executor,
  tenant: Tenant,
  change: PolicyChange,
): ReturnType<PolicyPaymentHooks['settleChange']> {
  const now = ctx.clock.now();
  const term = {
    startSeconds: change.previous.policy.start_date,
    endSeconds: change.previous.policy.end_date,
  };
  const share = remainingShare(term, Math.floor(change.effectiveAt.getTime() / 1000));
  const ofPolicy = await listPaymentsOfPolicy(trx, tenant, change.policyId);
  const paid = ofPolicy.filter(
    (p) => p.kind === 'charge' && (p.status === 'succeeded' || p.status === 'refunded'),
  );
  // The card payment of the term changed (its renewal premium, else the new business one) is the
  // first one refunds go to, up to what it paid.
  const ofTerm = paid.filter(
    (p) =>
      (p.purpose === 'new_business' || p.purpose === 'renewal') &&
      p.policyVersionId !== null &&
      change.termVersionIds.includes(p.policyVersionId),
  );
  const original = ofTerm.at(-1) ?? paid.find((p) => p.purpose === 'new_business') ?? paid[0];
  if (original === undefined) return undefined; // a policy bound without card payments settles elsewhere
  // The adjustments charged on the term paid its premium too: a refund goes back to the term's
  // payment first, then to those charges, each up to what it has left to give.
  const adjustmentCharges = paid.filter(
    (p) =>
      p.purpose === 'adjustment' &&
      p.id !== original.id &&
      p.providerPaymentId !== null &&
      p.policyVersionId !== null &&
      change.termVersionIds.includes(p.policyVersionId),
  );
  // What each card payment can still take back: refunds recorded but not yet sent (their job has not
  // run, or the processor was down) count too, or two changes in a row would refund it twice over.
  const refundableOf = (charge: PaymentRecord): number => {
    const unsentRefundsPence = ofPolicy
      .filter(
        (p) =>
          p.kind === 'refund' &&
          p.refundOf === charge.id &&
          p.status === 'pending' &&
          p.providerPaymentId === null,
      )
      .reduce((sum, p) => sum + p.amountPence, 0);
    return Math.max(0, charge.amountPence - charge.refundedPence - unsentRefundsPence);
  };
  const sources = [original, ...adjustmentCharges].map((charge) => ({
    charge,
    refundablePence: refundableOf(charge),
  }));
  const refundablePence = sources.reduce((sum, s) => sum + s.refundablePence, 0);
  const before = change.previous.pricing;
  const after = change.next.pricing;
  const amountPence =
    change.paymentAmount !== undefined
      ? toPence(change.paymentAmount)
      : change.kind === 'adjustment'
        ? adjustmentAmountPence({
            oldUpfrontPence: toPence(before.upfront_premium),
            newUpfrontPence: toPence(after.upfront_premium),
            mtaFeePence: toPence(after.mta_fee ?? 0),
            share,
          })
        : cancellationAmountPence({
            upfrontPence: toPence(before.upfront_premium),
            cancelFeePence: toPence(before.cancel_fee ?? 0),
            adminFeePence: toPence(before.admin_fee ?? 0),
            share,
            refundablePence,
            coolingOff: inCoolingOff(
              { concludedAt: change.concludedAt, startAt: new Date(term.startSeconds * 1000) },
              now,
            ),
          });
  // Adjustments: positive charges. Cancellations: positive refunds (it is what is owed back).
  const refund = change.kind === 'adjustment' ? amountPence < 0 : amountPence > 0;
  const magnitude = Math.abs(amountPence);
  if (magnitude === 0) return undefined;
  const settledPence = refund ? Math.min(magnitude, refundablePence) : magnitude;
  if (settledPence === 0) return undefined;
  const record = async (kind: 'refund' | 'charge', pence: number, refundOf: PaymentRecord | null) => {
    const payment = await insertPayment(trx, tenant, {
      policyId: change.policyId,
      policyVersionId: change.policyVersionId,
      kind,
      purpose: change.kind,
      status: 'pending',
      amountPence: pence,
      currency: CURRENCY,
      provider: PROVIDER,
      providerCustomerId: original.providerCustomerId,
      refundOf: refundOf?.id ?? null,
      at: now,
    });
    await ctx.jobs.enqueue(trx, SETTLE_QUEUE, { paymentId: payment.id });
  };
  if (!refund) await record('charge', settledPence, null);
  else {
    let left = settledPence;
    for (const source of sources) {
      const pence = Math.min(left, source.refundablePence);
      if (pence > 0) await record('refund', pence, source.charge);
      left -= pence;
    }
  }
  return { kind: refund ? ('refund' as const) : ('charge' as const), amountPence: settledPence };
}

/** Refunds `payment` (a refund record) against the card payment it names (`refundOf`). */
export async function executeRefund(ctx: PaymentContext, payment: PaymentRecord): Promise<void> {
  const { db } = ctx;
  const tenant = asTenant(payment.companyId, payment.environment as DataEnvironment);
  const now = ctx.clock.now();
  const original = payment.refundOf === null ? undefined : await findPayment(db, tenant, payment.refundOf);
  if (original?.providerPaymentId == null) {
    await updatePayment(
      db,
      payment.id,
      { status: 'failed', errorMessage: 'No original card payment to refund' },
      now,
    );
    return;
  }
  const refund = await (
    await ctx.gateway(tenant)
  ).refund({
    paymentIntentId: original.providerPaymentId,
    amountPence: payment.amountPence,
    metadata: { milepost_payment: payment.id },
    idempotencyKey: `payment:${payment.id}:refund`,
  });
  const status = refund.status === 'succeeded' ? 'succeeded' : 'pending';
  await inTransaction(db, async (trx) => {
    const first = await recordRefundSent(
      trx,
      payment.id,
      {
        status,
        providerPaymentId: refund.id,
        paymentMethodId: original.paymentMethodId,
        attempts: payment.attempts + 1,
      },
      now,
    );
    // Asked again (the same idempotency key, so the same refund): it is in the refunded total and
    // announced already; a refund still pending may have succeeded since. Only that: the processor
    // replays its first answer, which must not undo a failure its webhook has reported meanwhile.
    if (!first) {
      if (status === 'succeeded') await recordRefundSucceeded(trx, payment.id, refund.id, now);
      return;
    }
    // Read again under its lock, not as it stood before the processor was asked: another refund of
    // the same payment (its job in another worker) may have been added meanwhile, and both count.
    const current = (await lockPaymentById(trx, original.id)) ?? original;
    const refunded = current.refundedPence + payment.amountPence;
    await updatePayment(
      trx,
      original.id,
      {
        refundedPence: refunded,
        ...(refunded >= original.amountPence ? { status: 'refunded' as const } : {}),
      },
      now,
    );
    await recordEvent(
      trx,
      { companyId: payment.companyId, environment: payment.environment },
      'payment.refunded',
      { ...(await eventBase(trx, payment)), refund_of: original.id },
      now,
    );
  });
}

/** The job behind adjustment and cancellation amounts, after their transaction commits. */
export async function settle(ctx: PaymentContext, paymentId: string): Promise<void> {
  const payment = await findPaymentById(ctx.db, paymentId);
  if (payment?.status !== 'pending') return;
  if (payment.kind === 'refund') await executeRefund(ctx, payment);
  else await attemptCharge(ctx, payment, payment.attempts + 1);
}
