import { mapConcurrent } from '../../platform/concurrency.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import type { Tenant } from '../companies/index.ts';
import { attemptCharge } from './charge-service.ts';
import { switchCollectionToCard } from './collection-repository.ts';
import { reconcileStuckCollections, type CollectionSweep } from './collection-reconciler.ts';
import { attemptCollection } from './direct-debit-collections.ts';
import {
  COLLECT_DUE_QUEUE,
  paymentView,
  policyOf,
  RECONCILE_AFTER_MS,
  RECONCILE_COLLECTIONS_QUEUE,
  SETTLE_QUEUE,
  type ChargeOutcome,
  type PaymentContext,
} from './payment-context.ts';
import { claimForAttempt, lockDuePayments } from './attempt-repository.ts';
import {
  listFailedPayments,
  listPaymentsOfPolicy,
  updatePayment,
  type PaymentRecord,
} from './payment-repository.ts';
import { executeRefund, settle } from './settlement-service.ts';

/** How often a worker looks for payments due: dunning retries, expired leases, unknown outcomes. */
const COLLECT_INTERVAL_MS = 10_000;
/** Payments claimed at a time, and attempts in flight at once, by one worker. */
const COLLECT_BATCH = 100;
const COLLECT_CONCURRENCY = 16;

/**
 * Failed charges tried again: on the dunning schedule and when leases or unknown outcomes come due
 * (the workers), or at once on request (RETRY_PAYMENT); and the list of those still failed.
 */
export function createDunningService(ctx: PaymentContext) {
  const { db, clock, jobs, logger } = ctx;
  let collectTimer: NodeJS.Timeout | undefined;
  const service = {
    /** RETRY_PAYMENT: charges a version's failed payment now; 409 when it is already paid. */
    retryPayment: (tenant: Tenant, policyReference: string, versionReference: string) =>
      retryPayment(ctx, tenant, policyReference, versionReference),

    /**
     * Dunning and reconciliation: every payment whose next attempt is due (a dunning retry, an expired
     * lease of an attempt whose process died, an outcome still unknown), claimed under SKIP LOCKED and
     * leased again while it is tried.
     */
    collectDue: (now: Date = clock.now()): Promise<number> => collectDue(ctx, now),

    /**
     * Lost settlement webhooks: Direct Debits still `processing` five working days after their day are
     * asked of the processor and recorded as its webhook would have recorded them (see the reconciler).
     */
    reconcileCollections: (now: Date = clock.now()): Promise<CollectionSweep> =>
      reconcileStuckCollections(ctx, now),

    /** Failed charges and refunds for follow-up (the console's failed payments), with their policies. */
    async listFailed(tenant: Tenant, limit: number) {
      return (await listFailedPayments(db, tenant, limit)).map(({ payment, policyReference }) => ({
        ...paymentView(payment, payment.policyVersionId),
        policy_reference: policyReference,
        awaiting_new_card: payment.awaitingNewCard,
      }));
    },

    async registerWorkers(): Promise<void> {
      await jobs.work<{ paymentId: string }>(SETTLE_QUEUE, async (data) => settle(ctx, data.paymentId));
      await jobs.work(COLLECT_DUE_QUEUE, async () => {
        await service.collectDue();
      });
      await jobs.schedule(COLLECT_DUE_QUEUE, '*/15 * * * *', {}, 'Europe/London');
      await jobs.work(RECONCILE_COLLECTIONS_QUEUE, async () => {
        const sweep = await service.reconcileCollections();
        if (sweep.checked > 0)
          logger.info({ sweep }, 'Direct Debits processing past their settlement asked of the processor');
      });
      await jobs.schedule(RECONCILE_COLLECTIONS_QUEUE, '40 * * * *', {}, 'Europe/London');
      // NOTE: besides the cron (whose occurrences can come a minute late), every worker looks every few
      // seconds, so a charge left by a process that died is made within a lease and a look of its restart.
      let collecting = false;
      collectTimer ??= setInterval(() => {
        if (collecting) return;
        collecting = true;
        void (async () => {
          // Batch after batch while full ones come back: a crash can leave a whole billing run due.
          while ((await service.collectDue()) === COLLECT_BATCH) {
            /* next batch */
          }
        })()
          .catch((error: unknown) => {
            logger.warn({ err: error }, 'collecting due payments failed; will try again');
          })
          .finally(() => {
            collecting = false;
          });
      }, COLLECT_INTERVAL_MS);
      collectTimer.unref();
    },

    /** Stops the periodic collection (shutdown). */
    stopWorkers(): void {
      if (collectTimer !== undefined) clearInterval(collectTimer);
      collectTimer = undefined;
    },
  };
  return service;
}

