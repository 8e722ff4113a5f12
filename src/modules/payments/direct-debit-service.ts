import { randomUUID } from 'node:crypto';
import type { SetupIntent } from '../../integrations/payments/index.ts';
import type { Executor } from '../../schema.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { datesFromTo, londonDate, londonMidnight } from '../../platform/london-calendar.ts';
import { fromPence } from '../../platform/money.ts';
import {
  asTenant,
  findCompanyByReference,
  findDirectDebitSettings,
  updateDirectDebitNotice,
  type Tenant,
} from '../companies/index.ts';
import { directDebitAdvanceNoticeEmail, directDebitMandateConfirmedEmail } from '../notifications/index.ts';
import type { PolicyRecord } from '../policies/index.ts';
import { ensureCustomer } from './card-service.ts';
import { listCollectionsBetween, listCollectionsOfPolicy } from './collection-repository.ts';
import { hasUnresolvedAttempt } from './attempt-repository.ts';
import { contactsOf, noticeSettings, type PolicyContact } from './direct-debit-collections.ts';
import {
  insertMandateSetup,
  listMandatesOfPolicy,
  recordMandate,
  type MandateRecord,
  type MandateStatus,
} from './mandate-repository.ts';
import { policyOf, PROVIDER, type PaymentContext } from './payment-context.ts';
import { listPaymentsOfPolicy, updatePayment, type PaymentRecord } from './payment-repository.ts';
import { collectionDay, firstCollectionDay, movedCollectionDay } from './rules/direct-debit.ts';

/** The longest span the collections calendar covers in one request (days). */
export const MAX_CALENDAR_DAYS = 92;

/**
 * The policy's newest SetupIntents ADD_NEW_PAYMENT_METHOD asks the processor about, one call each: a
 * policy holds as many as were ever started, so this bounds one request's calls. An older one that was
 * confirmed is recorded from the processor's `setup_intent.succeeded`.
 */
export const SETUPS_SEARCHED = 5;

/** A mandate as the API shows it. */
const mandateView = (m: MandateRecord & { status: Exclude<MandateStatus, 'setup'> }) => ({
  mandate_id: m.id,
  provider_mandate_id: m.providerMandateId,
  mandate_reference: m.reference,
  status: m.status,
  default: m.isDefault,
  payment_method_id: m.paymentMethodId,
  account_holder_name: m.accountHolderName,
  sort_code: m.sortCode,
  account_last4: m.accountLast4,
  created_at: m.createdAt.toISOString(),
  activated_at: m.activatedAt?.toISOString() ?? null,
  cancelled_at: m.cancelledAt?.toISOString() ?? null,
  cancel_reason: m.cancelReason,
});

/** A collection as the API shows it. */
const collectionView = (p: PaymentRecord) => ({
  payment_reference: p.id,
  policy_version_reference: p.policyVersionId,
  amount: fromPence(p.amountPence),
  currency: p.currency,
  status: p.status,
  collect_on: p.collectOn,
  notice_sent_at: p.noticeSentAt?.toISOString() ?? null,
  provider_payment_reference: p.providerPaymentId,
  settled_at: p.settledAt?.toISOString() ?? null,
  failure_code: p.declineCode,
  failure_message: p.status === 'failed' || p.status === 'scheduled' ? p.errorMessage : null,
  attempts: p.attempts,
  awaiting_new_method: p.awaitingNewCard,
});

const MANDATE_STATUS = { active: 'active', pending: 'pending', inactive: 'inactive' } as const;

