import { mapConcurrent } from '../../platform/concurrency.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { londonDate } from '../../platform/london-calendar.ts';
import { addWorkingDays } from '../../platform/working-days.ts';
import { asTenant, type DataEnvironment } from '../companies/index.ts';
import { listStuckCollections } from './collection-repository.ts';
import type { PaymentContext } from './payment-context.ts';
import type { PaymentRecord } from './payment-repository.ts';
import { recordIntentFailed, recordIntentSucceeded } from './processor-webhook-service.ts';

/**
 * Working days after its collection day that a Direct Debit still `processing` is asked of the processor.
 * Bacs pays or returns a debit by the third working day after it is taken; a return (ARUDD) can be
 * reported a day or two later. Past five working days a collection still waiting has most likely lost
 * its webhook.
 */
export const STUCK_AFTER_WORKING_DAYS = 5;
/** Collections read at a time, and processor look-ups in flight at once. */
const RECONCILE_BATCH = 100;
const RECONCILE_CONCURRENCY = 4;

/** How a sweep ended: collections looked at, and how many each outcome had. */
export interface CollectionSweep {
  checked: number;
  succeeded: number;
  returned: number;
  /** The processor still says processing (or could not be asked): looked at again next sweep. */
  waiting: number;
}

/**
 * The sweep for lost settlement webhooks: every Direct Debit collection still `processing`
 * `STUCK_AFTER_WORKING_DAYS` working days (England and Wales) after its London collection day has its
 * payment intent read from the processor, and what the intent says is recorded exactly as the webhook
 * would record it (paid: succeeded, settled now, `payment.succeeded`; returned: the same return
 * handling). Idempotent with the webhook: both change a collection only while it is `processing` under
 * that intent, so whichever comes second changes nothing.
 */
export async function reconcileStuckCollections(
  ctx: PaymentContext,
  now: Date = ctx.clock.now(),
): Promise<CollectionSweep> {
  const collectedOnOrBefore = addWorkingDays(londonDate(now), -STUCK_AFTER_WORKING_DAYS);
  const sweep: CollectionSweep = { checked: 0, succeeded: 0, returned: 0, waiting: 0 };
  let afterId: string | undefined;
  for (;;) {
    const stuck = await listStuckCollections(ctx.db, collectedOnOrBefore, afterId, RECONCILE_BATCH);
    await mapConcurrent(stuck, RECONCILE_CONCURRENCY, async (payment) => {
      sweep[await reconcileOne(ctx, payment, now)] += 1;
    });
    sweep.checked += stuck.length;
    if (stuck.length < RECONCILE_BATCH) return sweep;
    afterId = stuck[stuck.length - 1]?.id;
  }
}

async function reconcileOne(
  ctx: PaymentContext,
  payment: PaymentRecord,
  now: Date,
): Promise<'succeeded' | 'returned' | 'waiting'> {
  const environment = payment.environment as DataEnvironment;
  try {
    // NOTE: the processor is asked outside any transaction; the record is made in one, as the webhook's.
    const gateway = await ctx.gateway(asTenant(payment.companyId, environment));
    const intent = await gateway.retrievePaymentIntent(payment.providerPaymentId ?? '');
    if (intent.status === 'succeeded') {
      await inTransaction(ctx.db, (trx) => recordIntentSucceeded(ctx, trx, environment, intent, now));
      return 'succeeded';
    }
    if (intent.status === 'requires_payment_method' || intent.status === 'canceled') {
      await inTransaction(ctx.db, (trx) => recordIntentFailed(ctx, trx, environment, intent, now));
      return 'returned';
    }
    ctx.logger.warn(
      { payment: payment.id, intent: intent.id, status: intent.status, collectOn: payment.collectOn },
      'a Direct Debit is still processing at the processor well after its collection day',
    );
  } catch (error) {
    ctx.logger.warn({ err: error, payment: payment.id }, 'could not reconcile a Direct Debit; next sweep');
  }
  return 'waiting';
}
