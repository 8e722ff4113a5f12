import { sql, type Generated } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { ThrottleState } from './rules/throttle.ts';

export interface AuthTables {
  auth_signing_keys: {
    kid: string;
    algorithm: 'Ed25519';
    public_jwk: Record<string, unknown>;
    private_key_pkcs8: string;
    created_at: Date;
    signs_until: Date;
    published_until: Date;
  };
  auth_login_sessions: {
    id: Generated<string>;
    token_hash: Buffer;
    user_id: string;
    company_id: string;
    environment: string;
    created_at: Date;
    expires_at: Date;
    used_at: Date | null;
  };
  auth_refresh_tokens: {
    id: Generated<string>;
    family_id: string;
    token_hash: Buffer;
    user_id: string;
    company_id: string;
    environment: string;
    created_at: Date;
    expires_at: Date;
    /**
     * The database's clock at the rotation (not the service's, which may be stepped): the reuse grace
     * is measured on it, in the statement that reads the token.
     */
    rotated_at: Date | null;
    revoked_at: Date | null;
    revoked_reason: string | null;
    /** The pair this token was rotated into, sealed (see migration 0018); kept for the grace window. */
    successor_sealed: string | null;
  };
  auth_reset_codes: {
    id: Generated<string>;
    user_id: string;
    company_id: string;
    environment: string;
    code_hash: string;
    attempts: Generated<number>;
    created_at: Date;
    expires_at: Date;
    used_at: Date | null;
  };
  auth_throttles: {
    key_hash: Buffer;
    failures: number;
    last_failure_at: Date;
    blocked_until: Date | null;
  };
}

// ── Signing keys ────────────────────────────────────────────────────────────────────────────────

export interface SigningKeyRow {
  readonly kid: string;
  readonly publicJwk: Record<string, unknown>;
  readonly privateKeyPkcs8: string;
  readonly createdAt: Date;
  readonly signsUntil: Date;
  readonly publishedUntil: Date;
}

/** Keys still published at `now`, newest first. */
export async function listPublishedKeys(db: Executor, now: Date): Promise<SigningKeyRow[]> {
  const rows = await db
    .selectFrom('auth_signing_keys')
    .selectAll()
    .where('published_until', '>', now)
    .orderBy('created_at', 'desc')
    .orderBy('signs_until', 'desc')
    .orderBy('kid')
    .execute();
  return rows.map((r) => ({
    kid: r.kid,
    publicJwk: r.public_jwk,
    privateKeyPkcs8: r.private_key_pkcs8,
    createdAt: r.created_at,
    signsUntil: r.signs_until,
    publishedUntil: r.published_until,
  }));
}

export async function insertSigningKey(db: Executor, key: SigningKeyRow): Promise<void> {
  await db
    .insertInto('auth_signing_keys')
    .values({
      kid: key.kid,
      algorithm: 'Ed25519',
      public_jwk: JSON.stringify(key.publicJwk) as never,
      private_key_pkcs8: key.privateKeyPkcs8,
      created_at: key.createdAt,
      signs_until: key.signsUntil,
      published_until: key.publishedUntil,
    })
    .execute();
}

/** Stops every key but `keepKid` from signing at `now` (a forced rotation); they stay published. */
export async function retireSigningKeys(db: Executor, keepKid: string, now: Date): Promise<void> {
  await db
    .updateTable('auth_signing_keys')
    .set({ signs_until: now })
    .where('kid', '!=', keepKid)
    .where('signs_until', '>', now)
    .execute();
}

/** Withdraws every key but `keepKid` at once: tokens they signed stop verifying (a compromised key). */
export async function withdrawSigningKeys(db: Executor, keepKid: string, now: Date): Promise<void> {
  await db
    .updateTable('auth_signing_keys')
    .set({ signs_until: now, published_until: now })
    .where('kid', '!=', keepKid)
    .where('published_until', '>', now)
    .execute();
}

