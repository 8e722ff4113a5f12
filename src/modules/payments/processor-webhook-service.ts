import type { Mandate, PaymentIntent, RefundUpdate, SetupIntent } from '../../integrations/payments/index.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Executor } from '../../schema.ts';
import { asTenant, type DataEnvironment } from '../companies/index.ts';
import { recordMandateChange, recordReturned } from './direct-debit-collections.ts';
import { addMandateMethod } from './direct-debit-service.ts';
import { findMandateByProviderId, findMandateBySetupIntent } from './mandate-repository.ts';
import { eventBase, PROVIDER, type PaymentContext } from './payment-context.ts';
import { recordProcessorSuccess, recordRefundFailed, recordRefundSucceeded } from './attempt-repository.ts';
import {
  findPaymentById,
  findPaymentByProviderIdAnyTenant,
  lockPaymentById,
  markEventProcessed,
  updatePayment,
} from './payment-repository.ts';
import { refundFailureMessage } from './rules/index.ts';

/**
 * A processor webhook: verified against the raw body, acted on once per event id (the processed
 * event's primary key, in the same transaction as its effect). `payment_intent.succeeded` settles
 * the charge of that intent at once, whether it was in progress, declined or waiting for the
 * customer's 3-D Secure; events about a charge already settled change nothing. Refund events
 * (`refund.failed`, `refund.updated`, `charge.refund.updated`) move a refund on as its status says
 * (see `recordRefundUpdate`).
 */
export async function handleWebhook(
  ctx: PaymentContext,
  rawBody: string | Uint8Array,
  signature: string | undefined,
): Promise<{ duplicate: boolean }> {
  const { environment, event } = ctx.gateways.verifyWebhook(rawBody, signature);
  const now = ctx.clock.now();
  if (event.kind === 'setup_intent' && event.type === 'setup_intent.succeeded')
    await recordSetupSucceeded(ctx, environment, event.setupIntent);
  // A mandate's change needs to know whether a card is on file: asked of the processor before the transaction.
  const mandateChange =
    event.kind === 'mandate' ? await mandateChangeOf(ctx, environment, event.mandate) : undefined;
  return inTransaction(ctx.db, async (trx) => {
    if (!(await markEventProcessed(trx, PROVIDER, event.id, event.type, now))) return { duplicate: true };
    if (event.kind === 'payment_intent' && event.type === 'payment_intent.succeeded')
      await recordIntentSucceeded(ctx, trx, environment, event.paymentIntent, now);
    if (event.kind === 'payment_intent' && event.type === 'payment_intent.payment_failed')
      await recordIntentFailed(ctx, trx, environment, event.paymentIntent, now);
    if (event.kind === 'refund') await recordRefundUpdate(ctx, trx, environment, event.refund, now);
    if (mandateChange !== undefined)
      await recordMandateChange(trx, ctx, mandateChange.mandate, mandateChange.change, now);
    return { duplicate: false };
  });
}

/**
 * The payer confirmed a SetupIntent of ours: its mandate is recorded as ADD_NEW_PAYMENT_METHOD would
 * (once: a later ADD_NEW_PAYMENT_METHOD, or a repeat of this event, finds it recorded), so a payer who
 * closed the page before the app sent the method still pays by Direct Debit.
 */
async function recordSetupSucceeded(
  ctx: PaymentContext,
  environment: DataEnvironment,
  setupIntent: SetupIntent,
): Promise<void> {
  const setup = await findMandateBySetupIntent(ctx.db, PROVIDER, setupIntent.id);
  if (setup?.environment !== environment || setup.status !== 'setup' || setupIntent.paymentMethodId === null)
    return;
  try {
    await addMandateMethod(
      ctx,
      asTenant(setup.companyId, environment),
      { id: setup.policyId },
      setupIntent.paymentMethodId,
    );
  } catch (error) {
    // A mandate the bank refused is not a method; the event is acknowledged all the same.
    ctx.logger.warn({ err: error, setupIntent: setupIntent.id }, 'a confirmed SetupIntent was not recorded');
  }
}

const MANDATE_STATUSES = { active: 'active', pending: 'pending', inactive: 'inactive' } as const;

/** The mandate a `mandate.updated` event is about, in the environment that signed it, and what changed. */
async function mandateChangeOf(ctx: PaymentContext, environment: DataEnvironment, mandate: Mandate) {
  const known = await findMandateByProviderId(ctx.db, PROVIDER, mandate.id);
  if (known === undefined || known.environment !== environment) return undefined;
  const status = MANDATE_STATUSES[mandate.status];
  if (status === known.status) return undefined;
  let cardOnFile = false;
  if (status === 'inactive') {
    const gateway = await ctx.gateway(asTenant(known.companyId, known.environment));
    const customer = await gateway.retrieveCustomer(known.providerCustomerId);
    cardOnFile = customer.defaultPaymentMethodId !== null;
  }
  return {
    mandate: known,
    change: { status, reason: mandate.revocationReason ?? mandate.networkStatus, cardOnFile },
  };
}

/**
 * The bank returned a Direct Debit collection unpaid (`payment_intent.payment_failed`): its failure code
 * drives what follows (see `recordReturned`). Card intents fail synchronously and are recorded then.
 */
