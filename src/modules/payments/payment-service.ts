import type { FastifyBaseLogger } from 'fastify';
import type { PaymentEvent, PaymentGateway, PaymentIntent } from '../../integrations/payments/index.ts';
import type { Clock } from '../../platform/clock.ts';
import { mapConcurrent } from '../../platform/concurrency.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, isUniqueViolation, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { fromPence, toPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { asTenant, findSandboxKey, type DataEnvironment, type Tenant } from '../companies/index.ts';
import {
  paymentActionRequiredEmail,
  paymentFailedEmail,
  type NotificationService,
  type RenderedEmail,
} from '../notifications/index.ts';
import {
  findPolicy,
  type BindingPayment,
  type PaymentRecordView,
  type PolicyChange,
  type PolicyPaymentHooks,
  type PolicyRecord,
} from '../policies/index.ts';
import { isHardDecline, nextAttemptAt } from './dunning.ts';
import { adjustmentAmountPence, cancellationAmountPence, remainingShare } from './payment-amounts.ts';
import {
  bumpPaymentsRevision,
  findCustomer,
  usersWithCustomer,
  findPaymentById,
  findPayment,
  findPaymentByProviderId,
  findPaymentByProviderIdAnyTenant,
  insertPayment,
  linkCustomer,
  listAwaitingNewCard,
  listFailedCharges,
  listPaymentsOfPolicy,
  lockDuePayments,
  markEventProcessed,
  updatePayment,
  claimForAttempt,
  customersOf,
  insertPendingCharges,
  recordAttemptOutcome,
  recordProcessorSuccess,
  type PaymentRecord,
} from './payment-repository.ts';

export const SETTLE_QUEUE = 'payments.settle';
export const COLLECT_DUE_QUEUE = 'payments.collect-due';
const PROVIDER = 'stripe';
const CURRENCY = 'GBP';
/** How long after an `unknown` outcome the charge is replayed (same idempotency key) to learn what happened. */
const RECONCILE_AFTER_MS = 10 * 60_000;
/**
 * How long an attempt in progress holds its payment. A process that dies mid-attempt leaves the payment
 * `pending` with this lease, after which the reconciler replays the attempt under the same idempotency
 * key (the processor answers with the original charge, or makes it if it never arrived).
 */
const CHARGE_LEASE_MS = 30_000;
/** How often a worker looks for payments due: dunning retries, expired leases, unknown outcomes. */
const COLLECT_INTERVAL_MS = 10_000;
/** Payments claimed at a time, and attempts in flight at once, by one worker. */
const COLLECT_BATCH = 100;
const COLLECT_CONCURRENCY = 16;

/** Resolves the processor per environment: Stripe in production, the built-in sandbox otherwise. */
export interface PaymentGateways {
  /** In the sandbox, `sandboxKey` names the company's own sandbox account. */
  forEnvironment(environment: DataEnvironment, sandboxKey?: string): PaymentGateway;
  /** Verifies a processor webhook against each environment's signing secret. */
  verifyWebhook(
    rawBody: string | Uint8Array,
    signature: string | undefined,
  ): { environment: DataEnvironment; event: PaymentEvent };
}

export interface ChargeOutcome {
  readonly payment_amount: number | null;
  readonly error_message?: string;
  readonly payment_reference: string;
  readonly status: PaymentRecord['status'];
}

interface Binding extends BindingPayment {
  readonly intent: PaymentIntent;
  readonly amountPence: number;
  readonly customerId: string;
  readonly paymentMethodId: string | null;
}

const view = (p: PaymentRecord, versionRef: string | null): PaymentRecordView => ({
  payment_reference: p.id,
  type: p.kind,
  purpose: p.purpose,
  status: p.status,
  amount: fromPence(p.amountPence),
  refunded_amount: fromPence(p.refundedPence),
  currency: p.currency,
  policy_version_reference: versionRef,
  payment_provider: p.provider,
  provider_payment_reference: p.providerPaymentId,
  payment_method_id: p.paymentMethodId,
  decline_code: p.declineCode,
  error_message: p.errorMessage,
  attempts: p.attempts,
  next_attempt_at: p.nextAttemptAt?.toISOString() ?? null,
  created_at: p.createdAt.toISOString(),
});

