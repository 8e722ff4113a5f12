import type { CollectionResult } from '../../integrations/payments/index.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { recordEvent } from '../../platform/events.ts';
import { londonDate, londonMidnight } from '../../platform/london-calendar.ts';
import { fromPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { policyholderContacts } from '../accounts/index.ts';
import { asTenant, findDirectDebitSettings, type DataEnvironment, type Tenant } from '../companies/index.ts';
import {
  directDebitAdvanceNoticeEmail,
  directDebitMandateEndedEmail,
  paymentFailedEmail,
} from '../notifications/index.ts';
import { policyReferences } from '../policies/index.ts';
import { attemptCharge } from './charge-service.ts';
import {
  insertScheduledCollections,
  recordCollectionReturn,
  switchCollectionToCard,
} from './collection-repository.ts';
import {
  defaultMandatesOf,
  findDefaultMandate,
  findMandateById,
  updateMandateStatus,
  type MandateRecord,
} from './mandate-repository.ts';
import {
  CURRENCY,
  eventBase,
  PROVIDER,
  RECONCILE_AFTER_MS,
  type ChargeOutcome,
  type PaymentContext,
} from './payment-context.ts';
import { pinAttempt, pinOf, recordAttemptOutcome } from './attempt-repository.ts';
import { findPaymentById, updatePayment, type PaymentRecord } from './payment-repository.ts';
import { collectionDay, DEFAULT_NOTICE_WORKING_DAYS, returnedCollection } from './rules/direct-debit.ts';

/** A statement's amount owed by a policy, as `recordStatementCharges` receives it. */
export interface OwedStatement {
  readonly tenant: Tenant;
  readonly userId: string;
  readonly policyId: string;
  readonly policyVersionId: string;
  readonly amountPence: number;
}

/** Who a policy's Direct Debit emails go to. */
export interface PolicyContact {
  readonly userId: string;
  readonly email: string;
  readonly firstNames: string;
  readonly policyReference: string;
}

/** The policyholders' names, addresses and policy references of these policies, in one query. */
export async function contactsOf(
  trx: Executor,
  policyIds: readonly string[],
): Promise<Map<string, PolicyContact>> {
  if (policyIds.length === 0) return new Map();
  const rows = await trx
    .selectFrom(policyReferences(trx).as('p'))
    .innerJoin(policyholderContacts(trx).as('u'), 'u.id', 'p.user_id')
    .select(['p.id as policy_id', 'p.policy_reference', 'u.id', 'u.email', 'u.first_names'])
    .where('p.id', 'in', [...new Set(policyIds)])
    .execute();
  return new Map(
    rows.map((r) => [
      r.policy_id,
      { userId: r.id, email: r.email, firstNames: r.first_names, policyReference: r.policy_reference },
    ]),
  );
}

/** The company's name and advance notice (working days), read once per company in the caller's transaction. */
export function noticeSettings(trx: Executor) {
  const cache = new Map<string, Promise<{ name: string; noticeWorkingDays: number }>>();
  return (companyId: string) => {
    let found = cache.get(companyId);
    if (found === undefined) {
      found = findDirectDebitSettings(trx, companyId).then(
        (s) => s ?? { name: 'your insurer', noticeWorkingDays: DEFAULT_NOTICE_WORKING_DAYS },
      );
      cache.set(companyId, found);
    }
    return found;
  };
}

/**
 * In the statements' own transaction: each owing statement of a policy whose default method is a
 * Direct Debit mandate (active, or pending at Bacs) is scheduled for collection on the day its
 * company's notice period (working days) after today, and its advance notice is queued with it.
 * Returns the collections' payment ids by version id, and the statements left for cards.
 */
export async function scheduleStatementCollections(
  ctx: PaymentContext,
  trx: Executor,
  owing: readonly OwedStatement[],
): Promise<{ scheduled: Map<string, string>; byCard: OwedStatement[] }> {
  const mandates = await defaultMandatesOf(
    trx,
    owing.map((o) => o.policyId),
  );
  const usable = (m: MandateRecord | undefined): m is MandateRecord =>
    m !== undefined && (m.status === 'active' || m.status === 'pending') && m.providerMandateId !== null;
  const byDebit = owing.filter((o) => usable(mandates.get(o.policyId)));
  const byCard = owing.filter((o) => !usable(mandates.get(o.policyId)));
  if (byDebit.length === 0) return { scheduled: new Map(), byCard };
  const now = ctx.clock.now();
  const today = londonDate(now);
  const settings = noticeSettings(trx);
  const planned = await Promise.all(
    byDebit.map(async (o) => {
      const mandate = mandates.get(o.policyId) as MandateRecord;
      const company = await settings(o.tenant.companyId);
      const collectOn = collectionDay(today, company.noticeWorkingDays);
      return { o, mandate, company, collectOn };
    }),
  );
  const scheduled = await insertScheduledCollections(
    trx,
    planned.map(({ o, mandate, collectOn }) => ({
      tenant: o.tenant,
      policyId: o.policyId,
      policyVersionId: o.policyVersionId,
      amountPence: o.amountPence,
      currency: CURRENCY,
      provider: PROVIDER,
      providerCustomerId: mandate.providerCustomerId,
      mandateId: mandate.id,
      collectOn,
      dueAt: londonMidnight(collectOn),
    })),
    now,
  );
  const contacts = await contactsOf(
    trx,
    planned.map((p) => p.o.policyId),
  );
  await ctx.notifications.queueEmails(
    trx,
    planned.flatMap(({ o, mandate, company, collectOn }) => {
      const person = contacts.get(o.policyId);
      if (person === undefined) return [];
      return [
        {
          scope: { companyId: o.tenant.companyId, environment: o.tenant.environment },
          to: person.email,
          userId: person.userId,
          template: 'direct-debit-advance-notice',
          email: directDebitAdvanceNoticeEmail({
            firstNames: person.firstNames,
            policyReference: person.policyReference,
            companyName: company.name,
            noticeWorkingDays: company.noticeWorkingDays,
            mandateReference: mandate.reference ?? mandate.providerMandateId ?? '',
            accountLast4: mandate.accountLast4,
            amountPence: o.amountPence,
            currency: CURRENCY,
            collectOn,
            retry: false,
          }),
        },
      ];
    }),
  );
  return { scheduled, byCard };
}

const tenantOfPayment = (payment: PaymentRecord): Tenant =>
  asTenant(payment.companyId, payment.environment as DataEnvironment);

type AskableMandate = MandateRecord & { providerMandateId: string; paymentMethodId: string };

const askable = (m: MandateRecord | undefined): m is AskableMandate =>
  m?.providerMandateId != null && m.paymentMethodId !== null;

/**
 * On its day (the worker, outside any transaction): asks the processor for the collection under its
 * mandate, keyed by payment id and attempt, and records it `processing`. Should the mandate no longer
 * be usable (ended, or no longer the policy's method), the amount is charged to the card on file instead.
 * A replay of an attempt (its outcome unknown) asks as the attempt did, with the mandate or card pinned
 * to it, whatever the policy's method is since: the same request, under the same key.
 */
export async function attemptCollection(
  ctx: PaymentContext,
  payment: PaymentRecord,
  attempt: number,
): Promise<ChargeOutcome> {
  const now = ctx.clock.now();
  const pinned = pinOf(payment, attempt);
  if (pinned?.mandateId === null) return attemptCharge(ctx, payment, attempt);
  const pinnedMandate =
    pinned?.mandateId == null ? undefined : await findMandateById(ctx.db, pinned.mandateId);
  if (askable(pinnedMandate)) return collectUnder(ctx, payment, pinnedMandate, attempt, now);
  const usable = (m: MandateRecord | undefined): m is AskableMandate =>
    askable(m) && m.status !== 'inactive' && m.isDefault;
  let mandate = payment.mandateId === null ? undefined : await findMandateById(ctx.db, payment.mandateId);
  if (!usable(mandate) && payment.policyId !== null) {
    // NOTE: the policyholder replaced the mandate since the notice: the policy's mandate now collects it.
    mandate = await findDefaultMandate(ctx.db, payment.policyId);
    if (usable(mandate)) await updatePayment(ctx.db, payment.id, { mandateId: mandate.id }, now);
  }
  if (!usable(mandate)) {
    // NOTE: the mandate is gone (or the policyholder chose a card since): a card on file pays instead.
    await switchCollectionToCard(ctx.db, payment.id, now);
    const asCard = await findPaymentById(ctx.db, payment.id);
    return attemptCharge(ctx, asCard ?? payment, attempt);
  }
  await pinAttempt(ctx.db, payment.id, {
    attempt,
    paymentMethodId: mandate.paymentMethodId,
    mandateId: mandate.id,
  });
  return collectUnder(ctx, payment, mandate, attempt, now);
}

/** Asks the processor for the collection under `mandate`, keyed by payment id and attempt; records it. */
async function collectUnder(
  ctx: PaymentContext,
  payment: PaymentRecord,
  mandate: AskableMandate,
  attempt: number,
  now: Date,
): Promise<ChargeOutcome> {
  const result = await (
    await ctx.gateway(tenantOfPayment(payment))
  ).collectDirectDebit({
    customerId: mandate.providerCustomerId,
    paymentMethodId: mandate.paymentMethodId,
    mandateId: mandate.providerMandateId,
    amountPence: payment.amountPence,
    metadata: {
      milepost_payment: payment.id,
      company: payment.companyId,
      environment: payment.environment,
    },
    idempotencyKey: `payment:${payment.id}:attempt:${String(attempt)}`,
  });
  return recordCollectionResult(ctx, payment, mandate, attempt, result, now);
}

async function recordCollectionResult(
  ctx: PaymentContext,
  payment: PaymentRecord,
  mandate: MandateRecord,
  attempt: number,
  result: CollectionResult,
  now: Date,
): Promise<ChargeOutcome> {
  const base = { payment_reference: payment.id };
  switch (result.outcome) {
    case 'processing':
    case 'succeeded': {
      const settled = result.outcome === 'succeeded';
      await inTransaction(ctx.db, async (trx) => {
        const recorded = await recordAttemptOutcome(
          trx,
          payment.id,
          attempt,
          {
            status: settled ? 'succeeded' : 'processing',
            providerPaymentId: result.intentId,
            paymentMethodId: mandate.paymentMethodId,
            nextAttemptAt: null,
            awaitingNewCard: false,
            ...(settled ? { settledAt: now, declineCode: null, errorMessage: null } : {}),
          },
          now,
        );
        if (!recorded || !settled) return;
        await recordEvent(
          trx,
          { companyId: payment.companyId, environment: payment.environment },
          'payment.succeeded',
          { ...(await eventBase(trx, payment)), provider_payment_reference: result.intentId },
          now,
        );
      });
      return settled
        ? { ...base, payment_amount: fromPence(payment.amountPence), status: 'succeeded' }
        : {
            ...base,
            payment_amount: null,
            error_message: `Submitted for collection by Direct Debit on ${payment.collectOn ?? londonDate(now)}`,
            status: 'processing',
          };
    }
    case 'unknown':
      // NOTE: never ask again with a new key; replay this attempt's key later to learn what happened.
      await recordAttemptOutcome(
        ctx.db,
        payment.id,
        attempt,
        { errorMessage: result.message, nextAttemptAt: new Date(now.getTime() + RECONCILE_AFTER_MS) },
        now,
        attempt - 1,
      );
      return { ...base, payment_amount: null, error_message: result.message, status: payment.status };
    case 'failed':
      await inTransaction(ctx.db, (trx) =>
        recordReturned(ctx, trx, payment, { attempt, code: result.code, message: result.message }, now),
      );
      return { ...base, payment_amount: null, error_message: result.message, status: 'failed' };
  }
}

/**
 * A collection refused at once or returned unpaid by the bank (the processor's webhook), in `trx`:
 * insufficient funds is presented once more after a new advance notice; anything else asks the
 * policyholder to update their payment method (and ends the mandate when the code says it is gone).
 * `intentId` set: only a collection still `processing` under that intent changes (a webhook).
 */
export async function recordReturned(
  ctx: PaymentContext,
  trx: Executor,
  payment: PaymentRecord,
  failure: { attempt: number; code: string | null; message: string; intentId?: string },
  now: Date,
): Promise<void> {
  const decision = returnedCollection(failure.code, failure.attempt);
  const scope = { companyId: payment.companyId, environment: payment.environment };
  const settings = await noticeSettings(trx)(payment.companyId);
  const retryOn =
    decision.action === 'retry' ? collectionDay(londonDate(now), settings.noticeWorkingDays) : null;
  const changes = {
    status: retryOn === null ? ('failed' as const) : ('scheduled' as const),
    declineCode: failure.code,
    errorMessage: failure.message,
    firstFailedAt: payment.firstFailedAt ?? now,
    nextAttemptAt: retryOn === null ? null : londonMidnight(retryOn),
    awaitingNewCard: retryOn === null,
    attempts: failure.attempt,
    ...(retryOn === null ? {} : { collectOn: retryOn, noticeSentAt: now }),
  };
  const recorded =
    failure.intentId === undefined
      ? await recordAttemptOutcome(trx, payment.id, failure.attempt, changes, now)
      : await recordCollectionReturn(trx, payment.id, failure.intentId, changes, now);
  if (!recorded) return;
  const mandate = payment.mandateId === null ? undefined : await findMandateById(trx, payment.mandateId);
  if (decision.action === 'update_method' && decision.mandateEnded && mandate !== undefined)
    await updateMandateStatus(trx, mandate.id, 'inactive', failure.code, now);
  await recordEvent(
    trx,
    scope,
    'payment.failed',
    {
      ...(await eventBase(trx, payment)),
      decline_code: failure.code,
      error_message: failure.message,
      next_attempt_at: changes.nextAttemptAt?.toISOString() ?? null,
    },
    now,
  );
  const person = (await contactsOf(trx, payment.policyId === null ? [] : [payment.policyId])).get(
    payment.policyId ?? '',
  );
  if (person === undefined) return;
  const email =
    retryOn !== null && mandate !== undefined
      ? directDebitAdvanceNoticeEmail({
          firstNames: person.firstNames,
          policyReference: person.policyReference,
          companyName: settings.name,
          noticeWorkingDays: settings.noticeWorkingDays,
          mandateReference: mandate.reference ?? mandate.providerMandateId ?? '',
          accountLast4: mandate.accountLast4,
          amountPence: payment.amountPence,
          currency: payment.currency,
          collectOn: retryOn,
          retry: true,
        })
      : paymentFailedEmail({
          firstNames: person.firstNames,
          policyReference: person.policyReference,
          amountPence: payment.amountPence,
          currency: payment.currency,
          reason: failure.message,
          nextAttemptOn: null,
        });
  await ctx.notifications.queueEmail(
    trx,
    scope,
    retryOn === null ? 'payment-failed' : 'direct-debit-advance-notice',
    person.email,
    email,
    person.userId,
  );
}

/**
 * The processor says a mandate changed (`mandate.updated`): recorded; once inactive it is no longer the
 * policy's method, the policyholder is told, and its next collection falls back to a card on file.
 * `cardOnFile` was looked up before this transaction (no processor call inside one).
 */
export async function recordMandateChange(
  trx: Executor,
  ctx: PaymentContext,
  mandate: MandateRecord,
  change: { status: MandateRecord['status']; reason: string | null; cardOnFile: boolean },
  now: Date,
): Promise<void> {
  const before = await updateMandateStatus(trx, mandate.id, change.status, change.reason, now);
  if (before === undefined || change.status !== 'inactive') return;
  const person = (await contactsOf(trx, [mandate.policyId])).get(mandate.policyId);
  if (person === undefined) return;
  await ctx.notifications.queueEmail(
    trx,
    { companyId: mandate.companyId, environment: mandate.environment },
    'direct-debit-mandate-ended',
    person.email,
    directDebitMandateEndedEmail({
      firstNames: person.firstNames,
      policyReference: person.policyReference,
      mandateReference: mandate.reference ?? mandate.providerMandateId ?? '',
      reason: change.reason ?? 'cancelled by you or your bank',
      cardOnFile: change.cardOnFile,
    }),
    person.userId,
  );
}
