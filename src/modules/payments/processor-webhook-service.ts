import type { Mandate, PaymentIntent, SetupIntent } from '../../integrations/payments/index.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Executor } from '../../schema.ts';
import { asTenant, type DataEnvironment } from '../companies/index.ts';
import { recordMandateChange, recordReturned } from './direct-debit-collections.ts';
import { addMandateMethod } from './direct-debit-service.ts';
import { findMandateByProviderId, findMandateBySetupIntent } from './mandate-repository.ts';
import { eventBase, PROVIDER, type PaymentContext } from './payment-context.ts';
import { recordProcessorSuccess } from './attempt-repository.ts';
import { findPaymentByProviderIdAnyTenant, markEventProcessed } from './payment-repository.ts';

/**
 * A processor webhook: verified against the raw body, acted on once per event id (the processed
 * event's primary key, in the same transaction as its effect). `payment_intent.succeeded` settles
 * the charge of that intent at once, whether it was in progress, declined or waiting for the
 * customer's 3-D Secure; events about a charge already settled change nothing.
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
