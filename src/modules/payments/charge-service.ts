import type { ChargeResult } from '../../integrations/payments/index.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { fromPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { policyholderContacts } from '../accounts/index.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import {
  paymentActionRequiredEmail,
  paymentFailedEmail,
  type RenderedEmail,
} from '../notifications/index.ts';
import { findPolicyholderId, policyReferences } from '../policies/index.ts';
import { scheduleStatementCollections } from './direct-debit-collections.ts';
import { customersOf, usersWithCustomer } from './payment-customer-repository.ts';
import {
  CURRENCY,
  eventBase,
  PROVIDER,
  RECONCILE_AFTER_MS,
  type ChargeOutcome,
  type PaymentContext,
} from './payment-context.ts';
import {
  bringForwardFailed,
  claimForAttempt,
  pinAttempt,
  pinOf,
  recordAttemptOutcome,
} from './attempt-repository.ts';
import { findPayment, insertPendingCharges, type PaymentRecord } from './payment-repository.ts';
import { isHardDecline, nextAttemptAt } from './rules/index.ts';

/**
 * One attempt at an off-session charge of `payment` (a statement or adjustment charge), keyed by
 * payment id and attempt number, then recorded. Outside any transaction. The customer's default card,
 * pinned to the attempt before the processor is asked; a replay of the attempt charges that card again
 * (the same request under the same key), whatever card is the default since.
 */
export async function attemptCharge(
  ctx: PaymentContext,
  payment: PaymentRecord,
  attempt: number,
): Promise<ChargeOutcome> {
  const tenant = asTenant(payment.companyId, payment.environment as DataEnvironment);
  const now = ctx.clock.now();
  const customerId = payment.providerCustomerId;
  const pinned = pinOf(payment, attempt);
  const methodId =
    pinned?.mandateId === null
      ? pinned.paymentMethodId
      : customerId === null
        ? null
        : (await (await ctx.gateway(tenant)).retrieveCustomer(customerId)).defaultPaymentMethodId;
  if (customerId === null || methodId === null) return recordNoCard(ctx, payment, attempt, now);
  if (pinned === undefined)
    await pinAttempt(ctx.db, payment.id, { attempt, paymentMethodId: methodId, mandateId: null });
  const result = await (
    await ctx.gateway(tenant)
  ).chargeOffSession({
    customerId,
    paymentMethodId: methodId,
    amountPence: payment.amountPence,
    currency: payment.currency,
    metadata: {
      milepost_payment: payment.id,
      company: payment.companyId,
      environment: payment.environment,
    },
    idempotencyKey: `payment:${payment.id}:attempt:${String(attempt)}`,
  });
  switch (result.outcome) {
    case 'succeeded':
      return recordCharged(ctx, payment, attempt, { intentId: result.intentId, methodId }, now);
    case 'unknown':
      return recordUnknown(ctx, payment, attempt, result.message, now);
    case 'declined':
    case 'authentication_required':
      return recordDeclined(ctx, payment, attempt, { result, methodId }, now);
  }
}

/** No customer or no default card: the payment waits for a new card (ADD_NEW_PAYMENT_METHOD). */
async function recordNoCard(
  ctx: PaymentContext,
  payment: PaymentRecord,
  attempt: number,
  now: Date,
): Promise<ChargeOutcome> {
  await recordAttemptOutcome(
    ctx.db,
    payment.id,
    attempt,
    {
      status: 'failed',
      errorMessage: 'No card on file',
      awaitingNewCard: true,
      nextAttemptAt: null,
      firstFailedAt: payment.firstFailedAt ?? now,
    },
    now,
  );
  return {
    payment_amount: null,
    error_message: 'No card on file',
    payment_reference: payment.id,
    status: 'failed',
  };
}

