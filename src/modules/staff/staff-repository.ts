import { sql, type Generated, type Selectable } from 'kysely';
import type { Executor } from '../../schema.ts';
import { companyLabels } from '../companies/index.ts';
import { policyReferences } from '../policies/index.ts';
import type { SessionStage, StaffRole } from './rules/index.ts';

/** How an audited request ended: done, refused (a 4xx), or failed (a server error). */
export type AuditOutcome = 'ok' | 'denied' | 'failed';

export interface StaffTables {
  staff: {
    id: Generated<string>;
    email: string;
    role: StaffRole;
    password_hash: string;
    password_is_temporary: boolean;
    totp_secret: string | null;
    totp_pending_secret: string | null;
    totp_last_step: number | null;
    active: Generated<boolean>;
    created_at: Date;
    updated_at: Date;
    last_sign_in_at: Date | null;
  };
  staff_sessions: {
    id: Generated<string>;
    staff_id: string;
    token_hash: Buffer;
    csrf_token: string;
    stage: SessionStage;
    created_at: Date;
    last_seen_at: Date;
    expires_at: Date;
    revoked_at: Date | null;
  };
  audit_records: {
    id: Generated<number>;
    occurred_at: Date;
    request_id: string;
    actor: string;
    staff_id: string | null;
    role: string | null;
    action: string;
    resource: string | null;
    company_id: string | null;
    environment: string | null;
    policy_id: string | null;
    source_address: string | null;
    outcome: Generated<AuditOutcome>;
    table_name: string | null;
    row_key: string | null;
    operation: 'insert' | 'update' | 'delete' | null;
    before: unknown;
    after: unknown;
  };
}

export type StaffRow = Selectable<StaffTables['staff']>;
export type StaffSessionRow = Selectable<StaffTables['staff_sessions']>;

export async function insertStaff(
  db: Executor,
  values: { email: string; role: StaffRole; passwordHash: string; now: Date },
): Promise<StaffRow | undefined> {
  return db
    .insertInto('staff')
    .values({
      email: values.email,
      role: values.role,
      password_hash: values.passwordHash,
      password_is_temporary: true,
      totp_secret: null,
      totp_pending_secret: null,
      totp_last_step: null,
      created_at: values.now,
      updated_at: values.now,
      last_sign_in_at: null,
    })
    .onConflict((oc) => oc.column('email').doNothing())
    .returningAll()
    .executeTakeFirst();
}

export const findStaffByEmail = (db: Executor, email: string): Promise<StaffRow | undefined> =>
  db.selectFrom('staff').selectAll().where('email', '=', email).executeTakeFirst();

export const findStaffById = (db: Executor, id: string): Promise<StaffRow | undefined> =>
  db.selectFrom('staff').selectAll().where('id', '=', id).executeTakeFirst();

/**
 * Locks a staff member's row for the caller's transaction and tells whether it still holds
 * `passwordHash` and is active: a session started under this lock is one that a credentials reset or a
 * deactivation either revokes (it waits for the lock) or was never started (it committed first).
 */
export async function lockUnchangedStaff(trx: Executor, id: string, passwordHash: string): Promise<boolean> {
  const row = await trx
    .selectFrom('staff')
    .select(['password_hash', 'active'])
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined && row.active && row.password_hash === passwordHash;
}

export const listStaff = (db: Executor): Promise<StaffRow[]> =>
  db.selectFrom('staff').selectAll().orderBy('email').execute();

