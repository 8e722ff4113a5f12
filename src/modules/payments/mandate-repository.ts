import type { Generated, Selectable } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';

/**
 * A mandate's life: `setup` while its SetupIntent waits for the payer's bank details; then the
 * processor's mandate status (`pending` until Bacs accepts it, `active`, `inactive` once cancelled by
 * the payer or their bank, or refused).
 */
export type MandateStatus = 'setup' | 'pending' | 'active' | 'inactive';

export interface MandateTables {
  direct_debit_mandates: {
    id: Generated<string>;
    company_id: string;
    environment: string;
    policy_id: string;
    provider: string;
    provider_customer_id: string;
    setup_intent_id: string;
    payment_method_id: string | null;
    provider_mandate_id: string | null;
    reference: string | null;
    status: MandateStatus;
    account_holder_name: string | null;
    sort_code: string | null;
    account_last4: string | null;
    is_default: Generated<boolean>;
    created_at: Date;
    updated_at: Date;
    activated_at: Date | null;
    cancelled_at: Date | null;
    cancel_reason: string | null;
  };
}

export interface MandateRecord {
  readonly id: string;
  readonly companyId: string;
  readonly environment: string;
  readonly policyId: string;
  readonly provider: string;
  readonly providerCustomerId: string;
  readonly setupIntentId: string;
  readonly paymentMethodId: string | null;
  readonly providerMandateId: string | null;
  readonly reference: string | null;
  readonly status: MandateStatus;
  readonly accountHolderName: string | null;
  readonly sortCode: string | null;
  readonly accountLast4: string | null;
  readonly isDefault: boolean;
  readonly createdAt: Date;
  readonly activatedAt: Date | null;
  readonly cancelledAt: Date | null;
  readonly cancelReason: string | null;
}

const toRecord = (r: Selectable<MandateTables['direct_debit_mandates']>): MandateRecord => ({
  id: r.id,
  companyId: r.company_id,
  environment: r.environment,
  policyId: r.policy_id,
  provider: r.provider,
  providerCustomerId: r.provider_customer_id,
  setupIntentId: r.setup_intent_id,
  paymentMethodId: r.payment_method_id,
  providerMandateId: r.provider_mandate_id,
  reference: r.reference,
  status: r.status,
  accountHolderName: r.account_holder_name,
  sortCode: r.sort_code,
  accountLast4: r.account_last4,
  isDefault: r.is_default,
  createdAt: r.created_at,
  activatedAt: r.activated_at,
  cancelledAt: r.cancelled_at,
  cancelReason: r.cancel_reason,
});

