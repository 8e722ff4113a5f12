import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';

/*
 * The reads of a subject access export. NOTE: they cross every module's tables on purpose: an export
 * must show each stored row about the person as stored (not one module's view of it), and a test
 * compares it with every table that names a policy or a user. Read-only; nothing here writes.
 * Secrets never leave: no password, token, code or key hash, no sealed token pair. This file reads
 * the person, their account and policies; the other subject-access-*-repository.ts files read their
 * driving, their money, and what was said and done about them.
 */

/** The person an export is about, and the tenant their rows belong to. */
export interface Subject {
  readonly userId: string;
  readonly userReference: string;
  readonly companyId: string;
  readonly companyReference: string;
  readonly companyName: string;
  readonly environment: string;
  readonly email: string;
  /** When the account began: nothing about the person is older (events are read from then on). */
  readonly since: Date;
}

/** One policy of the subject: its id for the queries, its reference for the document. */
export interface SubjectPolicy {
  readonly id: string;
  readonly reference: string;
}

export async function findSubject(
  db: Executor,
  userReference: string,
): Promise<{ subject: Subject; account: Record<string, unknown> } | undefined> {
  const row = await db
    .selectFrom('users as u')
    .innerJoin('companies as c', 'c.id', 'u.company_id')
    .select([
      'u.id',
      'u.user_reference',
      'u.company_id',
      'c.company_reference',
      'c.name as company_name',
      'u.environment',
      'u.email',
      'u.username',
      'u.first_names',
      'u.last_names',
      'u.active',
      'u.password_is_temporary',
      'u.temporary_password_expires_at',
      'u.password_changed_at',
      'u.last_login_at',
      'u.created_at',
      'u.updated_at',
    ])
    .where('u.user_reference', '=', userReference)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    subject: {
      userId: row.id,
      userReference: row.user_reference,
      companyId: row.company_id,
      companyReference: row.company_reference,
      companyName: row.company_name,
      environment: row.environment,
      email: row.email,
      since: row.created_at,
    },
    account: {
      user_reference: row.user_reference,
      email: row.email,
      username: row.username,
      first_names: row.first_names,
      last_names: row.last_names,
      active: row.active,
      password_is_temporary: row.password_is_temporary,
      temporary_password_expires_at: row.temporary_password_expires_at,
      password_changed_at: row.password_changed_at,
      last_login_at: row.last_login_at,
      created_at: row.created_at,
      updated_at: row.updated_at,
    },
  };
}

/** The company and environment of the account: the filter of the tenant's own rows (emails, events). */
export const tenantOfSubject = (subject: Subject): Tenant =>
  asTenant(subject.companyId, subject.environment as DataEnvironment);

/** Rows read per query: a round trip per this many rows, and at most this many held at once. */
export const EXPORT_BATCH_ROWS = 2_000;

export const none = (ids: readonly string[]): boolean => ids.length === 0;
/** jsonb as a value: parsed by both drivers, but a string should one come back as text. */
export const parsed = (value: unknown): unknown =>
  typeof value === 'string' ? (JSON.parse(value) as unknown) : value;

/** Keyset pages: each read takes the last row of the previous page (undefined for the first). */
export type After<K> = K | undefined;

export async function listPolicies(db: Executor, subject: Subject) {
  const rows = await db
    .selectFrom('policies')
    .select([
      'id',
      'policy_reference',
      'status',
      'product_reference',
      'version_count',
      'first_start_at',
      'current_start_at',
      'current_end_at',
      'auto_renew',
      'renewal_terms',
      'billing_day',
      'subscription_premium_pence',
      'subscription_installments',
      'billed_through_at',
      'created_at',
      'updated_at',
    ])
    .where('user_id', '=', subject.userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(({ id, renewal_terms, ...rest }) => ({
    id,
    record: { ...rest, renewal_terms: parsed(renewal_terms) },
  }));
}

export async function listPolicyVersions(db: Executor, policyId: string) {
  const rows = await db
    .selectFrom('policy_versions')
    .select([
      'id',
      'sequence',
      'version_type',
      'term',
      'effective_at',
      'statement_start_at',
      'statement_end_at',
      'usage_premium_pence',
      'reason',
      'superseded_at',
      'created_at',
      'snapshot',
    ])
    .where('policy_id', '=', policyId)
    .orderBy('sequence')
    .execute();
  return rows.map(({ id, snapshot, ...rest }) => ({
    policy_version_reference: id,
    ...rest,
    snapshot: parsed(snapshot),
  }));
}

export async function listPolicyVersionIds(db: Executor, policyIds: readonly string[]): Promise<string[]> {
  if (none(policyIds)) return [];
  const rows = await db
    .selectFrom('policy_versions')
    .select('id')
    .where('policy_id', 'in', policyIds)
    .execute();
  return rows.map((r) => r.id);
}

/** Proposer emails in the subject's policy versions: emails may have gone to an address since changed. */
export async function listSnapshotEmails(db: Executor, policyIds: readonly string[]): Promise<string[]> {
  if (none(policyIds)) return [];
  const rows = await db
    .selectFrom('policy_versions')
    .select(sql<string | null>`lower(snapshot #>> '{proposer,email}')`.as('email'))
    .distinct()
    .where('policy_id', 'in', policyIds)
    .execute();
  return rows.flatMap((r) => (r.email === null ? [] : [r.email]));
}

export async function listPaymentCustomers(db: Executor, subject: Subject) {
  return db
    .selectFrom('payment_customers')
    .select(['provider', 'provider_customer_id', 'created_at'])
    .where('user_id', '=', subject.userId)
    .orderBy('created_at')
    .execute();
}

export async function pageLoginSessions(db: Executor, subject: Subject, after: After<{ id: string }>) {
  let q = db
    .selectFrom('auth_login_sessions')
    .select(['id', 'created_at', 'expires_at', 'used_at'])
    .where('user_id', '=', subject.userId);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageRefreshTokens(db: Executor, subject: Subject, after: After<{ id: string }>) {
  let q = db
    .selectFrom('auth_refresh_tokens')
    .select(['id', 'family_id', 'created_at', 'expires_at', 'rotated_at', 'revoked_at', 'revoked_reason'])
    .where('user_id', '=', subject.userId);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}

export async function pageResetCodes(db: Executor, subject: Subject, after: After<{ id: string }>) {
  let q = db
    .selectFrom('auth_reset_codes')
    .select(['id', 'attempts', 'created_at', 'expires_at', 'used_at'])
    .where('user_id', '=', subject.userId);
  if (after !== undefined) q = q.where('id', '>', after.id);
  return q.orderBy('id').limit(EXPORT_BATCH_ROWS).execute();
}
