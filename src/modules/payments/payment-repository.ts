import type { Generated, Selectable } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { notePolicyWrites } from '../policies/index.ts';

export type PaymentKind = 'charge' | 'refund';
export type PaymentPurpose = 'new_business' | 'adjustment' | 'cancellation' | 'statement' | 'intent';
export type PaymentStatus = 'pending' | 'succeeded' | 'failed' | 'refunded' | 'requires_action' | 'canceled';

export interface PaymentTables {
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
}

type Row = Selectable<PaymentTables['payments']>;

const toRecord = (r: Row): PaymentRecord => ({
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

/** Tells readers of the policy that its payment records changed (see policies.payments_revision). */
export async function bumpPaymentsRevision(db: Executor, policyId: string): Promise<void> {
  const owners = await db
    .updateTable('policies')
    .set((eb) => ({ payments_revision: eb('payments_revision', '+', 1) }))
    .where('id', '=', policyId)
    .returning('user_id')
    .execute();
  notePolicyWrites(owners.map((r) => r.user_id));
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
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/** Across tenants, for jobs: a job carries only the payment id (its row says the tenant). */
export async function findPaymentById(db: Executor, id: string): Promise<PaymentRecord | undefined> {
  const row = await db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
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
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
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
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
    .where('policy_id', '=', policyId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toRecord);
}

export async function updatePayment(
  db: Executor,
  id: string,
  changes: Partial<{
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
  }>,
  at: Date,
): Promise<void> {
  const set: Record<string, unknown> = { updated_at: at };
  const columns: Record<string, string> = {
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
  };
  for (const [key, value] of Object.entries(changes)) {
    const column = columns[key];
    if (column !== undefined) set[column] = value;
  }
  await db.updateTable('payments').set(set).where('id', '=', id).execute();
  const owners = await db
    .updateTable('policies')
    .set((eb) => ({ payments_revision: eb('payments_revision', '+', 1) }))
    .where('id', '=', (eb) => eb.selectFrom('payments').select('policy_id').where('id', '=', id))
    .returning('user_id')
    .execute();
  notePolicyWrites(owners.map((r) => r.user_id));
}

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

/** Failed statement payments of a policy that wait for a new card. */
export async function listAwaitingNewCard(
  db: Executor,
  tenant: Tenant,
  policyId: string,
): Promise<PaymentRecord[]> {
  const rows = await db
    .selectFrom('payments')
    .selectAll()
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
    .where('policy_id', '=', policyId)
    .where('kind', '=', 'charge')
    .where('status', '=', 'failed')
    .execute();
  return rows.map(toRecord);
}

export async function findCustomer(
  db: Executor,
  tenant: Tenant,
  userId: string,
  provider: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('payment_customers')
    .select('provider_customer_id')
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
    .where('user_id', '=', userId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return row?.provider_customer_id;
}

/** Which of these users have a customer (a card on file) with the processor, in one query. */
export async function usersWithCustomer(
  db: Executor,
  userIds: readonly string[],
  provider: string,
): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('payment_customers')
    .select('user_id')
    .where('user_id', 'in', [...new Set(userIds)])
    .where('provider', '=', provider)
    .execute();
  return new Set(rows.map((r) => r.user_id));
}

/** Links the policyholder to the processor's customer; the first link wins. */
export async function linkCustomer(
  db: Executor,
  tenant: Tenant,
  userId: string,
  provider: string,
  customerId: string,
  at: Date,
): Promise<void> {
  await db
    .insertInto('payment_customers')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      user_id: userId,
      provider,
      provider_customer_id: customerId,
      created_at: at,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
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