/** Records the SetupIntent asked for a policy's mandate; a repeated record of one intent changes nothing. */
export async function insertMandateSetup(
  db: Executor,
  tenant: Tenant,
  setup: { policyId: string; provider: string; customerId: string; setupIntentId: string; at: Date },
): Promise<void> {
  await db
    .insertInto('direct_debit_mandates')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      policy_id: setup.policyId,
      provider: setup.provider,
      provider_customer_id: setup.customerId,
      setup_intent_id: setup.setupIntentId,
      status: 'setup',
      payment_method_id: null,
      provider_mandate_id: null,
      reference: null,
      account_holder_name: null,
      sort_code: null,
      account_last4: null,
      created_at: setup.at,
      updated_at: setup.at,
      activated_at: null,
      cancelled_at: null,
      cancel_reason: null,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** The policy's mandates (and SetupIntents still waiting), oldest first. */
export async function listMandatesOfPolicy(
  db: Executor,
  tenant: Tenant,
  policyId: string,
): Promise<MandateRecord[]> {
  const rows = await db
    .selectFrom('direct_debit_mandates')
    .selectAll()
    .where(forTenant(tenant))
    .where('policy_id', '=', policyId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toRecord);
}

/** The policy's default mandate, when the policy pays by Direct Debit. */
export async function findDefaultMandate(db: Executor, policyId: string): Promise<MandateRecord | undefined> {
  const row = await db
    .selectFrom('direct_debit_mandates')
    .selectAll()
    .where('policy_id', '=', policyId)
    .where('is_default', '=', true)
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/** The default mandates of these policies, by policy id, in one query (a billing chunk's). */
export async function defaultMandatesOf(
  db: Executor,
  policyIds: readonly string[],
): Promise<Map<string, MandateRecord>> {
  if (policyIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('direct_debit_mandates')
    .selectAll()
    .where('policy_id', 'in', [...new Set(policyIds)])
    .where('is_default', '=', true)
    .execute();
  return new Map(rows.map((r) => [r.policy_id, toRecord(r)]));
}

export async function findMandateById(db: Executor, id: string): Promise<MandateRecord | undefined> {
  const row = await db
    .selectFrom('direct_debit_mandates')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/** Across tenants: a processor webhook names only the processor's SetupIntent. */
export async function findMandateBySetupIntent(
  db: Executor,
  provider: string,
  setupIntentId: string,
): Promise<MandateRecord | undefined> {
  const row = await db
    .selectFrom('direct_debit_mandates')
    .selectAll()
    .where('provider', '=', provider)
    .where('setup_intent_id', '=', setupIntentId)
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/** Across tenants: a processor webhook names only the processor's mandate id. */
export async function findMandateByProviderId(
  db: Executor,
  provider: string,
  providerMandateId: string,
): Promise<MandateRecord | undefined> {
  const row = await db
    .selectFrom('direct_debit_mandates')
    .selectAll()
    .where('provider', '=', provider)
    .where('provider_mandate_id', '=', providerMandateId)
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/**
 * The payer confirmed the SetupIntent: its mandate, method and account are recorded and the mandate
 * becomes the policy's default method (any other default mandate of the policy stops being it).
 * Returns whether this call made the change (false: already recorded).
 */
export async function recordMandate(
  db: Executor,
  id: string,
  mandate: {
    policyId: string;
    paymentMethodId: string;
    providerMandateId: string;
    reference: string | null;
    status: MandateStatus;
    accountHolderName: string | null;
    sortCode: string | null;
    accountLast4: string | null;
  },
  at: Date,
): Promise<boolean> {
  await db
    .updateTable('direct_debit_mandates')
    .set({ is_default: false, updated_at: at })
    .where('policy_id', '=', mandate.policyId)
    .where('is_default', '=', true)
    .where('id', '<>', id)
    .execute();
  const updated = await db
    .updateTable('direct_debit_mandates')
    .set({
      payment_method_id: mandate.paymentMethodId,
      provider_mandate_id: mandate.providerMandateId,
      reference: mandate.reference,
      status: mandate.status,
      account_holder_name: mandate.accountHolderName,
      sort_code: mandate.sortCode,
      account_last4: mandate.accountLast4,
      is_default: mandate.status !== 'inactive',
      activated_at: mandate.status === 'active' ? at : null,
      updated_at: at,
    })
    .where('id', '=', id)
    .where('status', '=', 'setup')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** A new card became the policy's default method: its mandates stay, but are no longer how it pays. */
export async function clearDefaultMandate(db: Executor, policyId: string, at: Date): Promise<void> {
  await db
    .updateTable('direct_debit_mandates')
    .set({ is_default: false, updated_at: at })
    .where('policy_id', '=', policyId)
    .where('is_default', '=', true)
    .execute();
}

/**
 * The processor's mandate changed status. Inactive: recorded with why, and no longer the default
 * method. Returns the mandate as it was when this call changed it (undefined: no change).
 */
export async function updateMandateStatus(
  db: Executor,
  id: string,
  status: MandateStatus,
  reason: string | null,
  at: Date,
): Promise<MandateRecord | undefined> {
  const before = await db
    .selectFrom('direct_debit_mandates')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  if (before === undefined || before.status === status || before.status === 'inactive') return undefined;
  await db
    .updateTable('direct_debit_mandates')
    .set({
      status,
      updated_at: at,
      ...(status === 'active' ? { activated_at: before.activated_at ?? at } : {}),
      ...(status === 'inactive' ? { is_default: false, cancelled_at: at, cancel_reason: reason } : {}),
    })
    .where('id', '=', id)
    .execute();
  return toRecord(before);
}

/**
 * Erasure (UK GDPR art. 17): the account holder's name on these policies' mandates becomes `pseudonym`;
 * the mandate references, sort codes and last digits stay with the financial records they explain.
 */
export async function eraseMandateHolders(
  db: Executor,
  policyIds: readonly string[],
  pseudonym: string,
  at: Date,
): Promise<number> {
  if (policyIds.length === 0) return 0;
  const updated = await db
    .updateTable('direct_debit_mandates')
    .set({ account_holder_name: pseudonym, updated_at: at })
    .where('policy_id', 'in', [...policyIds])
    .where('account_holder_name', 'is not', null)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows);
}
