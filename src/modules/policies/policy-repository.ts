import { randomUUID } from 'node:crypto';
import { sql, type Generated } from 'kysely';
import { toPence } from '../../platform/money.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { VersionType } from './policy-schemas.ts';
import type { PolicySnapshot, RenewalTerms, StoredStatus, VersionRecord } from './rules/policy-versions.ts';
import type { Executor } from '../../schema.ts';
import { notePolicyWrites } from './policy-row-cache.ts';
import { jsonRows } from '../../platform/db/json-rows.ts';

export interface PolicyTables {
  policies: {
    id: Generated<string>;
    policy_reference: string;
    company_id: string;
    environment: string;
    user_id: string;
    status: StoredStatus;
    version_count: number;
    current_start_at: Date;
    current_end_at: Date;
    auto_renew: boolean;
    renewal_terms: string | RenewalTerms | null;
    payments_revision: Generated<number>;
    // What billing needs of the terms in force, kept with every version (migration 0015).
    billing_day: number | null;
    subscription_premium_pence: number | null;
    subscription_installments: number | null;
    first_start_at: Date | null;
    /** The first term's installments paid at binding (migration 0063): billing starts after them. */
    prepaid_installments: Generated<number>;
    /** The end of the latest statement's period (null before the first). */
    billed_through_at: Date | null;
    /** The product the terms in force name (migration 0022): billing applies its rules. */
    product_reference: string | null;
    /** Lower-case text the console's search matches: written by a trigger on new versions (0027). */
    search_text: Generated<string | null>;
    created_at: Date;
    updated_at: Date;
  };
  /** Which policy holds each reference: where references are kept unique (src/distribution.ts). */
  policy_references: {
    policy_reference: string;
    policy_id: string;
  };
  policy_versions: {
    id: Generated<string>;
    policy_id: string;
    sequence: number;
    version_type: VersionType;
    /** Null for statement (`st`) versions written since migration 0015: the terms before them hold. */
    snapshot: string | PolicySnapshot | null;
    effective_at: Date;
    statement_start_at: Date | null;
    statement_end_at: Date | null;
    usage_premium_pence: number | null;
    reason: string | null;
    created_at: Date;
    /** The term the version sets or ends; null for statements (migration 0020). */
    term: number | null;
    superseded_at: Date | null;
  };
}

export interface PolicyRecord {
  readonly id: string;
  readonly policyReference: string;
  readonly companyId: string;
  readonly environment: string;
  readonly userId: string;
  readonly status: StoredStatus;
  readonly versionCount: number;
  readonly currentStartAt: Date;
  readonly currentEndAt: Date;
  readonly autoRenew: boolean;
  readonly renewalTerms: RenewalTerms | null;
  /** Bumped by every change to the policy's payment records. */
  readonly paymentsRevision: number;
  readonly createdAt: Date;
}

const policyColumns = [
  'id',
  'policy_reference',
  'company_id',
  'environment',
  'user_id',
  'status',
  'version_count',
  'current_start_at',
  'current_end_at',
  'auto_renew',
  'renewal_terms',
  'payments_revision',
  'created_at',
] as const;

type PolicyRow = {
  id: string;
  policy_reference: string;
  company_id: string;
  environment: string;
  user_id: string;
  status: StoredStatus;
  version_count: number;
  current_start_at: Date;
  current_end_at: Date;
  auto_renew: boolean;
  renewal_terms: string | RenewalTerms | null;
  payments_revision: number;
  created_at: Date;
};

const toPolicy = (row: PolicyRow): PolicyRecord => ({
  id: row.id,
  policyReference: row.policy_reference,
  companyId: row.company_id,
  environment: row.environment,
  userId: row.user_id,
  status: row.status,
  versionCount: row.version_count,
  currentStartAt: row.current_start_at,
  currentEndAt: row.current_end_at,
  autoRenew: row.auto_renew,
  renewalTerms:
    typeof row.renewal_terms === 'string'
      ? (JSON.parse(row.renewal_terms) as RenewalTerms)
      : row.renewal_terms,
  paymentsRevision: row.payments_revision,
  createdAt: row.created_at,
});

/** The tenant's policies: every read of policies by a client or policyholder starts here. */
const tenantPolicies = (db: Executor, tenant: Tenant) => db.selectFrom('policies').where(forTenant(tenant));

/**
 * Inserts a policy under `reference`; undefined when that reference is taken (the caller draws another).
 * In a transaction: the reference is held from the first statement.
 */