/** Bacs Direct Debit: mandates through SetupIntents, the policy's collections, the calendar, the notice period. */
export function createDirectDebitService(ctx: PaymentContext, publishableKey: string | undefined) {
  const { db, clock } = ctx;
  return {
    /**
     * A SetupIntent for a Bacs mandate on the policy's processor customer (made now if the policy has
     * none), which the payer's browser confirms with the client secret and their bank details.
     */
    async createSetupIntent(tenant: Tenant, policyReference: string) {
      const policy = await policyOf(ctx, tenant, policyReference);
      const customerId = await ensureCustomer(ctx, tenant, policy);
      const setupId = randomUUID();
      const intent = await (
        await ctx.gateway(tenant)
      ).createBacsSetupIntent({
        customerId,
        metadata: {
          milepost_policy: policy.id,
          company: tenant.companyId,
          environment: tenant.environment,
        },
        idempotencyKey: `mandate:${setupId}:setup-intent`,
      });
      await insertMandateSetup(db, tenant, {
        policyId: policy.id,
        provider: PROVIDER,
        customerId,
        setupIntentId: intent.id,
        at: clock.now(),
      });
      return {
        setup_intent_id: intent.id,
        client_secret: intent.clientSecret,
        // NOTE: the sandbox takes no publishable key (a browser confirms with the client secret alone).
        publishable_key: tenant.environment === 'production' ? (publishableKey ?? null) : null,
      };
    },

    /** The policy's mandates and its Direct Debit collections. */
    async forPolicy(tenant: Tenant, policyReference: string) {
      const policy = await policyOf(ctx, tenant, policyReference);
      const mandates = await listMandatesOfPolicy(db, tenant, policy.id);
      const collections = await listCollectionsOfPolicy(db, tenant, policy.id);
      const settings = await findDirectDebitSettings(db, tenant.companyId);
      return {
        policy_reference: policy.policyReference,
        notice_working_days: settings?.noticeWorkingDays ?? 10,
        mandates: mandates
          .filter(
            (m): m is MandateRecord & { status: Exclude<MandateStatus, 'setup'> } => m.status !== 'setup',
          )
          .map(mandateView),
        collections: collections.map(collectionView),
      };
    },

    /** The collections calendar: per London day of `fromOn`..`toOn`, what is scheduled, processing, paid, failed. */
    async calendar(
      companyReference: string,
      environment: Tenant['environment'],
      fromOn: string,
      toOn: string,
    ) {
      const company = await findCompanyByReference(db, companyReference);
      if (company === undefined) throw notFound('company');
      const tenant = asTenant(company.id, environment);
      const rows = await listCollectionsBetween(db, tenant, fromOn, toOn);
      const days = new Map<string, ReturnType<typeof emptyDay>>();
      for (const on of datesFromTo(fromOn, toOn)) days.set(on, emptyDay(on));
      for (const { payment, policyReference, mandateReference } of rows) {
        const day = days.get(payment.collectOn ?? '');
        if (day === undefined) continue;
        const bucket = bucketOf(payment.status);
        day[bucket].count += 1;
        day[bucket].amountPence += payment.amountPence;
        day.collections.push({
          ...collectionView(payment),
          policy_reference: policyReference,
          mandate_reference: mandateReference,
        });
      }
      return {
        company_reference: companyReference,
        environment,
        from: fromOn,
        to: toOn,
        days: [...days.values()].map((d) => ({
          day: d.day,
          scheduled: totalView(d.scheduled),
          processing: totalView(d.processing),
          paid: totalView(d.paid),
          failed: totalView(d.failed),
          collections: d.collections,
        })),
      };
    },

    /** The company's Direct Debit advance notice, in working days. */
    async noticePeriod(companyReference: string) {
      const company = await findCompanyByReference(db, companyReference);
      if (company === undefined) throw notFound('company');
      const settings = await findDirectDebitSettings(db, company.id);
      return { company_reference: companyReference, notice_working_days: settings?.noticeWorkingDays ?? 10 };
    },

    /** Sets it (3–30 working days; the database's CHECK holds the same bounds). */
    async setNoticePeriod(companyReference: string, noticeWorkingDays: number) {
      const company = await findCompanyByReference(db, companyReference);
      if (company === undefined) throw notFound('company');
      await updateDirectDebitNotice(db, company.id, noticeWorkingDays, clock.now());
      return { company_reference: companyReference, notice_working_days: noticeWorkingDays };
    },
  };
}

