/** Claims and what hangs off them (exposures, payments, notes, photos), the first notices owed, and settings. */
import { sql, type Generated } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { ClaimState, CoverSummary, ExposureKind, PhotoType } from './rules/index.ts';

/** A crash file as stored: the impact, its trace, and whether the trace is final. */
export interface CrashFile {
  readonly crash_reference: string;
  readonly device_id: string;
  readonly source: 'device' | 'detected';
  readonly peak_acceleration_g: number | null;
  readonly delta_v_kmh: number | null;
  readonly airbag_deployed: boolean | null;
  readonly complete: boolean;
  readonly positions: ReadonlyArray<{ time: number; lat: number; lon: number; speed_kmh: number | null }>;
}

export interface ClaimTables {
  /** First notices of loss owed by crashes (migration 0049), filled by a trigger on `crash_events`. */
  claim_crashes_owed: {
    crash_event_id: string;
    company_id: string;
    environment: string;
    policy_id: string;
    due_at: Date;
    attempts: Generated<number>;
    leased_until: Date | null;
    last_error: string | null;
    created_at: Date;
  };
  claims: {
    id: Generated<string>;
    policy_id: string;
    company_id: string;
    environment: string;
    state: ClaimState;
    source: 'crash' | 'reported';
    crash_event_id: string | null;
    policy_version_id: string | null;
    occurred_at: Date;
    lat: number | null;
    lon: number | null;
    place_name: string | null;
    postcode: string | null;
    speed_kmh: string | null;
    crash_file: CrashFile | string | null;
    cover: CoverSummary | string | null;
    description: string | null;
    other_parties: string | null;
    injuries: boolean | null;
    other_vehicles: boolean | null;
    police_attended: boolean | null;
    handler_staff_id: string | null;
    respond_by: Date | null;
    referred_at: Date | null;
    legal_hold_reason: string | null;
    legal_hold_at: Date | null;
    erased_at: Date | null;
    opened_at: Date | null;
    closed_at: Date | null;
    created_at: Date;
    updated_at: Date;
    /** Staff's decision (migration 0058): null until made. */
    at_fault: boolean | null;
    /** When the claim was last settled (migration 0058). */
    settled_at: Date | null;
    /** When it last ended: closed, rejected or withdrawn; null while live (migration 0058). */
    ended_at: Date | null;
    /** A reported claim's sender's own id, unique per policy where given (migration 0072). */
    report_reference: string | null;
    /** SHA-256 (hex) of the report sent under `report_reference`: the same report sent again, or another. */
    report_digest: string | null;
  };
  claim_exposures: {
    id: Generated<string>;
    policy_id: string;
    claim_id: string;
    company_id: string;
    environment: string;
    kind: ExposureKind;
    reserve_pence: number;
    paid_pence: Generated<number>;
    settled_at: Date | null;
    created_at: Date;
    updated_at: Date;
  };
  claim_payments: {
    id: Generated<string>;
    policy_id: string;
    claim_id: string;
    exposure_id: string;
    company_id: string;
    environment: string;
    amount_pence: number;
    final: boolean;
    payee: string;
    paid_at: Date;
    payment_reference: string | null;
  };
  claim_notes: {
    id: Generated<string>;
    policy_id: string;
    claim_id: string;
    company_id: string;
    environment: string;
    author: string;
    staff_id: string | null;
    body: string;
    created_at: Date;
  };
  claim_photos: {
    id: Generated<string>;
    policy_id: string;
    claim_id: string;
    company_id: string;
    environment: string;
    content_type: PhotoType;
    size_bytes: number;
    sha256: string;
    content: Uint8Array;
    uploaded_at: Date;
  };
  claim_settings: {
    company_id: string;
    environment: string;
    response_hours: number;
    updated_at: Date;
    /** Years after closing that a closed claim's personal data is kept (migration 0058); null: the default. */
    retention_years: number | null;
  };
  /**
   * Each change of an exposure's reserve (migration 0058, written by triggers): `reserve` the change,
   * `release` what a final payment left unpaid (negative).
   */
  claim_reserve_movements: {
    id: Generated<string>;
    policy_id: string;
    claim_id: string;
    exposure_id: string;
    company_id: string;
    environment: string;
    kind: 'reserve' | 'release';
    amount_pence: number;
    moved_at: Date;
  };
}

export type ClaimRow = ClaimTables['claims'] & { id: string };

const claimColumns = [
  'id',
  'policy_id',
  'company_id',
  'environment',
  'state',
  'source',
  'crash_event_id',
  'policy_version_id',
  'occurred_at',
  'lat',
  'lon',
  'place_name',
  'postcode',
  'speed_kmh',
  'crash_file',
  'cover',
  'description',
  'other_parties',
  'injuries',
  'other_vehicles',
  'police_attended',
  'handler_staff_id',
  'respond_by',
  'referred_at',
  'legal_hold_reason',
  'legal_hold_at',
  'erased_at',
  'opened_at',
  'closed_at',
  'created_at',
  'updated_at',
  'at_fault',
  'settled_at',
  'ended_at',
] as const;

