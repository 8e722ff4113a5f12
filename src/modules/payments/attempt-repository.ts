/**
 * A charge's attempts: due payments leased to one worker, one attempt at a time (so a replay after a
 * crash reuses its idempotency key), and each attempt's outcome recorded once.
 */
import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import {
  type AttemptPin,
  bumpRevisionOfPayment,
  columnsOf,
  toRecord,
  type PaymentChanges,
  type PaymentRecord,
  type PaymentStatus,
  updatePaymentIf,
} from './payment-repository.ts';

/** Payments whose next attempt (dunning or reconciliation) is due, locked and skipped by other workers. */
export async function lockDuePayments(db: Executor, now: Date, limit: number): Promise<PaymentRecord[]> {
  const rows = await db
    .selectFrom('payments')
    .selectAll()
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
  return rows.map(toRecord);
}

/**
 * Makes a declined charge due now for another try, with the policy's new card: only while it is
 * `failed`, so a charge being tried at this moment (leased, `pending`) is left to its attempt.
 */
export async function bringForwardFailed(db: Executor, id: string, at: Date): Promise<void> {
  await updatePaymentIf(db, id, columnsOf({ nextAttemptAt: at, awaitingNewCard: false }, at), (update) =>
    update.where('status', '=', 'failed'),
  );
}

/**
 * Takes a payment for one attempt: only a payment in one of `from` states, and only one caller at a
 * time (the row is updated where its state still allows it). The taken payment is `pending`, its
 * recorded attempts unchanged (so attempts + 1 is the attempt being made, and replaying it after a
 * crash reuses its idempotency key), and leased until `leaseUntil`.
 */
export async function claimForAttempt(
  db: Executor,
  id: string,
  from: readonly PaymentStatus[],
  at: Date,
  leaseUntil: Date,
): Promise<PaymentRecord | undefined> {
  const row = await db
    .updateTable('payments')
    .set({ status: 'pending', next_attempt_at: leaseUntil, updated_at: at })
    .where('id', '=', id)
    .where('status', 'in', [...from])
    .returningAll()
    .executeTakeFirst();
  if (row === undefined) return undefined;
  await bumpRevisionOfPayment(db, id);
  return toRecord(row);
}

/**
 * The card or mandate `attempt` asks the processor with, written before it asks: a replay of the
 * attempt (its outcome unknown, or its process killed mid-call) reads it back (`pinOf`) and asks with
 * the same under the same idempotency key, which the processor answers with the first charge. A card or
 * mandate chosen since would make it another request: refused under that key for a day, then a second
 * charge once the key expired.
 */
export async function pinAttempt(db: Executor, id: string, pin: AttemptPin): Promise<void> {
  await db
    .updateTable('payments')
    .set({
      attempt_pinned: pin.attempt,
      attempt_payment_method_id: pin.paymentMethodId,
      attempt_mandate_id: pin.mandateId,
    })
    .where('id', '=', id)
    .execute();
}

/** The method `attempt` was asked with before, when this is a replay of it. */
export const pinOf = (payment: PaymentRecord, attempt: number): AttemptPin | undefined =>
  payment.pin?.attempt === attempt ? payment.pin : undefined;

/**
 * Whether the payment's latest attempt was asked for and its outcome is not yet known: it is replayed
 * with its pinned method, and nothing else may move it to another mandate or day meanwhile.
 */
export const hasUnresolvedAttempt = (payment: PaymentRecord): boolean =>
  payment.pin?.attempt === payment.attempts + 1;

/**
 * Records an attempt's outcome once: the row changes only while it is not yet succeeded and this
 * attempt is not yet recorded, so that concurrent replays of one attempt (the same idempotency key)
 * announce it once. Returns whether this call recorded it.
 */
