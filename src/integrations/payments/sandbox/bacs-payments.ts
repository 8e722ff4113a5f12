import { londonMidnight } from '../../../platform/london-calendar.ts';
import { addWorkingDays, firstWorkingDayFrom } from '../../../platform/working-days.ts';
import {
  bacsBehaviourOfLast4,
  type BacsPaymentMethodObject,
  type MandateObject,
  type SettlementObject,
  type TestClockObject,
} from './bacs-objects.ts';
import type { EngineContext, RequestInfo } from './engine-context.ts';
import { invalidRequest } from './errors.ts';
import { docUrl, newId, type ChargeObject, type PaymentIntentObject } from './objects.ts';
import type { SandboxObject } from './store.ts';

/** What the sandbox does on its own: events with no request, as Stripe reports them. */
const NO_REQUEST: RequestInfo = { id: null, idempotencyKey: null };

const SECONDS_PER_HOUR = 3600;
/** Stripe submits Bacs payments confirmed after 20:00 UTC on the next working day. */
const SUBMISSION_CUTOFF_HOUR_UTC = 20;
/** Stripe: a Bacs payment under a mandate in place succeeds or fails three working days after submission. */
const SETTLEMENT_WORKING_DAYS = 3;

/**
 * When a Bacs payment confirmed at `confirmedAt` (Unix seconds) settles, in Unix seconds: 00:00 London
 * time on the third working day (England and Wales) after the working day it is submitted to Bacs.
 */
export function bacsSettlesAt(confirmedAt: number): number {
  const afterCutoff = new Date((confirmedAt + (24 - SUBMISSION_CUTOFF_HOUR_UTC) * SECONDS_PER_HOUR) * 1000);
  const submittedOn = firstWorkingDayFrom(afterCutoff.toISOString().slice(0, 10));
  const settlesOn = addWorkingDays(submittedOn, SETTLEMENT_WORKING_DAYS);
  return Math.floor(londonMidnight(settlesOn).getTime() / 1000);
}

export const isBacs = (pm: SandboxObject): pm is BacsPaymentMethodObject => pm['type'] === 'bacs_debit';

/** The active mandate a Bacs payment runs under: the one named, or the payment method's newest. */
export async function activeMandateFor(
  ctx: EngineContext,
  pm: BacsPaymentMethodObject,
  mandateId: string | undefined,
  currency: string,
): Promise<MandateObject> {
  if (currency !== 'gbp')
    throw invalidRequest('Bacs Direct Debit payments must be in gbp.', {
      param: 'currency',
      code: 'payment_intent_invalid_parameter',
    });
  const mandate =
    mandateId === undefined
      ? ((await ctx.store.find('mandate', { payment_method: pm.id }, 1))[0] as MandateObject | undefined)
      : await ctx.load<MandateObject>(mandateId, 'mandate', 'mandate', 'mandate');
  if (mandate?.payment_method !== pm.id)
    throw invalidRequest(`The PaymentMethod ${pm.id} has no mandate: set it up with a SetupIntent first.`, {
      param: 'mandate',
      code: 'payment_intent_mandate_invalid',
    });
  if (mandate.status !== 'active')
    throw invalidRequest(`The mandate ${mandate.id} is ${mandate.status} and cannot be debited.`, {
      param: 'mandate',
      code: 'payment_intent_mandate_invalid',
    });
  return mandate;
}

/**
 * Submits a confirmed Bacs payment: the intent is `processing` with a pending charge until its
 * settlement (see `bacsSettlesAt`, on the customer's test clock if it has one), then succeeds or fails.
 */
export async function submitBacsPayment(
  ctx: EngineContext,
  intent: PaymentIntentObject,
  pm: BacsPaymentMethodObject,
  mandate: MandateObject,
  request: RequestInfo,
): Promise<PaymentIntentObject> {
  const clock = await testClockOf(ctx, intent.customer);
  const charge = bacsCharge(intent, pm, mandate, ctx.now());
  await ctx.store.put(charge);
  const processing: PaymentIntentObject = {
    ...intent,
    status: 'processing',
    payment_method: pm.id,
    payment_method_types: ['bacs_debit'],
    payment_method_options: { bacs_debit: { mandate_options: {} } },
    latest_charge: charge.id,
    last_payment_error: null,
    next_action: null,
  };
  await ctx.store.put(processing);
  const settlement: SettlementObject = {
    id: newId('sbxsettle'),
    object: 'sandbox_settlement',
    created: ctx.now(),
    payment_intent: intent.id,
    settles_at: bacsSettlesAt(clock?.frozen_time ?? ctx.now()),
    test_clock: clock?.id ?? null,
    status: 'pending',
  };
  await ctx.store.put(settlement);
  await ctx.emit('payment_intent.processing', processing, request);
  return processing;
}