/** A claim of the tenant by id, `lock` holding its row for a change; undefined when it has none. */
export async function findClaim(
  db: Executor,
  tenant: Tenant,
  claimId: string,
  lock = false,
): Promise<ClaimRow | undefined> {
  let query = db
    .selectFrom('claims')
    .select(claimColumns)
    .where(forTenant(tenant, 'claims'))
    .where('id', '=', claimId);
  if (lock) query = query.forUpdate();
  return (await query.executeTakeFirst()) as ClaimRow | undefined;
}

/** The tenant's claims, newest crash first, optionally of one policy or in some states; a page after `before`. */
export async function listClaims(
  db: Executor,
  tenant: Tenant,
  filter: { policyId?: string; states?: readonly ClaimState[]; referred?: boolean; limit: number },
): Promise<ClaimRow[]> {
  let query = db.selectFrom('claims').select(claimColumns).where(forTenant(tenant, 'claims'));
  if (filter.policyId !== undefined) query = query.where('policy_id', '=', filter.policyId);
  if (filter.states !== undefined && filter.states.length > 0)
    query = query.where('state', 'in', filter.states);
  if (filter.referred !== undefined)
    query = query.where('referred_at', filter.referred ? 'is not' : 'is', null);
  // NOTE: the queue shows new first notices of loss first: drafts, then by the crash's time, newest first.
  return (await query
    .orderBy(sql`state = 'draft'`, 'desc')
    .orderBy('occurred_at', 'desc')
    .orderBy('id')
    .limit(filter.limit)
    .execute()) as ClaimRow[];
}

/**
 * How many claims reported on the policy (not opened by a crash) are in progress, counted under a lock
 * on the policy's reports that its transaction holds, so that reports made at once are counted in turn.
 */
/**
 * Reports on the policy wait for one another until `trx` ends: each then counts the claims in progress,
 * and finds a report sent again, with what the one before it committed.
 */