/** Serialises key creation across instances, for the rest of the transaction (PostgreSQL and PGlite). */
export async function lockSigningKeys(trx: Executor): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('milepost.auth_signing_keys'))`.execute(trx);
}

// ── NEW_PASSWORD_REQUIRED sessions ──────────────────────────────────────────────────────────────

export async function insertLoginSession(
  db: Executor,
  tenant: Tenant,
  values: { tokenHash: Buffer; userId: string; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('auth_login_sessions')
    .values({
      token_hash: values.tokenHash,
      user_id: values.userId,
      company_id: tenant.companyId,
      environment: tenant.environment,
      created_at: values.at,
      expires_at: values.expiresAt,
      used_at: null,
    })
    .execute();
}

/** The user a live (unused, unexpired) session belongs to, without using it up. */
export async function findLiveLoginSession(
  db: Executor,
  tenant: Tenant,
  tokenHash: Buffer,
  now: Date,
): Promise<{ id: string; userId: string } | undefined> {
  const row = await db
    .selectFrom('auth_login_sessions')
    .select(['id', 'user_id'])
    .where(forTenant(tenant))
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row === undefined ? undefined : { id: row.id, userId: row.user_id };
}

/** Uses a session up; false when it was already used (single use, even under a race) or has expired. */
export async function consumeLoginSession(
  db: Executor,
  tenant: Tenant,
  id: string,
  now: Date,
): Promise<boolean> {
  const row = await db
    .updateTable('auth_login_sessions')
    .set({ used_at: now })
    .where(forTenant(tenant))
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

// ── Refresh tokens ──────────────────────────────────────────────────────────────────────────────

export interface RefreshTokenRow {
  readonly id: string;
  readonly familyId: string;
  readonly userId: string;
  readonly expiresAt: Date;
  readonly rotatedAt: Date | null;
  /** Milliseconds since the rotation on the database's clock, read with the row; null if not rotated. */
  readonly msSinceRotation: number | null;
  readonly revokedAt: Date | null;
  readonly successorSealed: string | null;
}

export async function insertRefreshToken(
  db: Executor,
  tenant: Tenant,
  values: { familyId: string; tokenHash: Buffer; userId: string; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('auth_refresh_tokens')
    .values({
      family_id: values.familyId,
      token_hash: values.tokenHash,
      user_id: values.userId,
      company_id: tenant.companyId,
      environment: tenant.environment,
      created_at: values.at,
      expires_at: values.expiresAt,
      rotated_at: null,
      revoked_at: null,
      revoked_reason: null,
      successor_sealed: null,
    })
    .execute();
}

export async function findRefreshToken(
  db: Executor,
  tenant: Tenant,
  tokenHash: Buffer,
): Promise<RefreshTokenRow | undefined> {
  const row = await db
    .selectFrom('auth_refresh_tokens')
    .select(['id', 'family_id', 'user_id', 'expires_at', 'rotated_at', 'revoked_at', 'successor_sealed'])
    .select(
      sql<number | null>`(extract(epoch from clock_timestamp() - rotated_at) * 1000)::float8`.as(
        'ms_since_rotation',
      ),
    )
    .where(forTenant(tenant))
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : {
        id: row.id,
        familyId: row.family_id,
        userId: row.user_id,
        expiresAt: row.expires_at,
        rotatedAt: row.rotated_at,
        msSinceRotation: row.ms_since_rotation,
        revokedAt: row.revoked_at,
        successorSealed: row.successor_sealed,
      };
}

/** Keeps the sealed pair a token was rotated into (same transaction as the rotation). */
export async function sealSuccessor(db: Executor, id: string, sealed: string): Promise<void> {
  await db
    .updateTable('auth_refresh_tokens')
    .set({ successor_sealed: sealed })
    .where('id', '=', id)
    .execute();
}

/** Whether any token of the family was revoked (a revocation revokes the whole family). */
export async function isFamilyRevoked(db: Executor, familyId: string): Promise<boolean> {
  const row = await db
    .selectFrom('auth_refresh_tokens')
    .select('id')
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is not', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Marks a token rotated, at the database's clock; false when another request rotated (or something
 * revoked) it first.
 */
export async function markRefreshTokenRotated(db: Executor, id: string): Promise<boolean> {
  const row = await db
    .updateTable('auth_refresh_tokens')
    .set({ rotated_at: sql<Date>`clock_timestamp()` })
    .where('id', '=', id)
    .where('rotated_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function revokeRefreshFamily(
  db: Executor,
  familyId: string,
  reason: string,
  now: Date,
): Promise<number> {
  const result = await db
    .updateTable('auth_refresh_tokens')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Ends every session of a user: refresh tokens, pending new-password sessions and reset codes. */
export async function revokeEverySession(
  db: Executor,
  tenant: Tenant,
  userId: string,
  reason: string,
  now: Date,
): Promise<void> {
  await db
    .updateTable('auth_refresh_tokens')
    .set({ revoked_at: now, revoked_reason: reason })
    .where(forTenant(tenant))
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
  await db
    .updateTable('auth_login_sessions')
    .set({ used_at: now })
    .where(forTenant(tenant))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
  await invalidateResetCodes(db, tenant, userId, now);
}

// ── Reset codes ─────────────────────────────────────────────────────────────────────────────────

export async function invalidateResetCodes(
  db: Executor,
  tenant: Tenant,
  userId: string,
  now: Date,
): Promise<void> {
  await db
    .updateTable('auth_reset_codes')
    .set({ used_at: now })
    .where(forTenant(tenant))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}

export async function insertResetCode(
  db: Executor,
  tenant: Tenant,
  values: { userId: string; codeHash: string; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('auth_reset_codes')
    .values({
      user_id: values.userId,
      company_id: tenant.companyId,
      environment: tenant.environment,
      code_hash: values.codeHash,
      created_at: values.at,
      expires_at: values.expiresAt,
      used_at: null,
    })
    .execute();
}

/**
 * Takes one try at the user's live code: counts it before the caller compares, so that parallel
 * guesses cannot exceed the limit. Undefined when there is no live code or its tries are spent.
 */
export async function takeResetCodeAttempt(
  db: Executor,
  tenant: Tenant,
  userId: string,
  maxAttempts: number,
  now: Date,
): Promise<{ id: string; codeHash: string } | undefined> {
  const live = db
    .selectFrom('auth_reset_codes')
    .select('id')
    .where(forTenant(tenant))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .limit(1);
  const row = await db
    .updateTable('auth_reset_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', (eb) => eb.selectFrom(live.as('live')).select('live.id'))
    .where('attempts', '<', maxAttempts)
    .where('used_at', 'is', null)
    .returning(['id', 'code_hash'])
    .executeTakeFirst();
  return row === undefined ? undefined : { id: row.id, codeHash: row.code_hash };
}

/** Uses a code up; false when a parallel request used it first. */
export async function consumeResetCode(db: Executor, id: string, now: Date): Promise<boolean> {
  const row = await db
    .updateTable('auth_reset_codes')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

// ── Throttles ───────────────────────────────────────────────────────────────────────────────────

/** The states of several throttles in one query, in the order of `keyHashes` (undefined: no failures). */
export async function findThrottles(
  db: Executor,
  keyHashes: readonly Buffer[],
): Promise<Array<ThrottleState | undefined>> {
  const rows = await db
    .selectFrom('auth_throttles')
    .select(['key_hash', 'failures', 'last_failure_at', 'blocked_until'])
    .where('key_hash', 'in', keyHashes)
    .execute();
  return keyHashes.map((key) => {
    const row = rows.find((r) => Buffer.from(r.key_hash).equals(key));
    return row === undefined
      ? undefined
      : { failures: row.failures, lastFailureAt: row.last_failure_at, blockedUntil: row.blocked_until };
  });
}

/**
 * Counts one failure atomically (parallel failures all count) and returns the new count; failures
 * older than `forgetAfterSeconds` start the count again.
 */
export async function countFailure(
  db: Executor,
  keyHash: Buffer,
  now: Date,
  forgetAfterSeconds: number,
): Promise<number> {
  const forgetBefore = new Date(now.getTime() - forgetAfterSeconds * 1000);
  const row = await db
    .insertInto('auth_throttles')
    .values({ key_hash: keyHash, failures: 1, last_failure_at: now, blocked_until: null })
    .onConflict((oc) =>
      oc.column('key_hash').doUpdateSet({
        failures: sql<number>`case when auth_throttles.last_failure_at < ${forgetBefore} then 1 else auth_throttles.failures + 1 end`,
        last_failure_at: now,
      }),
    )
    .returning('failures')
    .executeTakeFirstOrThrow();
  return row.failures;
}

export async function setBlockedUntil(db: Executor, keyHash: Buffer, until: Date | null): Promise<void> {
  await db
    .updateTable('auth_throttles')
    .set({ blocked_until: until })
    .where('key_hash', '=', keyHash)
    .execute();
}

export async function clearThrottle(db: Executor, keyHash: Buffer): Promise<void> {
  await db.deleteFrom('auth_throttles').where('key_hash', '=', keyHash).execute();
}

// ── Housekeeping ────────────────────────────────────────────────────────────────────────────────

/** Deletes what can no longer be used; refresh tokens are kept a day past expiry for reuse detection. */
export async function purgeExpired(db: Executor, now: Date): Promise<number> {
  const dayAgo = new Date(now.getTime() - 86_400_000);
  // Sealed successor pairs are of use for seconds after a rotation (on the database's clock, as the
  // rotation is stamped).
  await db
    .updateTable('auth_refresh_tokens')
    .set({ successor_sealed: null })
    .where('successor_sealed', 'is not', null)
    .where('rotated_at', '<', sql<Date>`clock_timestamp() - interval '60 seconds'`)
    .execute();
  const counts = await Promise.all([
    db.deleteFrom('auth_login_sessions').where('expires_at', '<', dayAgo).executeTakeFirst(),
    db.deleteFrom('auth_reset_codes').where('expires_at', '<', dayAgo).executeTakeFirst(),
    db.deleteFrom('auth_refresh_tokens').where('expires_at', '<', dayAgo).executeTakeFirst(),
    db.deleteFrom('auth_throttles').where('last_failure_at', '<', dayAgo).executeTakeFirst(),
    db.deleteFrom('auth_signing_keys').where('published_until', '<', now).executeTakeFirst(),
  ]);
  return counts.reduce((sum, r) => sum + Number(r.numDeletedRows), 0);
}