export async function insertPolicy(
  db: Executor,
  tenant: Tenant,
  values: { reference: string; userId: string; startAt: Date; endAt: Date; autoRenew: boolean; at: Date },
): Promise<PolicyRecord | undefined> {
  // The reference is taken first, in the caller's transaction: its table keeps references unique
  // across companies, which a sharded policies table could not.
  const id = randomUUID();
  const taken = await db
    .insertInto('policy_references')
    .values({ policy_reference: values.reference, policy_id: id })
    .onConflict((oc) => oc.column('policy_reference').doNothing())
    .returning('policy_id')
    .executeTakeFirst();
  if (taken === undefined) return undefined;
  const row = await db
    .insertInto('policies')
    .values({
      id,
      policy_reference: values.reference,
      company_id: tenant.companyId,
      environment: tenant.environment,
      user_id: values.userId,
      status: 'active',
      version_count: 0,
      current_start_at: values.startAt,
      current_end_at: values.endAt,
      auto_renew: values.autoRenew,
      renewal_terms: null,
      created_at: values.at,
      updated_at: values.at,
    })
    .returning(policyColumns)
    .executeTakeFirstOrThrow();
  notePolicyWrites([values.userId]);
  return toPolicy(row);
}

export async function findPolicy(
  db: Executor,
  tenant: Tenant,
  reference: string,
): Promise<PolicyRecord | undefined> {
  const row = await tenantPolicies(db, tenant)
    .select(policyColumns)
    .where('policy_reference', '=', reference)
    .executeTakeFirst();
  return row === undefined ? undefined : toPolicy(row);
}

/** The policy row locked for a change: concurrent changes to one policy queue here and lose nothing. */
export async function lockPolicy(
  db: Executor,
  tenant: Tenant,
  reference: string,
): Promise<PolicyRecord | undefined> {
  const row = await tenantPolicies(db, tenant)
    .select(policyColumns)
    .where('policy_reference', '=', reference)
    .forUpdate()
    .executeTakeFirst();
  return row === undefined ? undefined : toPolicy(row);
}

export async function listPoliciesOfUser(
  db: Executor,
  tenant: Tenant,
  userId: string,
): Promise<PolicyRecord[]> {
  const rows = await tenantPolicies(db, tenant)
    .select(policyColumns)
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
  return rows.map(toPolicy);
}

/** Appends the next version of a locked policy and moves the policy's summary columns with it. */
export async function appendVersion(
  db: Executor,
  policy: PolicyRecord,
  values: {
    versionType: VersionType;
    snapshot: PolicySnapshot;
    effectiveAt: Date;
    at: Date;
    status: StoredStatus;
    /** The term the version sets or ends. */
    term: number;
    /**
     * The latest term's snapshot, which the policy row's billing and end-of-term columns follow; the
     * version's own by default. An adjustment of the current term under a stored renewal keeps the
     * renewal's; a cancellation that ends the renewal with the current term gives the current term's.
     */
    rowTerm?: PolicySnapshot;
    reason?: string | null;
    renewalTerms?: RenewalTerms | null;
    statement?: { startAt: Date; endAt: Date; usagePremiumPence: number };
  },
): Promise<VersionRecord> {
  const sequence = policy.versionCount + 1;
  const row = values.rowTerm ?? values.snapshot;
  notePolicyWrites([policy.userId]);
  const inserted = await db
    .insertInto('policy_versions')
    .values({
      policy_id: policy.id,
      sequence,
      version_type: values.versionType,
      snapshot: JSON.stringify(values.snapshot),
      effective_at: values.effectiveAt,
      statement_start_at: values.statement?.startAt ?? null,
      statement_end_at: values.statement?.endAt ?? null,
      usage_premium_pence: values.statement?.usagePremiumPence ?? null,
      reason: values.reason ?? null,
      created_at: values.at,
      term: values.term,
    })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
  await db
    .updateTable('policies')
    .set({
      version_count: sequence,
      status: values.status,
      billing_day: row.policy.billing_day_date ?? null,
      subscription_premium_pence: toPence(row.pricing.subscription_premium),
      subscription_installments: row.pricing.subscription_installments ?? null,
      ...(sequence === 1 ? { first_start_at: new Date(row.policy.start_date * 1000) } : {}),
      current_start_at: new Date(row.policy.start_date * 1000),
      current_end_at: new Date(row.policy.end_date * 1000),
      auto_renew: row.policy.auto_renew ?? false,
      product_reference: row.policy.product_reference ?? null,
      ...(values.renewalTerms === undefined
        ? {}
        : { renewal_terms: values.renewalTerms === null ? null : JSON.stringify(values.renewalTerms) }),
      updated_at: values.at,
    })
    .where('id', '=', policy.id)
    .execute();
  return {
    id: inserted.id,
    sequence,
    versionType: values.versionType,
    snapshot: values.snapshot,
    effectiveAt: values.effectiveAt,
    statementStartAt: values.statement?.startAt ?? null,
    statementEndAt: values.statement?.endAt ?? null,
    usagePremiumPence: values.statement?.usagePremiumPence ?? null,
    createdAt: inserted.created_at,
    term: values.term,
    supersededAt: null,
  };
}