const mismatch = (path: string, message: string): AppError =>
  new AppError('PAYMENT_MISMATCH', `The payment does not match: ${message}`, {
    errors: [{ path: `/body/payment/${path}`, message }],
  });

/**
 * Card payments: intents for new business, binding checks, charges and refunds for adjustments and
 * cancellations, statement charges with dunning, saved cards, and processor webhooks. Every processor
 * write carries an idempotency key made from our own payment ids, and no processor call is made while
 * a database transaction is open.
 */
export function createPaymentService(deps: {
  db: Executor;
  clock: Clock;
  jobs: Jobs;
  gateways: PaymentGateways;
  notifications: NotificationService;
  logger: FastifyBaseLogger;
  retryDays?: readonly number[];
}) {
  const { db, clock, jobs, gateways, notifications, logger } = deps;
  jobs.define({
    name: SETTLE_QUEUE,
    options: {
      retryLimit: 10,
      retryDelay: 30,
      retryBackoff: true,
      retryDelayMax: 3600,
      expireInSeconds: 300,
    },
  });
  jobs.define({ name: COLLECT_DUE_QUEUE, options: { retryLimit: 1, expireInSeconds: 900 } });
  // A company's sandbox key never changes: read once per process.
  const sandboxKeys = new Map<string, string>();
  const gateway = async (tenant: Tenant): Promise<PaymentGateway> => {
    if (tenant.environment === 'production') return gateways.forEnvironment('production');
    let key = sandboxKeys.get(tenant.companyId);
    if (key === undefined) {
      key = await findSandboxKey(db, tenant.companyId);
      if (key === undefined) throw notFound('company');
      sandboxKeys.set(tenant.companyId, key);
    }
    return gateways.forEnvironment(tenant.environment, key);
  };

  async function policyOf(tenant: Tenant, reference: string): Promise<PolicyRecord> {
    const policy = await findPolicy(db, tenant, reference);
    if (policy === undefined) throw notFound('policy');
    return policy;
  }

  async function customerOf(tenant: Tenant, policy: PolicyRecord): Promise<string> {
    const customerId = await findCustomer(db, tenant, policy.userId, PROVIDER);
    if (customerId === undefined) {
      throw new AppError(
        'CONFLICT',
        'The policy has no card on file: it was created without a payment block',
      );
    }
    return customerId;
  }

  /**
   * The policyholder's customer at the processor, made now for a policy bound without a card payment
   * (ADD_NEW_PAYMENT_METHOD is how such a policy gets a card). Concurrent calls make one: the
   * processor's create is idempotent per policyholder, and the first link wins.
   */
  async function ensureCustomer(tenant: Tenant, policy: PolicyRecord): Promise<string> {
    const existing = await findCustomer(db, tenant, policy.userId, PROVIDER);
    if (existing !== undefined) return existing;
    const person = await db
      .selectFrom('users')
      .select(['email', 'first_names', 'last_names'])
      .where('id', '=', policy.userId)
      .executeTakeFirstOrThrow();
    const customer = await (
      await gateway(tenant)
    ).createCustomer({
      email: person.email,
      name: `${person.first_names} ${person.last_names}`,
      metadata: { milepost_user: policy.userId },
      idempotencyKey: `user:${policy.userId}:customer`,
    });
    await linkCustomer(db, tenant, policy.userId, PROVIDER, customer.id, clock.now());
    return (await findCustomer(db, tenant, policy.userId, PROVIDER)) ?? customer.id;
  }

  /**
   * One attempt at an off-session charge of `payment` (a statement or adjustment charge), keyed by
   * payment id and attempt number, then recorded. Outside any transaction.
   */
  async function attemptCharge(payment: PaymentRecord, attempt: number): Promise<ChargeOutcome> {
    const tenant = asTenant(payment.companyId, payment.environment as DataEnvironment);
    const now = clock.now();
    const customerId = payment.providerCustomerId;
    const methodId =
      customerId === null
        ? null
        : (await (await gateway(tenant)).retrieveCustomer(customerId)).defaultPaymentMethodId;
    if (customerId === null || methodId === null) {
      await recordAttemptOutcome(
        db,
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
    const result = await (
      await gateway(tenant)
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
    const scope = { companyId: payment.companyId, environment: payment.environment };
    switch (result.outcome) {
      case 'succeeded':
        await inTransaction(db, async (trx) => {
          // One state change, one event: a concurrent replay of this attempt (same idempotency key,
          // same charge) or a processor webhook may have recorded it already.
          const recorded = await recordAttemptOutcome(
            trx,
            payment.id,
            attempt,
            {
              status: 'succeeded',
              providerPaymentId: result.intentId,
              paymentMethodId: methodId,
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
            scope,
            'payment.succeeded',
            { ...(await eventBase(trx, payment)), provider_payment_reference: result.intentId },
            now,
          );
        });
        return {
          payment_amount: fromPence(payment.amountPence),
          payment_reference: payment.id,
          status: 'succeeded',
        };
      case 'unknown':
        // NOTE: never charge again with a new key; replay this attempt's key later to learn the outcome.
        await recordAttemptOutcome(
          db,
          payment.id,
          attempt,
          {
            status: 'pending',
            errorMessage: result.message,
            nextAttemptAt: new Date(now.getTime() + RECONCILE_AFTER_MS),
          },
          now,
          attempt - 1,
        );
        return {
          payment_amount: null,
          error_message: `The payment outcome is not known yet: ${result.message}`,
          payment_reference: payment.id,
          status: 'pending',
        };
      case 'declined':
      case 'authentication_required': {
        const code = result.outcome === 'declined' ? result.code : 'authentication_required';
        const declineCode = result.outcome === 'declined' ? result.declineCode : 'authentication_required';
        const firstFailedAt = payment.firstFailedAt ?? now;
        const hard = isHardDecline(code, declineCode);
        const retryAt =
          payment.purpose === 'statement'
            ? nextAttemptAt(firstFailedAt, attempt, hard, deps.retryDays)
            : null;
        await inTransaction(db, async (trx) => {
          const recorded = await recordAttemptOutcome(
            trx,
            payment.id,
            attempt,
            {
              status: result.outcome === 'declined' ? 'failed' : 'requires_action',
              providerPaymentId: result.intentId ?? null,
              paymentMethodId: methodId,
              declineCode,
              errorMessage: result.message,
              firstFailedAt,
              nextAttemptAt: retryAt,
              awaitingNewCard: hard,
            },
            now,
          );
          if (!recorded) return;
          await recordEvent(
            trx,
            scope,
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
        });
        return {
          payment_amount: null,
          error_message: result.message,
          payment_reference: payment.id,
          status: 'failed',
        };
      }
    }
  }

  const policyReferenceOf = async (executor: Executor, policyId: string | null): Promise<string | null> =>
    policyId === null
      ? null
      : ((
          await executor
            .selectFrom('policies')
            .select('policy_reference')
            .where('id', '=', policyId)
            .executeTakeFirst()
        )?.policy_reference ?? null);

  /** The fields every payment event carries (the webhook catalogue's `payment.*` payloads). */
  const eventBase = async (executor: Executor, payment: PaymentRecord) => ({
    payment_reference: payment.id,
    policy_reference: await policyReferenceOf(executor, payment.policyId),
    policy_version_reference: payment.policyVersionId,
    amount: fromPence(payment.amountPence),
    currency: payment.currency,
  });

  /** Emails the policyholder of the payment's policy (through the outbox, in `trx`). */
  async function notifyPolicyholder(
    trx: Executor,
    payment: PaymentRecord,
    template: 'payment-failed' | 'payment-action-required',
    render: (person: { firstNames: string; policyReference: string }) => RenderedEmail,
  ): Promise<void> {
    if (payment.policyId === null) return;
    const row = await trx
      .selectFrom('policies as p')
      .innerJoin('users as u', 'u.id', 'p.user_id')
      .select(['p.policy_reference', 'u.email', 'u.first_names'])
      .where('p.id', '=', payment.policyId)
      .executeTakeFirst();
    if (row === undefined) return;
    const scope = { companyId: payment.companyId, environment: payment.environment };
    await notifications.queueEmail(
      trx,
      scope,
      template,
      row.email,
      render({ firstNames: row.first_names, policyReference: row.policy_reference }),
    );
  }

  /** Refunds `payment` (a refund record) against the policy's original charge. */
  async function executeRefund(payment: PaymentRecord): Promise<void> {
    const tenant = asTenant(payment.companyId, payment.environment as DataEnvironment);
    const now = clock.now();
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
      await gateway(tenant)
    ).refund({
      paymentIntentId: original.providerPaymentId,
      amountPence: payment.amountPence,
      metadata: { milepost_payment: payment.id },
      idempotencyKey: `payment:${payment.id}:refund`,
    });
    await inTransaction(db, async (trx) => {
      await updatePayment(
        trx,
        payment.id,
        {
          status: refund.status === 'succeeded' ? 'succeeded' : 'pending',
          providerPaymentId: refund.id,
          paymentMethodId: original.paymentMethodId,
          attempts: payment.attempts + 1,
        },
        now,
      );
      const refunded = original.refundedPence + payment.amountPence;
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
  async function settle(paymentId: string): Promise<void> {
    const payment = await findPaymentById(db, paymentId);
    if (payment?.status !== 'pending') return;
    if (payment.kind === 'refund') await executeRefund(payment);
    else await attemptCharge(payment, payment.attempts + 1);
  }

  /**
   * The processor collected `intent`: its charge (in the environment whose secret signed the event)
   * becomes succeeded and `payment.succeeded` is announced, once. Intents made for a new policy's
   * payment block are recorded when the policy binds them, not here.
   */
  async function recordIntentSucceeded(
    trx: Executor,
    environment: DataEnvironment,
    intent: PaymentIntent,
    now: Date,
  ): Promise<void> {
    const payment = await findPaymentByProviderIdAnyTenant(trx, PROVIDER, intent.id);
    // NOTE: the sandbox signs events about any company's sandbox objects; they never touch production.
    if (payment === undefined || payment.environment !== environment || payment.purpose === 'intent') return;
    if (intent.amountReceivedPence !== payment.amountPence) {
      logger.warn(
        { payment: payment.id, intent: intent.id, receivedPence: intent.amountReceivedPence },
        'processor reports another amount collected than the payment’s; left as it is',
      );
      return;
    }
    const recorded = await recordProcessorSuccess(trx, payment.id, intent.id, intent.paymentMethodId, now);
    if (!recorded) return;
    await recordEvent(
      trx,
      { companyId: payment.companyId, environment: payment.environment },
      'payment.succeeded',
      { ...(await eventBase(trx, payment)), provider_payment_reference: intent.id },
      now,
    );
  }

  const hooks: PolicyPaymentHooks = {
    async verifyBinding(tenant, block, upfrontPremium) {
      if (block?.provider_payment_reference === undefined) return undefined;
      if (block.payment_provider !== undefined && block.payment_provider !== PROVIDER) {
        throw mismatch('payment_provider', `must be "${PROVIDER}"`);
      }
      let intent: PaymentIntent;
      try {
        intent = await (await gateway(tenant)).retrievePaymentIntent(block.provider_payment_reference);
      } catch (error) {
        if (error instanceof AppError && error.code === 'NOT_FOUND')
          throw mismatch('provider_payment_reference', 'no such payment at the processor');
        throw error;
      }
      const expectedPence = toPence(block.payment_amount ?? upfrontPremium);
      if (intent.status !== 'succeeded')
        throw mismatch(
          'provider_payment_reference',
          `the payment has not succeeded (status ${intent.status})`,
        );
      if (intent.amountReceivedPence !== expectedPence) {
        throw mismatch(
          'payment_amount',
          `the processor collected ${String(intent.amountReceivedPence)} pence, the policy expects ${String(expectedPence)}`,
        );
      }
      if (
        intent.customerId === null ||
        (block.provider_customer_reference !== undefined &&
          intent.customerId !== block.provider_customer_reference)
      ) {
        throw mismatch('provider_customer_reference', 'the payment belongs to another customer');
      }
      if (
        block.payment_method_id !== undefined &&
        intent.paymentMethodId !== null &&
        intent.paymentMethodId !== block.payment_method_id
      ) {
        throw mismatch('payment_method_id', 'the payment was made with another card');
      }
      const existing = await findPaymentByProviderId(db, tenant, PROVIDER, intent.id);
      if (existing?.policyId != null)
        throw new AppError('CONFLICT', 'This payment has already been used for a policy');
      if (intent.paymentMethodId !== null)
        await (await gateway(tenant)).setDefaultPaymentMethod(intent.customerId, intent.paymentMethodId);
      const binding: Binding = {
        __binding: true,
        intent,
        amountPence: expectedPence,
        customerId: intent.customerId,
        paymentMethodId: intent.paymentMethodId,
      };
      return binding;
    },

    async recordBinding(trx, tenant, bindingPayment, ids, purpose) {
      const binding = bindingPayment as Binding;
      const now = clock.now();
      const existing = await findPaymentByProviderId(trx, tenant, PROVIDER, binding.intent.id);
      let paymentId: string;
      if (existing !== undefined) {
        paymentId = existing.id;
        // Bind the intent row created by CREATE_PAYMENT_INTENT; a concurrent bind of the same intent finds policy_id set.
        const updated = await trx
          .updateTable('payments')
          .set({
            policy_id: ids.policyId,
            policy_version_id: ids.policyVersionId,
            purpose,
            status: 'succeeded',
            payment_method_id: binding.paymentMethodId,
            attempts: 1,
            updated_at: now,
          })
          .where('id', '=', existing.id)
          .where('policy_id', 'is', null)
          .executeTakeFirst();
        await bumpPaymentsRevision(trx, ids.policyId);
        if (Number(updated.numUpdatedRows) === 0)
          throw new AppError('CONFLICT', 'This payment has already been used for a policy');
      } else {
        try {
          paymentId = (
            await insertPayment(trx, tenant, {
              policyId: ids.policyId,
              policyVersionId: ids.policyVersionId,
              kind: 'charge',
              purpose,
              status: 'succeeded',
              amountPence: binding.amountPence,
              currency: CURRENCY,
              provider: PROVIDER,
              providerPaymentId: binding.intent.id,
              providerCustomerId: binding.customerId,
              paymentMethodId: binding.paymentMethodId,
              at: now,
            })
          ).id;
        } catch (error) {
          if (isUniqueViolation(error))
            throw new AppError('CONFLICT', 'This payment has already been used for a policy', {
              cause: error,
            });
          throw error;
        }
      }
      await linkCustomer(trx, tenant, ids.userId, PROVIDER, binding.customerId, now);
      await recordEvent(
        trx,
        tenant,
        'payment.succeeded',
        {
          payment_reference: paymentId,
          policy_reference: await policyReferenceOf(trx, ids.policyId),
          policy_version_reference: ids.policyVersionId,
          amount: fromPence(binding.amountPence),
          currency: CURRENCY,
          provider_payment_reference: binding.intent.id,
        },
        now,
      );
    },

    async settleChange(trx, tenant, change: PolicyChange) {
      const now = clock.now();
      const term = {
        startSeconds: change.previous.policy.start_date,
        endSeconds: change.previous.policy.end_date,
      };
      const share = remainingShare(term, Math.floor(change.effectiveAt.getTime() / 1000));
      const paid = (await listPaymentsOfPolicy(trx, tenant, change.policyId)).filter(
        (p) => p.kind === 'charge' && (p.status === 'succeeded' || p.status === 'refunded'),
      );
      // The card that paid the term changed (its renewal premium, else the new business one) is the
      // one refunds go to, up to what it paid.
      const ofTerm = paid.filter(
        (p) =>
          (p.purpose === 'new_business' || p.purpose === 'renewal') &&
          p.policyVersionId !== null &&
          change.termVersionIds.includes(p.policyVersionId),
      );
      const original = ofTerm.at(-1) ?? paid.find((p) => p.purpose === 'new_business') ?? paid[0];
      if (original === undefined) return undefined; // a policy bound without card payments settles elsewhere
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
                refundablePence: original.amountPence - original.refundedPence,
              });
      // Adjustments: positive charges. Cancellations: positive refunds (it is what is owed back).
      const refund = change.kind === 'adjustment' ? amountPence < 0 : amountPence > 0;
      const magnitude = Math.abs(amountPence);
      if (magnitude === 0) return undefined;
      const settledPence = refund
        ? Math.min(magnitude, original.amountPence - original.refundedPence)
        : magnitude;
      const payment = await insertPayment(trx, tenant, {
        policyId: change.policyId,
        policyVersionId: change.policyVersionId,
        kind: refund ? 'refund' : 'charge',
        purpose: change.kind,
        status: 'pending',
        amountPence: settledPence,
        currency: CURRENCY,
        provider: PROVIDER,
        providerCustomerId: original.providerCustomerId,
        refundOf: refund ? original.id : null,
        at: now,
      });
      await jobs.enqueue(trx, SETTLE_QUEUE, { paymentId: payment.id });
      return { kind: refund ? ('refund' as const) : ('charge' as const), amountPence: settledPence };
    },

    async listForPolicy(executor, tenant, policyId) {
      // A payment's policy_version_id is a foreign key to this policy's versions, so it can be shown as is.
      const payments = await listPaymentsOfPolicy(executor, tenant, policyId);
      return payments.filter((p) => p.purpose !== 'intent').map((p) => view(p, p.policyVersionId));
    },
  };

  let collectTimer: NodeJS.Timeout | undefined;
  const service = {
    hooks,

    /** CREATE_PAYMENT_INTENT: a customer and an on-session intent whose card is saved for later charges. */
    async createIntent(
      tenant: Tenant,
      input: {
        amountPence: number;
        productReference: string;
        email?: string | undefined;
        name?: string | undefined;
      },
    ) {
      const now = clock.now();
      const row = await insertPayment(db, tenant, {
        policyId: null,
        policyVersionId: null,
        kind: 'charge',
        purpose: 'intent',
        status: 'pending',
        amountPence: input.amountPence,
        currency: CURRENCY,
        provider: PROVIDER,
        at: now,
      });
      try {
        const customer = await (
          await gateway(tenant)
        ).createCustomer({
          email: input.email ?? '',
          name: input.name ?? '',
          metadata: { milepost_payment: row.id },
          idempotencyKey: `payment:${row.id}:customer`,
        });
        const intent = await (
          await gateway(tenant)
        ).createPaymentIntent({
          amountPence: input.amountPence,
          currency: CURRENCY,
          customerId: customer.id,
          metadata: {
            milepost_payment: row.id,
            product_reference: input.productReference,
            company: tenant.companyId,
            environment: tenant.environment,
          },
          idempotencyKey: `payment:${row.id}:intent`,
        });
        await updatePayment(
          db,
          row.id,
          { providerPaymentId: intent.id, providerCustomerId: customer.id },
          now,
        );
        return {
          type: 'CREATE_PAYMENT_INTENT' as const,
          payment_provider_customer_ref: customer.id,
          payment_provider_transaction_ref: intent.id,
          payment_temporary_token: intent.clientSecret,
        };
      } catch (error) {
        await updatePayment(
          db,
          row.id,
          { status: 'canceled', errorMessage: error instanceof Error ? error.message : String(error) },
          now,
        );
        throw error;
      }
    },

    /** ADD_NEW_PAYMENT_METHOD: attaches the card, makes it the default, and retries what waited for a new card. */
    async addPaymentMethod(
      tenant: Tenant,
      policyReference: string,
      paymentMethodId: string,
    ): Promise<{ payment_method_id: string }> {
      const policy = await policyOf(tenant, policyReference);
      const customerId = await ensureCustomer(tenant, policy);
      const method = await (
        await gateway(tenant)
      ).attachPaymentMethod({
        paymentMethodId,
        customerId,
        idempotencyKey: `attach:${customerId}:${paymentMethodId}`,
      });
      await (await gateway(tenant)).setDefaultPaymentMethod(customerId, method.id);
      const now = clock.now();
      for (const waiting of await listAwaitingNewCard(db, tenant, policy.id)) {
        if (waiting.purpose === 'statement' || waiting.purpose === 'adjustment') {
          await updatePayment(db, waiting.id, { awaitingNewCard: false, nextAttemptAt: now }, now);
        }
      }
      await jobs.send(COLLECT_DUE_QUEUE, {});
      return { payment_method_id: method.id };
    },

    /** A saved card as the processor describes it (no number: brand, last 4, expiry), for subject access. */
    async cardDetails(tenant: Tenant, paymentMethodId: string) {
      const method = await (await gateway(tenant)).retrievePaymentMethod(paymentMethodId);
      return {
        brand: method.brand,
        last4: method.last4,
        exp_month: method.expMonth,
        exp_year: method.expYear,
      };
    },

    /** GET_PAYMENT_METHOD: the default card, or with `refund` the card that paid first (where refunds go). */
    async getPaymentMethod(tenant: Tenant, policyReference: string, refund: boolean) {
      const policy = await policyOf(tenant, policyReference);
      let methodId: string | null;
      if (refund) {
        const first = (await listPaymentsOfPolicy(db, tenant, policy.id)).find(
          (p) => p.kind === 'charge' && (p.status === 'succeeded' || p.status === 'refunded'),
        );
        methodId = first?.paymentMethodId ?? null;
      } else {
        methodId = (await (await gateway(tenant)).retrieveCustomer(await customerOf(tenant, policy)))
          .defaultPaymentMethodId;
      }
      if (methodId === null) throw notFound('payment method');
      const method = await (await gateway(tenant)).retrievePaymentMethod(methodId);
      return {
        type: 'GET_PAYMENT_METHOD' as const,
        payment_method_id: method.id,
        brand: method.brand,
        last4: method.last4,
        exp_month: method.expMonth,
        exp_year: method.expYear,
        refund,
      };
    },

    /** RETRY_PAYMENT: charges a version's failed payment now; 409 when it is already paid. */
    async retryPayment(
      tenant: Tenant,
      policyReference: string,
      versionReference: string,
    ): Promise<ChargeOutcome> {
      const policy = await policyOf(tenant, policyReference);
      const forVersion = (await listPaymentsOfPolicy(db, tenant, policy.id)).filter(
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
      const now = clock.now();
      const payment = await claimForAttempt(
        db,
        outstanding.id,
        ['failed', 'requires_action'],
        now,
        new Date(now.getTime() + CHARGE_LEASE_MS),
      );
      if (payment === undefined)
        throw new AppError('CONFLICT', 'A payment for that policy version is already being retried');
      return attemptCharge(payment, payment.attempts + 1);
    },

    /** The policyholders among these who pay by card here: a billing run charges only their statements. */
    usersWithCardOnFile: (userIds: readonly string[]) => usersWithCustomer(db, userIds, PROVIDER),

    /**
     * In the statements' own transaction: a pending charge for each owing statement whose policyholder
     * pays by card here, leased (see CHARGE_LEASE_MS). Because the charge is recorded with its statement,
     * a process that dies after the commit leaves it to the reconciler: no owing statement is left
     * uncharged. Returns the payment id of each statement (by version id) that will be charged.
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
      const owing = items.filter((item) => item.amountPence > 0);
      const customers = await customersOf(trx, owing, PROVIDER);
      const now = clock.now();
      return insertPendingCharges(
        trx,
        owing.flatMap((item) => {
          const providerCustomerId = customers.get(item.userId);
          // A policy bound without card payments is collected elsewhere: no payment record.
          return providerCustomerId === undefined
            ? []
            : [{ ...item, currency: CURRENCY, provider: PROVIDER, providerCustomerId }];
        }),
        now,
        new Date(now.getTime() + CHARGE_LEASE_MS),
      );
    },

    /** Records and attempts one statement's charge (undefined when its policyholder pays elsewhere). */
    async chargeStatement(
      tenant: Tenant,
      input: { policyId: string; policyVersionId: string; amountPence: number },
    ): Promise<ChargeOutcome | undefined> {
      const policy = await db
        .selectFrom('policies')
        .select(['user_id'])
        .where('id', '=', input.policyId)
        .executeTakeFirst();
      if (policy === undefined) return undefined;
      const recorded = await inTransaction(db, (trx) =>
        service.recordStatementCharges(trx, [{ tenant, userId: policy.user_id, ...input }]),
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
      const payment = await claimForAttempt(
        db,
        paymentId,
        ['pending'],
        now,
        new Date(now.getTime() + CHARGE_LEASE_MS),
      );
      // Already settled by another process (the reconciler took an expired lease): its outcome stands.
      if (payment === undefined) return service.outcomeOf(tenant, paymentId);
      try {
        return await attemptCharge(payment, payment.attempts + 1);
      } catch (error) {
        // The processor refused the request itself (e.g. below its minimum amount, or rate limited):
        // the statement stands; the payment is left for dunning to try again.
        const message = error instanceof Error ? error.message : String(error);
        await recordAttemptOutcome(
          db,
          payment.id,
          payment.attempts + 1,
          {
            status: 'failed',
            errorMessage: message,
            firstFailedAt: payment.firstFailedAt ?? now,
            nextAttemptAt:
              error instanceof AppError && error.retryable
                ? new Date(now.getTime() + RECONCILE_AFTER_MS)
                : null,
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
    },

    /** A payment's outcome as a statement shows it: the amount collected, or null and why not. */
    async outcomeOf(tenant: Tenant, paymentId: string): Promise<ChargeOutcome | undefined> {
      const payment = await findPayment(db, tenant, paymentId);
      if (payment === undefined) return undefined;
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

    /**
     * Dunning and reconciliation: every payment whose next attempt is due (a dunning retry, an expired
     * lease of an attempt whose process died, an outcome still unknown), claimed under SKIP LOCKED and
     * leased again while it is tried.
     */
    async collectDue(now: Date = clock.now()): Promise<number> {
      const leaseUntil = new Date(now.getTime() + CHARGE_LEASE_MS);
      const claimed = await inTransaction(db, async (trx) => {
        const due = await lockDuePayments(trx, now, COLLECT_BATCH);
        // NOTE: each lease bumps its policy's revision, so policies are locked in id order: two workers
        // leasing payments of the same two policies would otherwise deadlock.
        const byPolicy = due.toSorted((a, b) => (a.policyId ?? '').localeCompare(b.policyId ?? ''));
        for (const p of byPolicy) await updatePayment(trx, p.id, { nextAttemptAt: leaseUntil }, now);
        return due;
      });
      await mapConcurrent(claimed, COLLECT_CONCURRENCY, async (payment) => {
        try {
          if (payment.kind === 'refund') await executeRefund(payment);
          // A `pending` payment had an attempt in progress or of unknown outcome and recorded attempts − 1,
          // so attempts + 1 replays that attempt's idempotency key; after a decline it is the next attempt's.
          else await attemptCharge(payment, payment.attempts + 1);
        } catch (error) {
          logger.warn({ err: error, payment: payment.id }, 'payment attempt failed; will retry');
          await updatePayment(
            db,
            payment.id,
            { nextAttemptAt: new Date(now.getTime() + RECONCILE_AFTER_MS) },
            now,
          );
        }
      });
      return claimed.length;
    },

    /**
     * A processor webhook: verified against the raw body, acted on once per event id (the processed
     * event's primary key, in the same transaction as its effect). `payment_intent.succeeded` settles
     * the charge of that intent at once, whether it was in progress, declined or waiting for the
     * customer's 3-D Secure; events about a charge already settled change nothing.
     */
    async handleWebhook(
      rawBody: string | Uint8Array,
      signature: string | undefined,
    ): Promise<{ duplicate: boolean }> {
      const { environment, event } = gateways.verifyWebhook(rawBody, signature);
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        if (!(await markEventProcessed(trx, PROVIDER, event.id, event.type, now))) return { duplicate: true };
        if (event.kind === 'payment_intent' && event.type === 'payment_intent.succeeded')
          await recordIntentSucceeded(trx, environment, event.paymentIntent, now);
        return { duplicate: false };
      });
    },

    async listForPolicyReference(tenant: Tenant, policyReference: string): Promise<PaymentRecordView[]> {
      const policy = await policyOf(tenant, policyReference);
      return hooks.listForPolicy(db, tenant, policy.id);
    },

    /** Failed charges for follow-up (the console's dunning queue), with their policies. */
    async listFailed(tenant: Tenant, limit: number) {
      return (await listFailedCharges(db, tenant, limit)).map(({ payment, policyReference }) => ({
        ...view(payment, payment.policyVersionId),
        policy_reference: policyReference,
        awaiting_new_card: payment.awaitingNewCard,
      }));
    },

    async registerWorkers(): Promise<void> {
      await jobs.work<{ paymentId: string }>(SETTLE_QUEUE, async (data) => settle(data.paymentId));
      await jobs.work(COLLECT_DUE_QUEUE, async () => {
        await service.collectDue();
      });
      await jobs.schedule(COLLECT_DUE_QUEUE, '*/15 * * * *', {}, 'Europe/London');
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

export type PaymentService = ReturnType<typeof createPaymentService>;