async function testClockOf(
  ctx: EngineContext,
  customer: string | null,
): Promise<TestClockObject | undefined> {
  if (customer === null) return undefined;
  const clockId = (await ctx.loadCustomer(customer)).test_clock;
  return clockId === null
    ? undefined
    : ctx.load<TestClockObject>(clockId, 'test_helpers.test_clock', 'test clock');
}

function bacsCharge(
  intent: PaymentIntentObject,
  pm: BacsPaymentMethodObject,
  mandate: MandateObject,
  created: number,
): ChargeObject {
  return {
    id: newId('py'),
    object: 'charge',
    amount: intent.amount,
    amount_captured: 0,
    amount_refunded: 0,
    balance_transaction: null,
    billing_details: pm.billing_details as unknown as ChargeObject['billing_details'],
    captured: false,
    created,
    currency: intent.currency,
    customer: intent.customer,
    description: intent.description,
    disputed: false,
    failure_code: null,
    failure_message: null,
    livemode: false,
    metadata: intent.metadata,
    outcome: {
      network_status: 'approved_by_network',
      reason: null,
      risk_level: 'not_assessed',
      type: 'authorized',
    },
    paid: false,
    payment_intent: intent.id,
    payment_method: pm.id,
    payment_method_details: {
      bacs_debit: {
        fingerprint: pm.bacs_debit.fingerprint,
        last4: pm.bacs_debit.last4,
        mandate: mandate.id,
        sort_code: pm.bacs_debit.sort_code,
      },
      type: 'bacs_debit',
    },
    receipt_url: null,
    refunded: false,
    status: 'pending',
  };
}

/**
 * Settles what is due: payments of customers on `testClock` (null: those on no test clock) whose
 * settlement time is at or before `until` (Unix seconds), oldest first. Answers the intents settled.
 */
export async function settleDue(
  ctx: EngineContext,
  testClock: string | null,
  until: number,
): Promise<PaymentIntentObject[]> {
  const pending = (await ctx.store.find(
    'sandbox_settlement',
    { status: 'pending', test_clock: testClock },
    10_000,
  )) as SettlementObject[];
  const due = pending.filter((s) => s.settles_at <= until).sort((a, b) => a.settles_at - b.settles_at);
  const settled: PaymentIntentObject[] = [];
  for (const settlement of due) {
    const intent = await ctx.withLock(settlement.payment_intent, () => settle(ctx, settlement.id));
    if (intent !== undefined) settled.push(intent);
  }
  return settled;
}

/** One payment's outcome, by its test account: succeeded (and perhaps disputed), or failed with Stripe's code. */
async function settle(ctx: EngineContext, settlementId: string): Promise<PaymentIntentObject | undefined> {
  const settlement = await ctx.load<SettlementObject>(settlementId, 'sandbox_settlement', 'settlement');
  if (settlement.status !== 'pending') return undefined;
  await ctx.store.put({ ...settlement, status: 'settled' });
  const intent = await ctx.loadIntent(settlement.payment_intent);
  if (intent.status !== 'processing' || intent.latest_charge === null || intent.payment_method === null)
    return undefined;
  const charge = await ctx.loadCharge(intent.latest_charge);
  const pm = await ctx.load<BacsPaymentMethodObject>(
    intent.payment_method,
    'payment_method',
    'PaymentMethod',
  );
  const details = charge.payment_method_details;
  const mandateId = details.type === 'bacs_debit' ? String(details.bacs_debit['mandate']) : '';
  const mandate = await ctx.load<MandateObject>(mandateId, 'mandate', 'mandate');
  const behaviour = bacsBehaviourOfLast4(pm.bacs_debit.last4);
  if (mandate.status !== 'active') {
    // NOTE: the instruction was cancelled before the debit reached the payer's bank: Bacs returns it unpaid.
    return fail(
      ctx,
      { intent, charge, pm },
      { code: 'debit_not_authorized', message: 'The mandate was cancelled.' },
    );
  }
  if (behaviour.kind === 'fail') {
    const failed = await fail(ctx, { intent, charge, pm }, behaviour);
    if (behaviour.revokesMandate) await revoke(ctx, mandate, behaviour.code, NO_REQUEST);
    return failed;
  }
  const succeeded = await succeed(ctx, intent, charge);
  if (behaviour.kind === 'dispute') await dispute(ctx, succeeded, charge);
  return succeeded;
}

