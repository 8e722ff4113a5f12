import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import { bumpPaymentsRevisions, policyReferences } from '../policies/index.ts';
import {
  bumpRevisionOfPayment,
  columnsOf,
  toRecord,
  type PaymentChanges,
  type PaymentRecord,
  updatePaymentIf,
} from './payment-repository.ts';

/** A statement's Direct Debit collection, recorded (and announced) in the statement's own transaction. */
export interface ScheduledCollection {
  readonly tenant: Tenant;
  readonly policyId: string;
  readonly policyVersionId: string;
  readonly amountPence: number;
  readonly currency: string;
  readonly provider: string;
  readonly providerCustomerId: string;
  readonly mandateId: string;
  /** London day of the collection. */
  readonly collectOn: string;
  /** When the worker makes it: the start of its day. */
  readonly dueAt: Date;
}

/** Inserts scheduled collections in one statement; returns each one's payment id by policy version id. */
export async function insertScheduledCollections(
  db: Executor,
  collections: readonly ScheduledCollection[],
  at: Date,
): Promise<Map<string, string>> {
  if (collections.length === 0) return new Map();
  const rows = await db
    .insertInto('payments')
    .values(
      collections.map((c) => ({
        company_id: c.tenant.companyId,
        environment: c.tenant.environment,
        policy_id: c.policyId,
        policy_version_id: c.policyVersionId,
        kind: 'charge' as const,
        purpose: 'statement' as const,
        status: 'scheduled' as const,
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
        next_attempt_at: c.dueAt,
        method_type: 'bacs_debit' as const,
        mandate_id: c.mandateId,
        collect_on: c.collectOn,
        notice_sent_at: at,
        settled_at: null,
        created_at: at,
        updated_at: at,
      })),
    )
    .returning(['id', 'policy_version_id'])
    .execute();
  await bumpPaymentsRevisions(
    db,
    collections.map((c) => c.policyId),
  );
  return new Map(rows.map((r) => [r.policy_version_id ?? '', r.id]));
}

/**
 * The bank's answer to a submitted collection (the processor's webhook): the row changes only while it
 * is `processing` under that intent, so a repeated or late event changes nothing. Returns whether it did.
 */
export async function recordCollectionReturn(
  db: Executor,
  id: string,
  providerPaymentId: string,
  changes: PaymentChanges,
  at: Date,
): Promise<boolean> {
  return updatePaymentIf(db, id, columnsOf(changes, at), (update) =>
    update.where('status', '=', 'processing').where('provider_payment_id', '=', providerPaymentId),
  );
}

/** A policy's Direct Debit collections, oldest first. */
export async function listCollectionsOfPolicy(
  db: Executor,
  tenant: Tenant,
  policyId: string,
): Promise<PaymentRecord[]> {
  const rows = await db
    .selectFrom('payments')
    .selectAll()
    .where(forTenant(tenant))
    .where('policy_id', '=', policyId)
    .where('method_type', '=', 'bacs_debit')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toRecord);
}

/** The company's collections on the London days `fromOn` to `toOn` (both included), by day, with their policies. */
export async function listCollectionsBetween(
  db: Executor,
  tenant: Tenant,
  fromOn: string,
  toOn: string,
): Promise<Array<{ payment: PaymentRecord; policyReference: string; mandateReference: string | null }>> {
  const rows = await db
    .selectFrom('payments')
    .innerJoin(policyReferences(db).as('policies'), 'policies.id', 'payments.policy_id')
    .leftJoin('direct_debit_mandates as m', 'm.id', 'payments.mandate_id')
    .selectAll('payments')
    .select(['policies.policy_reference', 'm.reference as mandate_reference'])
    .where(forTenant(tenant, 'payments'))
    .where('payments.collect_on', '>=', fromOn)
    .where('payments.collect_on', '<=', toOn)
    .where('payments.collect_on', 'is not', null)
    .orderBy('payments.collect_on')
    .orderBy('payments.id')
    .execute();
  return rows.map((row) => ({
    payment: toRecord(row),
    policyReference: row.policy_reference,
    mandateReference: row.mandate_reference,
  }));
}

/**
 * A collection whose mandate can no longer be used is taken by card instead: it stops being a Direct
 * Debit (its notice, day and mandate stay recorded); the caller makes the card attempt.
 */
export async function switchCollectionToCard(db: Executor, id: string, at: Date): Promise<void> {
  await db
    .updateTable('payments')
    .set({ method_type: 'card', updated_at: at })
    .where('id', '=', id)
    .where('method_type', '=', 'bacs_debit')
    .where('status', '<>', 'processing')
    .execute();
  await bumpRevisionOfPayment(db, id);
}

/**
 * Direct Debit collections still `processing` whose London collection day is `collectedOnOrBefore`
 * (`YYYY-MM-DD`) or earlier, in id order after `afterId`: what the reconciliation sweep asks about.
 */
export async function listStuckCollections(
  db: Executor,
  collectedOnOrBefore: string,
  afterId: string | undefined,
  limit: number,
): Promise<PaymentRecord[]> {
  let q = db
    .selectFrom('payments')
    .selectAll()
    .where('method_type', '=', 'bacs_debit')
    .where('status', '=', 'processing')
    .where('provider_payment_id', 'is not', null)
    .where('collect_on', '<=', collectedOnOrBefore);
  if (afterId !== undefined) q = q.where('id', '>', afterId);
  const rows = await q.orderBy('id').limit(limit).execute();
  return rows.map(toRecord);
}
