import { type Generated, type Selectable, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import type { Database, Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { MandateTables } from './mandate-repository.ts';
import { bumpPaymentsRevision, bumpPaymentsRevisions, policyReferences } from '../policies/index.ts';

export type PaymentKind = 'charge' | 'refund';
export type PaymentPurpose =
  'new_business' | 'renewal' | 'adjustment' | 'cancellation' | 'statement' | 'intent';
export type PaymentStatus =
  | 'pending'
  | 'succeeded'
  | 'failed'
  | 'refunded'
  | 'requires_action'
  | 'canceled'
  /** A Direct Debit collection announced and waiting for its day. */
  | 'scheduled'
  /** A Direct Debit collection submitted, until the bank pays or returns it. */
  | 'processing';
/** How a payment is collected: a card, or a Bacs Direct Debit under a mandate. */
export type PaymentMethodType = 'card' | 'bacs_debit';

/** The payment module's tables: payments, customers, processed events, and Direct Debit mandates. */
export interface PaymentTables extends MandateTables {
  payment_customers: {
    company_id: string;
    environment: string;
    user_id: string;
    provider: string;
    provider_customer_id: string;
    created_at: Date;
  };
  payments: {
    id: Generated<string>;
    company_id: string;
    environment: string;
    policy_id: string | null;
    policy_version_id: string | null;
    kind: PaymentKind;
    purpose: PaymentPurpose;
    status: PaymentStatus;
    amount_pence: number;
    refunded_pence: Generated<number>;
    currency: string;
    provider: string;
    provider_payment_id: string | null;
    provider_customer_id: string | null;
    payment_method_id: string | null;
    refund_of: string | null;
    decline_code: string | null;
    error_message: string | null;
    attempts: Generated<number>;
    first_failed_at: Date | null;
    next_attempt_at: Date | null;
    awaiting_new_card: Generated<boolean>;
    created_at: Date;
    updated_at: Date;
    method_type: Generated<PaymentMethodType>;
    mandate_id: string | null;
    /** A Direct Debit collection's London day (`YYYY-MM-DD`). */
    collect_on: string | null;
    notice_sent_at: Date | null;
    settled_at: Date | null;
    /** The attempt whose card or mandate is pinned (migration 0074); see `pinAttempt`. */
    attempt_pinned: number | null;
    attempt_payment_method_id: string | null;
    attempt_mandate_id: string | null;
  };
  processed_payment_events: { provider: string; event_id: string; type: string; processed_at: Date };
}

export interface PaymentRecord {
  readonly id: string;
  readonly companyId: string;
  readonly environment: string;
  readonly policyId: string | null;
  readonly policyVersionId: string | null;
  readonly kind: PaymentKind;
  readonly purpose: PaymentPurpose;
  readonly status: PaymentStatus;
  readonly amountPence: number;
  readonly refundedPence: number;
  readonly currency: string;
  readonly provider: string;
  readonly providerPaymentId: string | null;
  readonly providerCustomerId: string | null;
  readonly paymentMethodId: string | null;
  readonly refundOf: string | null;
  readonly declineCode: string | null;
  readonly errorMessage: string | null;
  readonly attempts: number;
  readonly firstFailedAt: Date | null;
  readonly nextAttemptAt: Date | null;
  readonly awaitingNewCard: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly methodType: PaymentMethodType;
  readonly mandateId: string | null;
  /** A Direct Debit collection's London day. */
  readonly collectOn: string | null;
  readonly noticeSentAt: Date | null;
  /** When the money arrived (a Direct Debit's settlement): the cash report's day for it. */
  readonly settledAt: Date | null;
  /** The card (`mandateId` null) or mandate an attempt asked with; see `pinAttempt`. */
  readonly pin: AttemptPin | null;
}

/** The method an attempt asks the processor with: a card, or a Direct Debit mandate and its method. */
export interface AttemptPin {
  readonly attempt: number;
  readonly paymentMethodId: string;
  readonly mandateId: string | null;
}

type Row = Selectable<PaymentTables['payments']>;

export const toRecord = (r: Row): PaymentRecord => ({
  id: r.id,
  companyId: r.company_id,
  environment: r.environment,
  policyId: r.policy_id,
  policyVersionId: r.policy_version_id,
  kind: r.kind,
  purpose: r.purpose,
  status: r.status,
  amountPence: r.amount_pence,
  refundedPence: r.refunded_pence,
  currency: r.currency.trim(),
  provider: r.provider,
  providerPaymentId: r.provider_payment_id,
  providerCustomerId: r.provider_customer_id,
  paymentMethodId: r.payment_method_id,
  refundOf: r.refund_of,
  declineCode: r.decline_code,
  errorMessage: r.error_message,
  attempts: r.attempts,
  firstFailedAt: r.first_failed_at,
  nextAttemptAt: r.next_attempt_at,
  awaitingNewCard: r.awaiting_new_card,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  methodType: r.method_type,
  mandateId: r.mandate_id,
  collectOn: r.collect_on,
  noticeSentAt: r.notice_sent_at,
  settledAt: r.settled_at,
  pin:
    r.attempt_pinned === null || r.attempt_payment_method_id === null
      ? null
      : {
          attempt: r.attempt_pinned,
          paymentMethodId: r.attempt_payment_method_id,
          mandateId: r.attempt_mandate_id,
        },
});

export interface NewPayment {
  readonly policyId: string | null;
  readonly policyVersionId: string | null;
  readonly kind: PaymentKind;
  readonly purpose: PaymentPurpose;
  readonly status: PaymentStatus;
  readonly amountPence: number;
  readonly currency: string;
  readonly provider: string;
  readonly providerPaymentId?: string | null;
  readonly providerCustomerId?: string | null;
  readonly paymentMethodId?: string | null;
  readonly refundOf?: string | null;
  readonly at: Date;
}

export async function insertPayment(db: Executor, tenant: Tenant, p: NewPayment): Promise<PaymentRecord> {
  const row = await db
    .insertInto('payments')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      policy_id: p.policyId,
      policy_version_id: p.policyVersionId,
      kind: p.kind,
      purpose: p.purpose,
      status: p.status,
      amount_pence: p.amountPence,
      currency: p.currency,
      provider: p.provider,
      provider_payment_id: p.providerPaymentId ?? null,
      provider_customer_id: p.providerCustomerId ?? null,
      payment_method_id: p.paymentMethodId ?? null,
      refund_of: p.refundOf ?? null,
      decline_code: null,
      error_message: null,
      first_failed_at: null,
      next_attempt_at: null,
      created_at: p.at,
      updated_at: p.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (p.policyId !== null) await bumpPaymentsRevision(db, p.policyId);
  return toRecord(row);
}

export async function findPayment(
  db: Executor,
  tenant: Tenant,
  id: string,
): Promise<PaymentRecord | undefined> {
  const row = await db
    .selectFrom('payments')
    .selectAll()
    .where(forTenant(tenant))
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/** Across tenants, for jobs: a job carries only the payment id (its row says the tenant). */
export async function findPaymentById(db: Executor, id: string): Promise<PaymentRecord | undefined> {
  const row = await db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/**
 * A payment read under its row lock, for a change computed from what it holds (a refund adding to
 * `refunded_pence`): concurrent changes of it then queue instead of overwriting each other.
 */
export async function lockPaymentById(db: Executor, id: string): Promise<PaymentRecord | undefined> {
  const row = await db.selectFrom('payments').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

export async function findPaymentByProviderId(
  db: Executor,
  tenant: Tenant,
  provider: string,
  providerPaymentId: string,
): Promise<PaymentRecord | undefined> {
  const row = await db
    .selectFrom('payments')
    .selectAll()
    .where(forTenant(tenant))
    .where('provider', '=', provider)
    .where('provider_payment_id', '=', providerPaymentId)
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/** Across tenants: a processor webhook names only the processor's id. */
export async function findPaymentByProviderIdAnyTenant(
  db: Executor,
  provider: string,
  providerPaymentId: string,
): Promise<PaymentRecord | undefined> {
  const row = await db
    .selectFrom('payments')
    .selectAll()
    .where('provider', '=', provider)
    .where('provider_payment_id', '=', providerPaymentId)
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

export async function listPaymentsOfPolicy(
  db: Executor,
  tenant: Tenant,
  policyId: string,
): Promise<PaymentRecord[]> {
  const rows = await db
    .selectFrom('payments')
    .selectAll()
    .where(forTenant(tenant))
    .where('policy_id', '=', policyId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toRecord);
}

/**
 * The company's failed payments: charges in dunning or waiting for a new card, and refunds that failed
 * (owed to the policyholder still), the most recently failed first.
 */
export async function listFailedPayments(
  db: Executor,
  tenant: Tenant,
  limit: number,
): Promise<Array<{ payment: PaymentRecord; policyReference: string }>> {
  const rows = await db
    .selectFrom('payments')
    .innerJoin(policyReferences(db).as('policies'), 'policies.id', 'payments.policy_id')
    .selectAll('payments')
    .select('policies.policy_reference')
    .where(forTenant(tenant, 'payments'))
    .where('payments.status', '=', 'failed')
    .orderBy('payments.updated_at', 'desc')
    .orderBy('payments.id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ payment: toRecord(row), policyReference: row.policy_reference }));
}

/** The fields a payment update may change, with their columns. */
export type PaymentChanges = Partial<{
  policyId: string;
  policyVersionId: string | null;
  purpose: PaymentPurpose;
  status: PaymentStatus;
  providerPaymentId: string | null;
  providerCustomerId: string | null;
  paymentMethodId: string | null;
  declineCode: string | null;
  errorMessage: string | null;
  attempts: number;
  firstFailedAt: Date | null;
  nextAttemptAt: Date | null;
  awaitingNewCard: boolean;
  refundedPence: number;
  methodType: PaymentMethodType;
  mandateId: string | null;
  collectOn: string | null;
  noticeSentAt: Date | null;
  settledAt: Date | null;
}>;

const PAYMENT_COLUMNS: Readonly<Record<string, string>> = {
  policyId: 'policy_id',
  policyVersionId: 'policy_version_id',
  purpose: 'purpose',
  status: 'status',
  providerPaymentId: 'provider_payment_id',
  providerCustomerId: 'provider_customer_id',
  paymentMethodId: 'payment_method_id',
  declineCode: 'decline_code',
  errorMessage: 'error_message',
  attempts: 'attempts',
  firstFailedAt: 'first_failed_at',
  nextAttemptAt: 'next_attempt_at',
  awaitingNewCard: 'awaiting_new_card',
  refundedPence: 'refunded_pence',
  methodType: 'method_type',
  mandateId: 'mandate_id',
  collectOn: 'collect_on',
  noticeSentAt: 'notice_sent_at',
  settledAt: 'settled_at',
};

export function columnsOf(changes: PaymentChanges, at: Date): Record<string, unknown> {
  const set: Record<string, unknown> = { updated_at: at };
  for (const [key, value] of Object.entries(changes)) {
    const column = PAYMENT_COLUMNS[key];
    if (column !== undefined) set[column] = value;
  }
  return set;
}

/** A payment changed: its policy's cached reads are stale (the policy found by a subquery, one statement). */
export const bumpRevisionOfPayment = (db: Executor, id: string): Promise<void> =>
  bumpPaymentsRevision(db, db.selectFrom('payments').select('policy_id').where('id', '=', id));

/** An update of `payments`, as a guard narrows it. */
export type PaymentUpdate = UpdateQueryBuilder<Database, 'payments', 'payments', UpdateResult>;

/**
 * Sets `set` on the payment `id` only while `guard` holds (the states the change may be made from), so a
 * repeated, late or concurrent change makes none; when it changed the row, its policy's cached reads are
 * marked stale. Returns whether it changed the row.
 */
export async function updatePaymentIf(
  db: Executor,
  id: string,
  set: Record<string, unknown>,
  guard: (update: PaymentUpdate) => PaymentUpdate,
): Promise<boolean> {
  const updated = await db
    .updateTable('payments')
    .set(set)
    .where('id', '=', id)
    .$call(guard)
    .returning('id')
    .executeTakeFirst();
  if (updated === undefined) return false;
  await bumpRevisionOfPayment(db, id);
  return true;
}

export async function updatePayment(
  db: Executor,
  id: string,
  changes: PaymentChanges,
  at: Date,
): Promise<void> {
  await db.updateTable('payments').set(columnsOf(changes, at)).where('id', '=', id).execute();
  await bumpRevisionOfPayment(db, id);
}

/**
 * Binds the intent row CREATE_PAYMENT_INTENT made to the policy that its payment paid for, succeeded.
 * Only an unbound row changes, so of concurrent binds of one intent one wins: returns whether this was it.
 */
export async function bindIntentPayment(
  db: Executor,
  id: string,
  binding: {
    policyId: string;
    policyVersionId: string;
    purpose: PaymentPurpose;
    paymentMethodId: string | null;
  },
  at: Date,
): Promise<boolean> {
  const updated = await db
    .updateTable('payments')
    .set({
      policy_id: binding.policyId,
      policy_version_id: binding.policyVersionId,
      purpose: binding.purpose,
      status: 'succeeded',
      payment_method_id: binding.paymentMethodId,
      attempts: 1,
      updated_at: at,
    })
    .where('id', '=', id)
    .where('policy_id', 'is', null)
    .executeTakeFirst();
  await bumpPaymentsRevision(db, binding.policyId);
  return Number(updated.numUpdatedRows) > 0;
}

/** A policy's declined charges (in dunning or waiting for a new card), none of them being tried now. */
export async function listFailedChargesOfPolicy(
  db: Executor,
  tenant: Tenant,
  policyId: string,
): Promise<PaymentRecord[]> {
  const rows = await db
    .selectFrom('payments')
    .selectAll()
    .where(forTenant(tenant))
    .where('policy_id', '=', policyId)
    .where('kind', '=', 'charge')
    .where('status', '=', 'failed')
    .execute();
  return rows.map(toRecord);
}

/** True the first time an event id is seen: processor events are acted on once. */
export async function markEventProcessed(
  db: Executor,
  provider: string,
  eventId: string,
  type: string,
  at: Date,
): Promise<boolean> {
  const row = await db
    .insertInto('processed_payment_events')
    .values({ provider, event_id: eventId, type, processed_at: at })
    .onConflict((oc) => oc.doNothing())
    .returning('event_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** A statement's charge, recorded in the statement's own transaction before any attempt is made. */
export interface PendingCharge {
  readonly tenant: Tenant;
  readonly policyId: string;
  readonly policyVersionId: string;
  readonly amountPence: number;
  readonly currency: string;
  readonly provider: string;
  readonly providerCustomerId: string;
}

/**
 * Inserts pending charges (attempt 1 still to make) in one statement, each leased until `leaseUntil`:
 * should the process die before it records an outcome, the reconciler finds it then.
 */
export async function insertPendingCharges(
  db: Executor,
  charges: readonly PendingCharge[],
  at: Date,
  leaseUntil: Date,
): Promise<Map<string, string>> {
  if (charges.length === 0) return new Map();
  const rows = await db
    .insertInto('payments')
    .values(
      charges.map((c) => ({
        company_id: c.tenant.companyId,
        environment: c.tenant.environment,
        policy_id: c.policyId,
        policy_version_id: c.policyVersionId,
        kind: 'charge' as const,
        purpose: 'statement' as const,
        status: 'pending' as const,
        amount_pence: c.amountPence,
        currency: c.currency,
        provider: c.provider,
        provider_payment_id: null,
        provider_customer_id: c.providerCustomerId,
        payment_method_id: null,
        refund_of: null,
        decline_code: null,
        error_message: null,
        first_failed_at: null,
        next_attempt_at: leaseUntil,
        created_at: at,
        updated_at: at,
      })),
    )
    .returning(['id', 'policy_version_id'])
    .execute();
  await bumpPaymentsRevisions(
    db,
    charges.map((c) => c.policyId),
  );
  return new Map(rows.map((r) => [r.policy_version_id ?? '', r.id]));
}