export async function lockReports(trx: Executor, policyId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`claims.report:${policyId}`}, 0))`.execute(trx);
}

/** The claim reported under `reference` on the policy, with the digest of its report. */
export async function findReported(
  trx: Executor,
  policyId: string,
  reference: string,
): Promise<{ id: string; report_digest: string | null } | undefined> {
  return trx
    .selectFrom('claims')
    .select(['id', 'report_digest'])
    .where('policy_id', '=', policyId)
    .where('report_reference', '=', reference)
    .executeTakeFirst();
}

/** Reported claims in progress on the policy; call `lockReports` first in the same transaction. */
export async function countReportedInProgress(trx: Executor, policyId: string): Promise<number> {
  const row = await trx
    .selectFrom('claims')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('policy_id', '=', policyId)
    .where('source', '=', 'reported')
    .where('state', 'not in', ['closed', 'rejected', 'withdrawn'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertClaim(
  db: Executor,
  claim: Omit<ClaimTables['claims'], 'id'>,
): Promise<ClaimRow | undefined> {
  const row = await db
    .insertInto('claims')
    .values({
      ...claim,
      crash_file: claim.crash_file === null ? null : JSON.stringify(claim.crash_file),
      cover: claim.cover === null ? null : JSON.stringify(claim.cover),
    })
    .onConflict((oc) => oc.constraint('claims_one_per_crash').doNothing())
    .returning(claimColumns)
    .executeTakeFirst();
  return row as ClaimRow | undefined;
}

export async function updateClaim(
  db: Executor,
  claim: { id: string; policyId: string },
  changes: Partial<Omit<ClaimTables['claims'], 'id' | 'policy_id'>>,
): Promise<ClaimRow> {
  const values = { ...changes } as Record<string, unknown>;
  if (changes.crash_file !== undefined && changes.crash_file !== null)
    values['crash_file'] = JSON.stringify(changes.crash_file);
  const row = await db
    .updateTable('claims')
    .set(values)
    .where('id', '=', claim.id)
    .where('policy_id', '=', claim.policyId)
    .returning(claimColumns)
    .executeTakeFirstOrThrow();
  return row as ClaimRow;
}

/** The claim of a crash (the one claim `claims_one_per_crash` allows). */
export async function findClaimOfCrash(
  db: Executor,
  crashId: string,
  policyId: string,
): Promise<ClaimRow | undefined> {
  return (await db
    .selectFrom('claims')
    .select(claimColumns)
    .where('crash_event_id', '=', crashId)
    .where('policy_id', '=', policyId)
    .executeTakeFirst()) as ClaimRow | undefined;
}

// ── first notices owed ──────────────────────────────────────────────────────────────────────────

/** Owed first notices due by `now`, leased to this pass for `leaseMs` (SKIP LOCKED: workers never share one). */
export async function leaseOwed(
  db: Executor,
  now: Date,
  leaseMs: number,
  limit: number,
): Promise<Array<{ crashId: string; policyId: string }>> {
  const result = await sql<{ crash_event_id: string; policy_id: string }>`
    update claim_crashes_owed o set leased_until = ${new Date(now.getTime() + leaseMs)}, attempts = o.attempts + 1
    where crash_event_id in (
      select crash_event_id from claim_crashes_owed
      where due_at <= ${now} and (leased_until is null or leased_until <= ${now})
      order by due_at limit ${limit} for update skip locked)
    returning crash_event_id, policy_id`.execute(db);
  return result.rows.map((r) => ({ crashId: r.crash_event_id, policyId: r.policy_id }));
}

export async function deleteOwed(db: Executor, crashId: string): Promise<void> {
  await db.deleteFrom('claim_crashes_owed').where('crash_event_id', '=', crashId).execute();
}

/** Puts an owed notice off until `dueAt` (the trace not final yet, or a failure to retry), releasing its lease. */
export async function postponeOwed(
  db: Executor,
  crashId: string,
  dueAt: Date,
  error: string | null,
): Promise<void> {
  await db
    .updateTable('claim_crashes_owed')
    .set({ due_at: dueAt, leased_until: null, last_error: error })
    .where('crash_event_id', '=', crashId)
    .execute();
}

// ── exposures, payments, notes, photos ──────────────────────────────────────────────────────────

export async function listExposures(db: Executor, claim: { id: string; policyId: string }) {
  return db
    .selectFrom('claim_exposures')
    .selectAll()
    .where('policy_id', '=', claim.policyId)
    .where('claim_id', '=', claim.id)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function listPayments(db: Executor, claim: { id: string; policyId: string }) {
  return db
    .selectFrom('claim_payments')
    .selectAll()
    .where('policy_id', '=', claim.policyId)
    .where('claim_id', '=', claim.id)
    .orderBy('paid_at')
    .orderBy('id')
    .execute();
}

export async function listNotes(db: Executor, claim: { id: string; policyId: string }) {
  return db
    .selectFrom('claim_notes')
    .selectAll()
    .where('policy_id', '=', claim.policyId)
    .where('claim_id', '=', claim.id)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function listPhotos(db: Executor, claim: { id: string; policyId: string }) {
  return db
    .selectFrom('claim_photos')
    .select(['id', 'content_type', 'size_bytes', 'sha256', 'uploaded_at'])
    .where('policy_id', '=', claim.policyId)
    .where('claim_id', '=', claim.id)
    .orderBy('uploaded_at')
    .orderBy('id')
    .execute();
}

export async function findPhoto(db: Executor, claim: { id: string; policyId: string }, photoId: string) {
  return db
    .selectFrom('claim_photos')
    .select(['id', 'content_type', 'size_bytes', 'sha256', 'content', 'uploaded_at'])
    .where('policy_id', '=', claim.policyId)
    .where('claim_id', '=', claim.id)
    .where('id', '=', photoId)
    .executeTakeFirst();
}

/** The company's claim settings in an environment; undefined when it kept the defaults. */
export async function findSettings(db: Executor, tenant: { companyId: string; environment: string }) {
  return db
    .selectFrom('claim_settings')
    .select(['response_hours', 'retention_years', 'updated_at'])
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
    .executeTakeFirst();
}

export async function saveSettings(
  db: Executor,
  tenant: Tenant,
  settings: { responseHours: number; retentionYears?: number | undefined },
  at: Date,
) {
  const retention = settings.retentionYears === undefined ? {} : { retention_years: settings.retentionYears };
  await db
    .insertInto('claim_settings')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      response_hours: settings.responseHours,
      retention_years: settings.retentionYears ?? null,
      updated_at: at,
    })
    .onConflict((oc) =>
      oc
        .columns(['company_id', 'environment'])
        .doUpdateSet({ response_hours: settings.responseHours, ...retention, updated_at: at }),
    )
    .execute();
}

/** Drafts whose answer is overdue and not yet sent to staff, locked for the referral (SKIP LOCKED). */
export async function lockOverdueDrafts(db: Executor, now: Date, limit: number) {
  return db
    .selectFrom('claims')
    .select(['id', 'policy_id', 'company_id', 'environment'])
    .where('state', '=', 'draft')
    .where('referred_at', 'is', null)
    .where('respond_by', '<=', now)
    .orderBy('respond_by')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}
