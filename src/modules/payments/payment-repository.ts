import type { Generated, Selectable } from 'kysely';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { notePolicyWrites } from '../policies/index.ts';

export type PaymentKind = 'charge' | 'refund';
export type PaymentPurpose =
  'new_business' | 'renewal' | 'adjustment' | 'cancellation' | 'statement' | 'intent';
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

/** The company's failed charges (in dunning or waiting for a new card), the most recently failed first. */
export async function listFailedCharges(
  db: Executor,
  tenant: Tenant,
  limit: number,
): Promise<Array<{ payment: PaymentRecord; policyReference: string }>> {
  const rows = await db
    .selectFrom('payments')
    .innerJoin('policies', 'policies.id', 'payments.policy_id')
    .selectAll('payments')
    .select('policies.policy_reference')
    .where('payments.company_id', '=', tenant.companyId)
    .where('payments.environment', '=', tenant.environment)
    .where('payments.kind', '=', 'charge')
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
};

function columnsOf(changes: PaymentChanges, at: Date): Record<string, unknown> {
  const set: Record<string, unknown> = { updated_at: at };
  for (const [key, value] of Object.entries(changes)) {
    const column = PAYMENT_COLUMNS[key];
    if (column !== undefined) set[column] = value;
  }
  return set;
}

/** A payment changed: its policy's cached reads are stale. */
async function bumpRevisionOfPayment(db: Executor, id: string): Promise<void> {
  const owners = await db
    .updateTable('policies')
    .set((eb) => ({ payments_revision: eb('payments_revision', '+', 1) }))
    .where('id', '=', (eb) => eb.selectFrom('payments').select('policy_id').where('id', '=', id))
    .returning('user_id')
    .execute();
  notePolicyWrites(owners.map((r) => r.user_id));
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
  const owners = await db
    .updateTable('policies')
    .set((eb) => ({ payments_revision: eb('payments_revision', '+', 1) }))
    .where('id', 'in', [...new Set(charges.map((c) => c.policyId))])
    .returning('user_id')
    .execute();
  notePolicyWrites(owners.map((r) => r.user_id));
  return new Map(rows.map((r) => [r.policy_version_id ?? '', r.id]));
}

/** The customers these users have with the processor, by user id, in their own tenants. */
export async function customersOf(
  db: Executor,
  users: ReadonlyArray<{ tenant: Tenant; userId: string }>,
  provider: string,
): Promise<Map<string, string>> {
  if (users.length === 0) return new Map();
  const rows = await db
    .selectFrom('payment_customers')
    .select(['user_id', 'company_id', 'environment', 'provider_customer_id'])
    .where('user_id', 'in', [...new Set(users.map((u) => u.userId))])
    .where('provider', '=', provider)
    .execute();
  const wanted = new Set(users.map((u) => `${u.userId}|${u.tenant.companyId}|${u.tenant.environment}`));
  return new Map(
    rows
      .filter((r) => wanted.has(`${r.user_id}|${r.company_id}|${r.environment}`))
      .map((r) => [r.user_id, r.provider_customer_id]),
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
  const updated = await db
    .updateTable('payments')
    .set(columnsOf({ ...changes, attempts: recordedAttempts }, at))
    .where('id', '=', id)
    .where('status', '<>', 'succeeded')
    .where('attempts', '<', attempt)
    .returning('id')
    .executeTakeFirst();
  if (updated === undefined) return false;
  await bumpRevisionOfPayment(db, id);
  return true;
}

/** The states of a charge that the processor may still collect: in progress, declined, or waiting for authentication. */
const OPEN_CHARGE: readonly PaymentStatus[] = ['pending', 'failed', 'requires_action'];

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
  const updated = await db
    .updateTable('payments')
    .set({
      status: 'succeeded',
      next_attempt_at: null,
      awaiting_new_card: false,
      decline_code: null,
      error_message: null,
      ...(paymentMethodId === null ? {} : { payment_method_id: paymentMethodId }),
      updated_at: at,
    })
    .where('id', '=', id)
    .where('kind', '=', 'charge')
    .where('provider_payment_id', '=', providerPaymentId)
    .where('status', 'in', [...OPEN_CHARGE])
    .returning('id')
    .executeTakeFirst();
  if (updated === undefined) return false;
  await bumpRevisionOfPayment(db, id);
  return true;
}