export async function recordAttemptOutcome(
  db: Executor,
  id: string,
  attempt: number,
  changes: PaymentChanges,
  at: Date,
  /** What `attempts` becomes: the attempt, or one less for an outcome still unknown (replayed later). */
  recordedAttempts = attempt,
): Promise<boolean> {
  return updatePaymentIf(db, id, columnsOf({ ...changes, attempts: recordedAttempts }, at), (update) =>
    update.where('status', '<>', 'succeeded').where('attempts', '<', attempt),
  );
}

/** The states of a charge that the processor may still collect: in progress, declined, or waiting for authentication. */
const OPEN_CHARGE: readonly PaymentStatus[] = ['pending', 'failed', 'requires_action', 'processing'];

/**
 * Records that the processor collected the charge `id` through its intent `providerPaymentId` (its
 * webhook said so): succeeded, no retry left. Only a charge still open and of that intent changes, so a
 * late or repeated event, or one about an intent the charge no longer uses, changes nothing. Returns
 * whether this call recorded it (the caller then announces it, once).
 */
export async function recordProcessorSuccess(
  db: Executor,
  id: string,
  providerPaymentId: string,
  paymentMethodId: string | null,
  at: Date,
): Promise<boolean> {
  return updatePaymentIf(
    db,
    id,
    {
      status: 'succeeded',
      next_attempt_at: null,
      awaiting_new_card: false,
      decline_code: null,
      error_message: null,
      ...(paymentMethodId === null ? {} : { payment_method_id: paymentMethodId }),
      // NOTE: a Direct Debit's cash arrives when the bank pays it, which is what this event says.
      settled_at: sql<Date | null>`case when method_type = 'bacs_debit' then ${at} else settled_at end`,
      updated_at: at,
    },
    (update) =>
      update
        .where('kind', '=', 'charge')
        .where('provider_payment_id', '=', providerPaymentId)
        .where('status', 'in', [...OPEN_CHARGE]),
  );
}

/**
 * Records the processor's refund for the refund `id` once: only while it has none, so a refund whose
 * job runs again (the processor had left it pending, or the job was delivered twice) adds to the paid
 * charge's refunded total once. Returns whether this call recorded it.
 */
export async function recordRefundSent(
  db: Executor,
  id: string,
  changes: PaymentChanges,
  at: Date,
): Promise<boolean> {
  return updatePaymentIf(db, id, columnsOf(changes, at), (update) =>
    update.where('provider_payment_id', 'is', null),
  );
}

/**
 * Records that the processor's refund `providerPaymentId`, of the refund `id`, failed after it was sent
 * (Stripe: `pending` or `succeeded` → `failed`): only from those states and only for that refund, so a
 * repeated or late event changes nothing. Returns whether this call recorded it (the caller then takes
 * the amount out of the charge's refunded total, once).
 */
export async function recordRefundFailed(
  db: Executor,
  id: string,
  providerPaymentId: string,
  failure: { readonly reason: string | null; readonly message: string },
  at: Date,
): Promise<boolean> {
  return updatePaymentIf(
    db,
    id,
    columnsOf(
      { status: 'failed', declineCode: failure.reason, errorMessage: failure.message, nextAttemptAt: null },
      at,
    ),
    (update) =>
      update
        .where('kind', '=', 'refund')
        .where('provider_payment_id', '=', providerPaymentId)
        .where('status', 'in', ['pending', 'succeeded']),
  );
}

/**
 * Records that a refund left `pending` by the processor succeeded: only while it is still `pending`, so
 * a `succeeded` arriving after its `failed` (events come in any order) never brings it back.
 */
export async function recordRefundSucceeded(
  db: Executor,
  id: string,
  providerPaymentId: string,
  at: Date,
): Promise<boolean> {
  return updatePaymentIf(db, id, columnsOf({ status: 'succeeded' }, at), (update) =>
    update
      .where('kind', '=', 'refund')
      .where('provider_payment_id', '=', providerPaymentId)
      .where('status', '=', 'pending'),
  );
}