const emptyTotal = () => ({ count: 0, amountPence: 0 });
const emptyDay = (day: string) => ({
  day,
  scheduled: emptyTotal(),
  processing: emptyTotal(),
  paid: emptyTotal(),
  failed: emptyTotal(),
  collections: [] as Array<
    ReturnType<typeof collectionView> & { policy_reference: string; mandate_reference: string | null }
  >,
});
const totalView = (t: { count: number; amountPence: number }) => ({
  count: t.count,
  amount: fromPence(t.amountPence),
});
function bucketOf(status: PaymentRecord['status']): 'scheduled' | 'processing' | 'paid' | 'failed' {
  switch (status) {
    case 'succeeded':
    case 'refunded':
      return 'paid';
    case 'processing':
      return 'processing';
    case 'scheduled':
    case 'pending':
      return 'scheduled';
    default:
      return 'failed';
  }
}

/**
 * ADD_NEW_PAYMENT_METHOD with the payment method of a confirmed Bacs SetupIntent of this policy (one of
 * its newest `SETUPS_SEARCHED`): the mandate is read from the processor and recorded, becomes the
 * policy's default method, its confirmation (with the Guarantee and the first collection's day) is
 * emailed, and amounts waiting for a new method are scheduled under it with a new advance notice.
 * Undefined when the method is not one of those SetupIntents' (a card).
 */
export async function addMandateMethod(
  ctx: PaymentContext,
  tenant: Tenant,
  policy: Pick<PolicyRecord, 'id'>,
  paymentMethodId: string,
): Promise<{ payment_method_id: string } | undefined> {
  const mandates = await listMandatesOfPolicy(ctx.db, tenant, policy.id);
  // Recorded already (the processor's `setup_intent.succeeded` came first, or a repeated request).
  if (mandates.some((m) => m.paymentMethodId === paymentMethodId && m.status !== 'setup'))
    return { payment_method_id: paymentMethodId };
  const setups = mandates
    .filter((m) => m.status === 'setup')
    .toReversed()
    .slice(0, SETUPS_SEARCHED);
  const gateway = await ctx.gateway(tenant);
  let found: { row: MandateRecord; intent: SetupIntent } | undefined;
  for (const row of setups) {
    const intent = await gateway.retrieveSetupIntent(row.setupIntentId);
    if (intent.paymentMethodId === paymentMethodId) {
      found = { row, intent };
      break;
    }
  }
  if (found === undefined) return undefined;
  const { row, intent } = found;
  if (intent.status !== 'succeeded' || intent.mandateId === null)
    throw new AppError(
      'VALIDATION_FAILED',
      `The Direct Debit setup is not confirmed (status ${intent.status})`,
      {
        errors: [{ path: '/body/payment_method_id', message: 'its SetupIntent is not confirmed' }],
      },
    );
  const mandate = await gateway.retrieveMandate(intent.mandateId);
  const method = await gateway.retrievePaymentMethod(paymentMethodId);
  const status: MandateStatus = MANDATE_STATUS[mandate.status];
  if (status === 'inactive')
    throw new AppError('VALIDATION_FAILED', 'The bank refused this Direct Debit Instruction', {
      errors: [{ path: '/body/payment_method_id', message: 'its mandate is inactive' }],
    });
  const now = ctx.clock.now();
  await inTransaction(ctx.db, async (trx) => {
    const recorded = await recordMandate(
      trx,
      row.id,
      {
        policyId: policy.id,
        paymentMethodId,
        providerMandateId: mandate.id,
        reference: mandate.reference,
        status,
        accountHolderName: method.holderName,
        sortCode: method.sortCode,
        accountLast4: method.last4,
      },
      now,
    );
    if (!recorded) return;
    const settings = await noticeSettings(trx)(tenant.companyId);
    const today = londonDate(now);
    const person = (await contactsOf(trx, [policy.id])).get(policy.id);
    const values = {
      companyName: settings.name,
      noticeWorkingDays: settings.noticeWorkingDays,
      mandateReference: mandate.reference ?? mandate.id,
      accountLast4: method.last4,
    };
    if (person !== undefined)
      await ctx.notifications.queueEmail(
        trx,
        tenant,
        'direct-debit-mandate-confirmed',
        person.email,
        directDebitMandateConfirmedEmail({
          ...values,
          firstNames: person.firstNames,
          policyReference: person.policyReference,
          accountHolderName: method.holderName,
          sortCode: method.sortCode,
          firstCollectionOn: firstCollectionDay(today, settings.noticeWorkingDays),
        }),
        person.userId,
      );
    const to = { policyId: policy.id, mandateId: row.id, today, now, person, values };
    await collectUnderNewMandate(ctx, trx, tenant, to, settings.noticeWorkingDays);
  });
  return { payment_method_id: paymentMethodId };
}