async function recordCharged(
  ctx: PaymentContext,
  payment: PaymentRecord,
  attempt: number,
  charge: { intentId: string; methodId: string },
  now: Date,
): Promise<ChargeOutcome> {
  await inTransaction(ctx.db, async (trx) => {
    // One state change, one event: a concurrent replay of this attempt (same idempotency key,
    // same charge) or a processor webhook may have recorded it already.
    const recorded = await recordAttemptOutcome(
      trx,
      payment.id,
      attempt,
      {
        status: 'succeeded',
        providerPaymentId: charge.intentId,
        paymentMethodId: charge.methodId,
        nextAttemptAt: null,
        awaitingNewCard: false,
        declineCode: null,
        errorMessage: null,
      },
      now,
    );
    if (!recorded) return;
    await recordEvent(
      trx,
      { companyId: payment.companyId, environment: payment.environment },
      'payment.succeeded',
      { ...(await eventBase(trx, payment)), provider_payment_reference: charge.intentId },
      now,
    );
  });
  return {
    payment_amount: fromPence(payment.amountPence),
    payment_reference: payment.id,
    status: 'succeeded',
  };
}

async function recordUnknown(
  ctx: PaymentContext,
  payment: PaymentRecord,
  attempt: number,
  message: string,
  now: Date,
): Promise<ChargeOutcome> {
  // NOTE: never charge again with a new key; replay this attempt's key later to learn the outcome.
  await recordAttemptOutcome(
    ctx.db,
    payment.id,
    attempt,
    {
      status: 'pending',
      errorMessage: message,
      nextAttemptAt: new Date(now.getTime() + RECONCILE_AFTER_MS),
    },
    now,
    attempt - 1,
  );
  return {
    payment_amount: null,
    error_message: `The payment outcome is not known yet: ${message}`,
    payment_reference: payment.id,
    status: 'pending',
  };
}

type Declined = Extract<ChargeResult, { outcome: 'declined' | 'authentication_required' }>;

/** A decline or a 3-D Secure request: recorded with its next dunning attempt, announced and emailed once. */
async function recordDeclined(
  ctx: PaymentContext,
  payment: PaymentRecord,
  attempt: number,
  charge: { result: Declined; methodId: string },
  now: Date,
): Promise<ChargeOutcome> {
  const { result } = charge;
  const code = result.outcome === 'declined' ? result.code : 'authentication_required';
  const declineCode = result.outcome === 'declined' ? result.declineCode : 'authentication_required';
  const firstFailedAt = payment.firstFailedAt ?? now;
  const hard = isHardDecline(code, declineCode);
  const retryAt =
    payment.purpose === 'statement' ? nextAttemptAt(firstFailedAt, attempt, hard, ctx.retryDays) : null;
  const declined = await inTransaction(ctx.db, async (trx) => {
    const recorded = await recordAttemptOutcome(
      trx,
      payment.id,
      attempt,
      {
        status: result.outcome === 'declined' ? 'failed' : 'requires_action',
        providerPaymentId: result.intentId ?? null,
        paymentMethodId: charge.methodId,
        declineCode,
        errorMessage: result.message,
        firstFailedAt,
        nextAttemptAt: retryAt,
        awaitingNewCard: hard,
      },
      now,
    );
    if (!recorded) return false;
    await recordEvent(
      trx,
      { companyId: payment.companyId, environment: payment.environment },
      'payment.failed',
      {
        ...(await eventBase(trx, payment)),
        decline_code: declineCode,
        error_message: result.message,
        next_attempt_at: retryAt?.toISOString() ?? null,
      },
      now,
    );
    await notifyPolicyholder(
      ctx,
      trx,
      payment,
      result.outcome === 'authentication_required' ? 'payment-action-required' : 'payment-failed',
      result.outcome === 'authentication_required'
        ? (person) =>
            paymentActionRequiredEmail({
              ...person,
              amountPence: payment.amountPence,
              currency: payment.currency,
              paymentReference: payment.id,
            })
        : (person) =>
            paymentFailedEmail({
              ...person,
              amountPence: payment.amountPence,
              currency: payment.currency,
              reason: result.message,
              nextAttemptOn: retryAt === null ? null : retryAt.toISOString().slice(0, 10),
            }),
    );
    return true;
  });
  // NOTE: the decline is recorded whatever this finds: a processor that cannot answer now leaves the
  // charge to its dunning day (or to the card's route), rather than failing the attempt that declined.
  if (declined)
    await retryIfCardChanged(ctx, payment, charge.methodId).catch((error: unknown) => {
      ctx.logger.warn({ err: error, payment: payment.id }, 'could not check for a new card after a decline');
    });
  return {
    payment_amount: null,
    error_message: result.message,
    payment_reference: payment.id,
    status: 'failed',
  };
}