/** Marks versions as no longer counting (a replaced or cancelled renewal, an undone lapse). */
export async function supersedeVersions(db: Executor, ids: readonly string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('policy_versions')
    .set({ superseded_at: at })
    .where('id', 'in', [...ids])
    .execute();
}

/** Sets how far a policy is billed: a policy brought over with its term ended owes nothing more here. */
export async function setBilledThrough(db: Executor, policyId: string, through: Date): Promise<void> {
  await db.updateTable('policies').set({ billed_through_at: through }).where('id', '=', policyId).execute();
}

/** Records how many of the first term's installments the payment at binding paid (billing skips them). */
export async function setPrepaidInstallments(db: Executor, policyId: string, count: number): Promise<void> {
  await db.updateTable('policies').set({ prepaid_installments: count }).where('id', '=', policyId).execute();
}

/**
 * Appends an `st` version to each of many locked policies in two statements, and bumps the count. A
 * statement changes no term, so the version stores no snapshot: readers carry the one before forward.
 */
export async function appendStatementVersions(
  db: Executor,
  rows: ReadonlyArray<{
    id: string;
    policyId: string;
    /** The policy's version count before this one; the new version's sequence is one more. */
    versionCount: number;
    startAt: Date;
    endAt: Date;
    usagePremiumPence: number;
  }>,
  at: Date,
): Promise<void> {
  if (rows.length === 0) return;
  // One JSON parameter for both statements (platform/db/json-rows.ts).
  const batch = jsonRows(
    rows.map((r) => ({
      id: r.id,
      policy_id: r.policyId,
      version_count: r.versionCount,
      start_ms: r.startAt.getTime(),
      end_ms: r.endAt.getTime(),
      usage: r.usagePremiumPence,
    })),
  );
  const columns = sql`(id uuid, policy_id uuid, version_count int, start_ms float8, end_ms float8, usage bigint)`;
  await sql`
    insert into policy_versions (id, policy_id, sequence, version_type, snapshot, effective_at,
      statement_start_at, statement_end_at, usage_premium_pence, created_at)
    select n.id, n.policy_id, n.version_count + 1, 'st', null, to_timestamp(n.end_ms / 1000),
      to_timestamp(n.start_ms / 1000), to_timestamp(n.end_ms / 1000), n.usage, ${at}
    from json_to_recordset(${batch}::json) as n${columns}`.execute(db);
  const owners = await sql<{ user_id: string }>`
    update policies p set version_count = n.version_count + 1, billed_through_at = to_timestamp(n.end_ms / 1000),
      updated_at = ${at}
    from json_to_recordset(${batch}::json) as n${columns}
    where p.id = n.policy_id
    returning p.user_id`.execute(db);
  notePolicyWrites(owners.rows.map((r) => r.user_id));
}

export async function setRenewalTerms(
  db: Executor,
  policyId: string,
  terms: RenewalTerms,
  at: Date,
): Promise<void> {
  const owners = await db
    .updateTable('policies')
    .set({ renewal_terms: JSON.stringify(terms), updated_at: at })
    .where('id', '=', policyId)
    .returning('user_id')
    .execute();
  notePolicyWrites(owners.map((r) => r.user_id));
}

/** Every version of a policy, oldest first; a statement version without a snapshot shows the one before. */
export async function listVersions(db: Executor, policyId: string): Promise<VersionRecord[]> {
  const rows = await db
    .selectFrom('policy_versions')
    .select([
      'id',
      'sequence',
      'version_type',
      'snapshot',
      'effective_at',
      'statement_start_at',
      'statement_end_at',
      'usage_premium_pence',
      'created_at',
      'term',
      'superseded_at',
      'reason',
    ])
    .where('policy_id', '=', policyId)
    .orderBy('sequence')
    .execute();
  let before: PolicySnapshot | undefined;
  return rows.map((row) => {
    const snapshot = parseSnapshot(row.snapshot) ?? before;
    if (snapshot === undefined)
      throw new Error(`policy ${policyId} has a statement version before any terms`);
    before = snapshot;
    return {
      id: row.id,
      sequence: row.sequence,
      versionType: row.version_type,
      snapshot,
      reason: row.reason,
      effectiveAt: row.effective_at,
      statementStartAt: row.statement_start_at,
      statementEndAt: row.statement_end_at,
      usagePremiumPence: row.usage_premium_pence,
      createdAt: row.created_at,
      term: row.term,
      supersededAt: row.superseded_at,
    };
  });
}