/**
 * In the new mandate's transaction, each with an advance notice naming it: the statements that waited
 * for a new method are collected under it, the notice period from today; and a collection announced
 * under another mandate and not yet asked for is taken under it, on the day announced or, if that comes
 * first, on the new mandate's first possible collection. NOTE: so no account is debited without the
 * advance notice the Direct Debit Guarantee promises, naming the mandate that collects.
 */
async function collectUnderNewMandate(
  ctx: PaymentContext,
  trx: Executor,
  tenant: Tenant,
  to: {
    policyId: string;
    mandateId: string;
    today: string;
    now: Date;
    person: PolicyContact | undefined;
    values: Pick<
      Parameters<typeof directDebitAdvanceNoticeEmail>[0],
      'companyName' | 'noticeWorkingDays' | 'mandateReference' | 'accountLast4'
    >;
  },
  noticeWorkingDays: number,
): Promise<void> {
  for (const payment of await listPaymentsOfPolicy(trx, tenant, to.policyId)) {
    const waiting =
      payment.kind === 'charge' &&
      payment.status === 'failed' &&
      payment.awaitingNewCard &&
      payment.purpose === 'statement';
    // NOTE: a collection already asked for, its outcome not yet known, is left to be asked again as it
    // was (under its pinned mandate and key): moved, it could be collected twice.
    const announced =
      payment.status === 'scheduled' &&
      payment.methodType === 'bacs_debit' &&
      payment.mandateId !== to.mandateId &&
      !hasUnresolvedAttempt(payment);
    if (!waiting && !announced) continue;
    const collectOn = waiting
      ? collectionDay(to.today, noticeWorkingDays)
      : movedCollectionDay(payment.collectOn ?? to.today, to.today, noticeWorkingDays);
    await updatePayment(
      trx,
      payment.id,
      {
        ...(waiting
          ? { methodType: 'bacs_debit' as const, status: 'scheduled' as const, awaitingNewCard: false }
          : {}),
        mandateId: to.mandateId,
        collectOn,
        noticeSentAt: to.now,
        nextAttemptAt: londonMidnight(collectOn),
      },
      to.now,
    );
    if (to.person === undefined) continue;
    await ctx.notifications.queueEmail(
      trx,
      tenant,
      'direct-debit-advance-notice',
      to.person.email,
      directDebitAdvanceNoticeEmail({
        ...to.values,
        firstNames: to.person.firstNames,
        policyReference: to.person.policyReference,
        amountPence: payment.amountPence,
        currency: payment.currency,
        collectOn,
        retry: false,
      }),
      to.person.userId,
    );
  }
}

/** The policy's default method when it is a Direct Debit mandate (GET_PAYMENT_METHOD), else undefined. */
export function mandateMethodView(m: MandateRecord) {
  return {
    type: 'GET_PAYMENT_METHOD' as const,
    payment_method_id: m.paymentMethodId ?? '',
    method_type: 'bacs_debit' as const,
    mandate_reference: m.reference,
    mandate_status: m.status,
    account_holder_name: m.accountHolderName,
    sort_code: m.sortCode,
    last4: m.accountLast4,
    brand: null,
    exp_month: null,
    exp_year: null,
  };
}