async function retryPayment(
  ctx: PaymentContext,
  tenant: Tenant,
  policyReference: string,
  versionReference: string,
): Promise<ChargeOutcome> {
  const policy = await policyOf(ctx, tenant, policyReference);
  const forVersion = (await listPaymentsOfPolicy(ctx.db, tenant, policy.id)).filter(
    (p) => p.policyVersionId === versionReference && p.kind === 'charge',
  );
  if (forVersion.length === 0) throw notFound('payment for that policy version');
  const outstanding = forVersion.find((p) => p.status === 'failed' || p.status === 'requires_action');
  // Paid: nothing outstanding, or a later charge for the same purpose succeeded.
  if (
    outstanding === undefined ||
    forVersion.some((p) => p.status === 'succeeded' && p.purpose === outstanding.purpose)
  ) {
    if (forVersion.some((p) => p.status === 'succeeded'))
      throw new AppError('ALREADY_PAID', 'That policy version is already paid');
    throw new AppError('CONFLICT', 'A payment for that policy version is still in progress');
  }
  // NOTE: taken before the processor is called, so that concurrent retries make one attempt (and
  // one event); the others learn it is in progress.
  const now = ctx.clock.now();
  // NOTE: asked for now, a Direct Debit could not be announced in advance: a retry on request is by card.
  if (outstanding.methodType === 'bacs_debit') await switchCollectionToCard(ctx.db, outstanding.id, now);
  const payment = await claimForAttempt(
    ctx.db,
    outstanding.id,
    ['failed', 'requires_action'],
    now,
    ctx.leaseUntil(now),
  );
  if (payment === undefined)
    throw new AppError('CONFLICT', 'A payment for that policy version is already being retried');
  return attemptCharge(ctx, payment, payment.attempts + 1);
}

async function collectDue(ctx: PaymentContext, now: Date): Promise<number> {
  const leaseUntil = ctx.leaseUntil(now);
  const claimed = await inTransaction(ctx.db, async (trx) => {
    const due = await lockDuePayments(trx, now, COLLECT_BATCH);
    // NOTE: each lease bumps its policy's revision, so policies are locked in id order: two workers
    // leasing payments of the same two policies would otherwise deadlock.
    const byPolicy = due.toSorted((a, b) => (a.policyId ?? '').localeCompare(b.policyId ?? ''));
    // A declined card charge is `pending` while it is tried (as RETRY_PAYMENT's claim makes it), so
    // neither a retry on request nor a new card's bringing forward starts a second attempt beside it.
    for (const p of byPolicy)
      await updatePayment(
        trx,
        p.id,
        isDeclinedCardCharge(p)
          ? { nextAttemptAt: leaseUntil, status: 'pending' }
          : { nextAttemptAt: leaseUntil },
        now,
      );
    return due;
  });
  await mapConcurrent(claimed, COLLECT_CONCURRENCY, async (payment) => {
    try {
      if (payment.kind === 'refund') await executeRefund(ctx, payment);
      else if (payment.methodType === 'bacs_debit')
        await attemptCollection(ctx, payment, payment.attempts + 1);
      // A `pending` payment had an attempt in progress or of unknown outcome and recorded attempts − 1,
      // so attempts + 1 replays that attempt's idempotency key; after a decline it is the next attempt's.
      else await attemptCharge(ctx, payment, payment.attempts + 1);
    } catch (error) {
      ctx.logger.warn({ err: error, payment: payment.id }, 'payment attempt failed; will retry');
      await updatePayment(
        ctx.db,
        payment.id,
        { nextAttemptAt: new Date(now.getTime() + RECONCILE_AFTER_MS) },
        now,
      );
    }
  });
  return claimed.length;
}

const isDeclinedCardCharge = (p: PaymentRecord): boolean =>
  p.kind === 'charge' &&
  p.methodType !== 'bacs_debit' &&
  (p.status === 'failed' || p.status === 'requires_action');