const parseSnapshot = (stored: string | PolicySnapshot | null): PolicySnapshot | undefined =>
  stored === null ? undefined : typeof stored === 'string' ? (JSON.parse(stored) as PolicySnapshot) : stored;

/**
 * Live policies whose term has ended, across tenants: the daily renew/lapse job's work list.
 * Returns the tenant of each, since the job is not acting for one company.
 */
export async function listTermsEnded(
  db: Executor,
  now: Date,
  limit: number,
): Promise<Array<{ reference: string; companyId: string; environment: string }>> {
  const rows = await db
    .selectFrom('policies')
    .select(['policy_reference', 'company_id', 'environment'])
    .where('status', '=', 'active')
    .where('current_end_at', '<=', now)
    .orderBy('current_end_at')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    reference: r.policy_reference,
    companyId: r.company_id,
    environment: r.environment,
  }));
}

// ── Reads for usage (journeys): lean rows, no snapshots ──────────────────────────────────────────

export interface PolicyUsageRow {
  readonly id: string;
  readonly policyReference: string;
  readonly userId: string;
  readonly status: StoredStatus;
  readonly versionCount: number;
}

const usageColumns = ['id', 'policy_reference', 'user_id', 'status', 'version_count'] as const;

const toUsageRow = (row: {
  id: string;
  policy_reference: string;
  user_id: string;
  status: StoredStatus;
  version_count: number;
}): PolicyUsageRow => ({
  id: row.id,
  policyReference: row.policy_reference,
  userId: row.user_id,
  status: row.status,
  versionCount: row.version_count,
});

export async function findPolicyForUsage(
  db: Executor,
  tenant: Tenant,
  reference: string,
): Promise<PolicyUsageRow | undefined> {
  const row = await tenantPolicies(db, tenant)
    .select(usageColumns)
    .where('policy_reference', '=', reference)
    .executeTakeFirst();
  return row === undefined ? undefined : toUsageRow(row);
}

export async function listPoliciesForUsageOfUser(
  db: Executor,
  tenant: Tenant,
  userId: string,
): Promise<PolicyUsageRow[]> {
  const rows = await tenantPolicies(db, tenant)
    .select(usageColumns)
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
  return rows.map(toUsageRow);
}

/** What rating needs of each version, read out of the snapshot by the database: the term and the usage price. */
export interface VersionTermRow {
  readonly id: string;
  readonly sequence: number;
  readonly versionType: VersionType;
  readonly effectiveAt: Date;
  /** `policy.start_date` and `policy.end_date` of the snapshot, UNIX seconds. */
  readonly startDate: number;
  readonly endDate: number;
  /** `pricing.usage_rate` as the decimal text jsonb holds (exact: never through a binary float). */
  readonly usageRate: string;
  /** `pricing.usage_unit`; null when the snapshot has none (the default, mile). */
  readonly usageUnit: string | null;
  readonly term: number | null;
  readonly supersededAt: Date | null;
}

/** Every version of a policy, oldest first, reduced to its term and usage price. */
export async function listVersionTerms(db: Executor, policyId: string): Promise<VersionTermRow[]> {
  const rows = await db
    .selectFrom('policy_versions')
    .select((eb) => [
      'id',
      'sequence',
      'version_type',
      'effective_at',
      'term',
      'superseded_at',
      sql<string | null>`${eb.ref('snapshot')}->'policy'->>'start_date'`.as('start_date'),
      sql<string | null>`${eb.ref('snapshot')}->'policy'->>'end_date'`.as('end_date'),
      sql<string | null>`${eb.ref('snapshot')}->'pricing'->>'usage_rate'`.as('usage_rate'),
      sql<string | null>`${eb.ref('snapshot')}->'pricing'->>'usage_unit'`.as('usage_unit'),
    ])
    .where('policy_id', '=', policyId)
    .orderBy('sequence')
    .execute();
  // A statement version without a snapshot has the terms of the one before.
  let before:
    | Omit<VersionTermRow, 'id' | 'sequence' | 'versionType' | 'effectiveAt' | 'term' | 'supersededAt'>
    | undefined;
  return rows.map((row) => {
    const terms =
      row.start_date === null || row.end_date === null || row.usage_rate === null
        ? before
        : {
            startDate: Number(row.start_date),
            endDate: Number(row.end_date),
            usageRate: row.usage_rate,
            usageUnit: row.usage_unit,
          };
    if (terms === undefined) throw new Error(`policy ${policyId} has a statement version before any terms`);
    before = terms;
    return {
      id: row.id,
      sequence: row.sequence,
      versionType: row.version_type,
      effectiveAt: row.effective_at,
      term: row.term,
      supersededAt: row.superseded_at,
      ...terms,
    };
  });
}