export async function recordIntentFailed(
  ctx: PaymentContext,
  trx: Executor,
  environment: DataEnvironment,
  intent: PaymentIntent,
  now: Date,
): Promise<void> {
  const payment = await findPaymentByProviderIdAnyTenant(trx, PROVIDER, intent.id);
  if (payment?.environment !== environment || payment.methodType !== 'bacs_debit') return;
  const error = intent.lastPaymentError;
  await recordReturned(
    ctx,
    trx,
    payment,
    {
      attempt: payment.attempts,
      code: error?.code ?? error?.declineCode ?? null,
      message: error?.message ?? 'The bank did not pay the Direct Debit',
      intentId: intent.id,
    },
    now,
  );
}

/**
 * The processor collected `intent`: its charge (in the environment whose secret signed the event)
 * becomes succeeded and `payment.succeeded` is announced, once. Intents made for a new policy's
 * payment block are recorded when the policy binds them, not here.
 */
export async function recordIntentSucceeded(
  ctx: PaymentContext,
  trx: Executor,
  environment: DataEnvironment,
  intent: PaymentIntent,
  now: Date,
): Promise<void> {
  const payment = await findPaymentByProviderIdAnyTenant(trx, PROVIDER, intent.id);
  // NOTE: the sandbox signs events about any company's sandbox objects; they never touch production.
  if (payment === undefined || payment.environment !== environment || payment.purpose === 'intent') return;
  if (intent.amountReceivedPence !== payment.amountPence) {
    ctx.logger.warn(
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

/** The metadata key under which a refund carries the id of its refund record (see `executeRefund`). */
const REFUND_RECORD_KEY = 'milepost_payment';

/**
 * A refund event: the refund record (in the environment whose secret signed the event) follows the
 * processor's refund. `failed` or `canceled` (from `pending` or `succeeded`: a card refund can fail
 * days after it succeeded) makes it `failed` with the processor's reason, takes its amount out of the
 * charge's refunded total (so it is refundable again: it was never returned) and announces
 * `payment.refund_failed`; `succeeded` makes a `pending` refund succeeded. Each happens once: a repeated
 * event, or one arriving after a later one (a `succeeded` after the `failed`), changes nothing.
 * A refund we never made is acknowledged and left alone.
 */
export async function recordRefundUpdate(
  ctx: PaymentContext,
  trx: Executor,
  environment: DataEnvironment,
  refund: RefundUpdate,
  now: Date,
): Promise<void> {
  const payment = await findPaymentByProviderIdAnyTenant(trx, PROVIDER, refund.id);
  if (payment === undefined) {
    const recordId = refund.metadata[REFUND_RECORD_KEY];
    const record = recordId === undefined ? undefined : await findPaymentByIdIfUuid(trx, recordId);
    // NOTE: our refund, made but not yet recorded (the processor answered; its job has still to write
    // it): refused, so that the processor delivers the event again once the refund is on the record.
    if (record?.kind === 'refund' && record.environment === environment && record.providerPaymentId === null)
      throw new AppError('CONFLICT', `refund ${refund.id} is not recorded yet; deliver the event again`, {
        retryable: true,
      });
    ctx.logger.info(
      { refund: refund.id, status: refund.status },
      'processor refund event about a refund not on our records; ignored',
    );
    return;
  }
  if (payment.environment !== environment || payment.kind !== 'refund') return;
  if (refund.status === 'succeeded') {
    await recordRefundSucceeded(trx, payment.id, refund.id, now);
    return;
  }
  if (refund.status !== 'failed' && refund.status !== 'canceled') return;
  const reason = refund.failureReason ?? (refund.status === 'canceled' ? 'canceled' : null);
  const message = refundFailureMessage(reason);
  if (!(await recordRefundFailed(trx, payment.id, refund.id, { reason, message }, now))) return;
  // The charge refunded gives back what this refund took from it, under its lock (other refunds of it
  // may be recorded at the same moment).
  const original = payment.refundOf === null ? undefined : await lockPaymentById(trx, payment.refundOf);
  if (original !== undefined) {
    const refundedPence = Math.max(0, original.refundedPence - payment.amountPence);
    await updatePayment(
      trx,
      original.id,
      {
        refundedPence,
        ...(original.status === 'refunded' && refundedPence < original.amountPence
          ? { status: 'succeeded' as const }
          : {}),
      },
      now,
    );
  }
  ctx.logger.warn(
    { payment: payment.id, refund: refund.id, reason },
    'a refund failed at the processor: the amount is owed to the policyholder still',
  );
  await recordEvent(
    trx,
    { companyId: payment.companyId, environment: payment.environment },
    'payment.refund_failed',
    {
      ...(await eventBase(trx, payment)),
      refund_of: payment.refundOf,
      decline_code: reason,
      error_message: message,
    },
    now,
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Metadata is the sender's text: only a uuid is looked up (the column's type refuses anything else). */
const findPaymentByIdIfUuid = (trx: Executor, id: string) =>
  UUID.test(id) ? findPaymentById(trx, id) : Promise.resolve(undefined);