export async function updateStaff(
  db: Executor,
  id: string,
  changes: Partial<
    Pick<
      StaffRow,
      | 'role'
      | 'active'
      | 'password_hash'
      | 'password_is_temporary'
      | 'totp_secret'
      | 'totp_pending_secret'
      | 'totp_last_step'
      | 'last_sign_in_at'
    >
  >,
  now: Date,
): Promise<StaffRow | undefined> {
  return db
    .updateTable('staff')
    .set({ ...changes, updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Accepts a TOTP step only once: false when this or a later step was already used. */
export async function takeTotpStep(db: Executor, id: string, step: number): Promise<boolean> {
  const row = await db
    .updateTable('staff')
    .set({ totp_last_step: step })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertSession(
  db: Executor,
  values: Omit<StaffSessionRow, 'id' | 'revoked_at'>,
): Promise<StaffSessionRow> {
  return db
    .insertInto('staff_sessions')
    .values({ ...values, revoked_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A live session by its token's hash, with its staff member (one query: this runs on every request). */
export async function findLiveSession(db: Executor, tokenHash: Buffer, now: Date) {
  return db
    .selectFrom('staff_sessions as s')
    .innerJoin('staff as m', 'm.id', 's.staff_id')
    .select([
      's.id as session_id',
      's.stage',
      's.csrf_token',
      's.last_seen_at',
      's.expires_at',
      'm.id as staff_id',
      'm.email',
      'm.role',
      'm.totp_secret',
      'm.password_is_temporary',
    ])
    .where('s.token_hash', '=', tokenHash)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where('m.active', '=', true)
    .executeTakeFirst();
}

export async function updateSession(
  db: Executor,
  id: string,
  changes: Partial<Pick<StaffSessionRow, 'stage' | 'last_seen_at' | 'expires_at' | 'revoked_at'>>,
): Promise<void> {
  await db.updateTable('staff_sessions').set(changes).where('id', '=', id).execute();
}

/** Ends every session of a staff member: sign-out everywhere, a password change, deactivation. */
export async function revokeSessions(db: Executor, staffId: string, now: Date): Promise<number> {
  const result = await db
    .updateTable('staff_sessions')
    .set({ revoked_at: now })
    .where('staff_id', '=', staffId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Sessions ended or idle past their expiry a day ago: nothing refers to them any more. */
export async function purgeSessions(db: Executor, now: Date): Promise<number> {
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const result = await db
    .deleteFrom('staff_sessions')
    .where((eb) => eb.or([eb('expires_at', '<', dayAgo), eb('revoked_at', '<', dayAgo)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

// ── Audit ───────────────────────────────────────────────────────────────────────────────────────

/** A record written by the service itself (a sign-in, a refusal, an action that changed no audited row). */
export async function insertAuditRecord(
  db: Executor,
  record: Omit<
    Selectable<StaffTables['audit_records']>,
    'id' | 'outcome' | 'table_name' | 'row_key' | 'operation' | 'before' | 'after'
  > & {
    outcome: AuditOutcome;
    after?: unknown;
  },
): Promise<void> {
  await db
    .insertInto('audit_records')
    .values({
      ...record,
      table_name: null,
      row_key: null,
      operation: null,
      before: null,
      after: record.after === undefined ? null : JSON.stringify(record.after),
    })
    .execute();
}

export async function hasAuditRecords(db: Executor, requestId: string): Promise<boolean> {
  const row = await db
    .selectFrom('audit_records')
    .select(sql<number>`1`.as('one'))
    .where('request_id', '=', requestId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export interface AuditFilter {
  readonly actor?: string | undefined;
  readonly companyId?: string | undefined;
  readonly environment?: string | undefined;
  readonly policyId?: string | undefined;
  readonly requestId?: string | undefined;
  readonly resource?: string | undefined;
  readonly from?: Date | undefined;
  readonly to?: Date | undefined;
  /** Records older than this id (paging newest first). */
  readonly before?: number | undefined;
  readonly limit: number;
}

/** Newest first, with the company's and policy's references. */
export async function listAuditRecords(db: Executor, filter: AuditFilter) {
  let query = db
    .selectFrom('audit_records as a')
    .leftJoin(companyLabels(db).as('c'), 'c.id', 'a.company_id')
    .leftJoin(policyReferences(db).as('p'), 'p.id', 'a.policy_id')
    .select([
      'a.id',
      'a.occurred_at',
      'a.request_id',
      'a.actor',
      'a.role',
      'a.action',
      'a.resource',
      'a.environment',
      'a.source_address',
      'a.outcome',
      'a.table_name',
      'a.row_key',
      'a.operation',
      'a.before',
      'a.after',
      'c.company_reference',
      'p.policy_reference',
    ])
    .orderBy('a.id', 'desc')
    .limit(filter.limit);
  if (filter.actor !== undefined) query = query.where('a.actor', '=', filter.actor);
  // The policy was found in the company and environment asked for: its id is the whole filter.
  if (filter.policyId !== undefined) query = query.where('a.policy_id', '=', filter.policyId);
  else {
    if (filter.companyId !== undefined) query = query.where('a.company_id', '=', filter.companyId);
    if (filter.environment !== undefined) query = query.where('a.environment', '=', filter.environment);
  }
  if (filter.requestId !== undefined) query = query.where('a.request_id', '=', filter.requestId);
  if (filter.resource !== undefined) query = query.where('a.resource', '=', filter.resource);
  if (filter.from !== undefined) query = query.where('a.occurred_at', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('a.occurred_at', '<', filter.to);
  if (filter.before !== undefined) query = query.where('a.id', '<', filter.before);
  return query.execute();
}

/** A staff member's role and whether they may sign in (who may handle a claim); undefined when unknown. */
export async function findStaffRole(
  db: Executor,
  id: string,
): Promise<{ role: string; active: boolean } | undefined> {
  return db.selectFrom('staff').select(['role', 'active']).where('id', '=', id).executeTakeFirst();
}