async function succeed(
  ctx: EngineContext,
  intent: PaymentIntentObject,
  charge: ChargeObject,
): Promise<PaymentIntentObject> {
  const paid: ChargeObject = {
    ...charge,
    amount_captured: charge.amount,
    balance_transaction: newId('txn'),
    captured: true,
    paid: true,
    status: 'succeeded',
  };
  await ctx.store.put(paid);
  const succeeded: PaymentIntentObject = { ...intent, status: 'succeeded', amount_received: intent.amount };
  await ctx.store.put(succeeded);
  await ctx.emit('charge.succeeded', paid, NO_REQUEST);
  await ctx.emit('payment_intent.succeeded', succeeded, NO_REQUEST);
  return succeeded;
}

async function fail(
  ctx: EngineContext,
  payment: { intent: PaymentIntentObject; charge: ChargeObject; pm: BacsPaymentMethodObject },
  failure: { code: string; message: string },
): Promise<PaymentIntentObject> {
  const { intent, charge, pm } = payment;
  const failedCharge: ChargeObject = {
    ...charge,
    failure_code: failure.code,
    failure_message: failure.message,
    outcome: {
      network_status: 'declined_by_network',
      reason: failure.code,
      risk_level: 'not_assessed',
      type: 'issuer_declined',
    },
    status: 'failed',
  };
  await ctx.store.put(failedCharge);
  const failed: PaymentIntentObject = {
    ...intent,
    status: 'requires_payment_method',
    payment_method: null,
    last_payment_error: {
      type: 'card_error',
      code: failure.code,
      decline_code: failure.code,
      doc_url: docUrl(failure.code),
      message: failure.message,
      charge: charge.id,
      payment_method: pm as unknown as NonNullable<
        PaymentIntentObject['last_payment_error']
      >['payment_method'],
    },
  };
  await ctx.store.put(failed);
  await ctx.emit('charge.failed', failedCharge, NO_REQUEST);
  await ctx.emit('payment_intent.payment_failed', failed, NO_REQUEST);
  return failed;
}

/** The payer's bank cancels the mandate (Bacs ADDACS): `mandate.updated`, inactive, never debited again. */
export async function revoke(
  ctx: EngineContext,
  mandate: MandateObject,
  reason: string,
  request: RequestInfo,
): Promise<MandateObject> {
  const details = mandate.payment_method_details;
  const revoked: MandateObject = {
    ...mandate,
    status: 'inactive',
    payment_method_details: {
      ...details,
      bacs_debit: { ...details.bacs_debit, network_status: 'revoked', revocation_reason: reason },
    },
  };
  await ctx.store.put(revoked);
  await ctx.emit('mandate.updated', revoked, request);
  return revoked;
}

/** An indemnity claim under the Direct Debit Guarantee: the payer's bank takes the money back at once. */
async function dispute(ctx: EngineContext, intent: PaymentIntentObject, charge: ChargeObject): Promise<void> {
  const disputed = { ...(await ctx.loadCharge(charge.id)), disputed: true };
  await ctx.store.put(disputed);
  const object = {
    id: newId('du'),
    object: 'dispute',
    amount: charge.amount,
    balance_transactions: [],
    charge: charge.id,
    created: ctx.now(),
    currency: charge.currency,
    evidence_details: { due_by: null, has_evidence: false, past_due: false, submission_count: 0 },
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: intent.id,
    payment_method_details: { type: 'bacs_debit' },
    reason: 'debit_not_authorized',
    status: 'lost',
  };
  await ctx.store.put(object);
  await ctx.emit('charge.dispute.created', object, NO_REQUEST);
}