/**
 * A card added (ADD_NEW_PAYMENT_METHOD) while this attempt was charging the old one: the card's
 * route found the payment leased and left it, so the decline of the old card must not wait for the
 * next dunning day. Asked after the decline is recorded, so either this sees the new default or the
 * card's route, coming later, sees the payment failed and brings it forward itself.
 */
async function retryIfCardChanged(
  ctx: PaymentContext,
  payment: PaymentRecord,
  chargedMethodId: string,
): Promise<void> {
  if (payment.providerCustomerId === null) return;
  if (payment.purpose !== 'statement' && payment.purpose !== 'adjustment') return;
  const tenant = asTenant(payment.companyId, payment.environment as DataEnvironment);
  const { defaultPaymentMethodId } = await (
    await ctx.gateway(tenant)
  ).retrieveCustomer(payment.providerCustomerId);
  if (defaultPaymentMethodId === null || defaultPaymentMethodId === chargedMethodId) return;
  await bringForwardFailed(ctx.db, payment.id, ctx.clock.now());
}

/** Emails the policyholder of the payment's policy (through the outbox, in `trx`). */
async function notifyPolicyholder(
  ctx: PaymentContext,
  trx: Executor,
  payment: PaymentRecord,
  template: 'payment-failed' | 'payment-action-required',
  render: (person: { firstNames: string; policyReference: string }) => RenderedEmail,
): Promise<void> {
  if (payment.policyId === null) return;
  // One query: the policy's reference and its policyholder's address, each as its owner lays it out.
  const row = await trx
    .selectFrom(policyReferences(trx).as('p'))
    .innerJoin(policyholderContacts(trx).as('u'), 'u.id', 'p.user_id')
    .select(['p.policy_reference', 'u.id', 'u.email', 'u.first_names'])
    .where('p.id', '=', payment.policyId)
    .executeTakeFirst();
  if (row === undefined) return;
  const scope = { companyId: payment.companyId, environment: payment.environment };
  await ctx.notifications.queueEmail(
    trx,
    scope,
    template,
    row.email,
    render({ firstNames: row.first_names, policyReference: row.policy_reference }),
    row.id,
  );
}

/** Statement charges: recorded with their statements, attempted after commit, dunned when they fail. */
export function createChargeService(ctx: PaymentContext) {
  const { db, clock } = ctx;
  const service = {
    /** The policyholders among these who pay by card here: a billing run charges only their statements. */
    usersWithCardOnFile: (userIds: readonly string[]) => usersWithCustomer(db, userIds, PROVIDER),

    /**
     * In the statements' own transaction: a pending charge for each owing statement whose policyholder
     * pays by card here, leased (`PaymentContext.leaseUntil`). Because the charge is recorded with its
     * statement, a process that dies after the commit leaves it to the reconciler: no owing statement is
     * left uncharged. Returns the payment id of each statement (by version id) that will be charged.
     */
    async recordStatementCharges(
      trx: Executor,
      items: ReadonlyArray<{
        tenant: Tenant;
        userId: string;
        policyId: string;
        policyVersionId: string;
        amountPence: number;
      }>,
    ): Promise<Map<string, string>> {
      // NOTE: a policy paying by Direct Debit is collected on a later day, announced now (Bacs advance notice).
      const { scheduled, byCard: owing } = await scheduleStatementCollections(
        ctx,
        trx,
        items.filter((item) => item.amountPence > 0),
      );
      const customers = await customersOf(trx, owing, PROVIDER);
      const now = clock.now();
      const charged = await insertPendingCharges(
        trx,
        owing.flatMap((item) => {
          const providerCustomerId = customers.get(item.userId);
          // A policy bound without card payments is collected elsewhere: no payment record.
          return providerCustomerId === undefined
            ? []
            : [{ ...item, currency: CURRENCY, provider: PROVIDER, providerCustomerId }];
        }),
        now,
        ctx.leaseUntil(now),
      );
      return new Map([...scheduled, ...charged]);
    },

    /** Records and attempts one statement's charge (undefined when its policyholder pays elsewhere). */
    async chargeStatement(
      tenant: Tenant,
      input: { policyId: string; policyVersionId: string; amountPence: number },
    ): Promise<ChargeOutcome | undefined> {
      const userId = await findPolicyholderId(db, input.policyId);
      if (userId === undefined) return undefined;
      const recorded = await inTransaction(db, (trx) =>
        service.recordStatementCharges(trx, [{ tenant, userId, ...input }]),
      );
      const paymentId = recorded.get(input.policyVersionId);
      return paymentId === undefined ? undefined : service.attemptStatementCharge(tenant, paymentId);
    },

    /**
     * After commit: the first attempt at charges recorded by `recordStatementCharges`. A failure stays
     * with its statement and goes to dunning; it is not thrown.
     */
    async attemptStatementCharge(tenant: Tenant, paymentId: string): Promise<ChargeOutcome | undefined> {
      const now = clock.now();
      const payment = await claimForAttempt(db, paymentId, ['pending'], now, ctx.leaseUntil(now));
      // Already settled by another process (the reconciler took an expired lease): its outcome stands.
      if (payment === undefined) return service.outcomeOf(tenant, paymentId);
      try {
        return await attemptCharge(ctx, payment, payment.attempts + 1);
      } catch (error) {
        return recordRefusedAttempt(ctx, payment, error, now);
      }
    },

    /** A payment's outcome as a statement shows it: the amount collected, or null and why not. */
    async outcomeOf(tenant: Tenant, paymentId: string): Promise<ChargeOutcome | undefined> {
      const payment = await findPayment(db, tenant, paymentId);
      if (payment === undefined) return undefined;
      if (payment.status === 'scheduled' || payment.status === 'processing')
        return {
          payment_amount: null,
          error_message: `${payment.status === 'scheduled' ? 'To be collected' : 'Submitted for collection'} by Direct Debit on ${payment.collectOn ?? ''}`,
          payment_reference: payment.id,
          status: payment.status,
        };
      return payment.status === 'succeeded'
        ? {
            payment_amount: fromPence(payment.amountPence),
            payment_reference: payment.id,
            status: payment.status,
          }
        : {
            payment_amount: null,
            error_message: payment.errorMessage ?? 'The payment has not succeeded',
            payment_reference: payment.id,
            status: payment.status,
          };
    },
  };
  return service;
}

/**
 * The processor refused the request itself (e.g. below its minimum amount, or rate limited): the
 * statement stands; the payment is left for dunning to try again.
 */
async function recordRefusedAttempt(
  ctx: PaymentContext,
  payment: PaymentRecord,
  error: unknown,
  now: Date,
): Promise<ChargeOutcome> {
  const message = error instanceof Error ? error.message : String(error);
  await recordAttemptOutcome(
    ctx.db,
    payment.id,
    payment.attempts + 1,
    {
      status: 'failed',
      errorMessage: message,
      firstFailedAt: payment.firstFailedAt ?? now,
      nextAttemptAt:
        error instanceof AppError && error.retryable ? new Date(now.getTime() + RECONCILE_AFTER_MS) : null,
    },
    now,
  );
  return {
    payment_amount: null,
    error_message: message,
    payment_reference: payment.id,
    status: 'failed',
  };
}
