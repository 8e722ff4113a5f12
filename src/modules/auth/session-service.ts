import { hashToken } from '../../platform/crypto.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import type { AuthContext, Policyholder } from './auth-context.ts';
import {
  findRefreshToken,
  isFamilyRevoked,
  markRefreshTokenRotated,
  revokeRefreshFamily,
  sealSuccessor,
} from './auth-repository.ts';
import type { Tokens } from './auth-schemas.ts';
import { openSuccessorPair, sealSuccessorPair } from './rules/successor-seal.ts';

/** How long a token's subject (active, session generation) is reused before the database is asked again. */
const SUBJECT_CACHE_MS = 5_000;
/** How long a family's standing (revoked or not) is trusted before the database is asked again. */
const FAMILY_CACHE_MS = 5_000;
/** How soon after its rotation (on the database’s clock) a spent refresh token answers the same pair. */
const REFRESH_GRACE_MS = 10_000;

const isTokens = (value: unknown): value is Tokens =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Record<string, unknown>)['access_token'] === 'string' &&
  typeof (value as Record<string, unknown>)['refresh_token'] === 'string';

const invalidToken = () => new AppError('INVALID_TOKEN', 'The refresh token is not valid: log in again');

/**
 * A login's life after sign-in: refresh tokens rotated in families (a replayed spent token ends its
 * family), sign-out, and the check of an access token on every bearer request.
 */
export function createSessionService(ctx: AuthContext) {
  const { db, clock, accounts, subjects } = ctx;
  const revokedFamilies = new Map<string, { revoked: boolean; until: number }>();

  /** Spends an unspent token: the new pair, or undefined when another request spent it at this moment. */
  async function rotate(
    tenant: Tenant,
    refreshToken: string,
    spent: { id: string; userId: string; familyId: string },
  ): Promise<Tokens | undefined> {
    const account = await accounts.findById(db, tenant, spent.userId);
    if (account?.active !== true) throw invalidToken();
    const company = await ctx.companyOf(tenant);
    const subject = await accounts.findTokenSubject(
      account.userReference,
      company.companyReference,
      tenant.environment,
    );
    if (subject === undefined) throw invalidToken();
    const access = await ctx.signAccess(tenant, account, subject.sessionGeneration, spent.familyId);
    return inTransaction(db, async (trx) => {
      if (!(await markRefreshTokenRotated(trx, spent.id))) return undefined;
      const tokens = await ctx.storeRefresh(trx, tenant, account, spent.familyId, access);
      await sealSuccessor(trx, spent.id, sealSuccessorPair(refreshToken, tokens));
      return tokens;
    });
  }

  /** Whether a token family was revoked (reuse, sign-out): read at most every FAMILY_CACHE_MS. */
  async function familyRevoked(familyId: string): Promise<boolean> {
    const nowMs = Date.now();
    const hit = revokedFamilies.get(familyId);
    if (hit !== undefined && hit.until > nowMs) return hit.revoked;
    const revoked = await isFamilyRevoked(db, familyId);
    if (revokedFamilies.size >= 50_000) revokedFamilies.clear();
    revokedFamilies.set(familyId, {
      revoked,
      until: revoked ? Number.POSITIVE_INFINITY : nowMs + FAMILY_CACHE_MS,
    });
    return revoked;
  }

  /**
   * REFRESH_TOKEN: a new pair; the presented token is spent. Presented again within
   * REFRESH_GRACE_MS of its rotation on the database's clock (a client's parallel requests), it answers
   * the same pair; later, presenting a spent token ends its family (a stolen token is being replayed).
   */
  async function refresh(tenant: Tenant, refreshToken: string): Promise<Tokens> {
    const tokenHash = hashToken(refreshToken);
    let row = await findRefreshToken(db, tenant, tokenHash);
    const now = clock.now();
    if (row === undefined || row.revokedAt !== null || row.expiresAt <= now) throw invalidToken();
    if (row.rotatedAt === null) {
      const result = await rotate(tenant, refreshToken, row);
      if (result !== undefined) return result;
      // Another request spent it at this moment: answer as it was answered.
      row = await findRefreshToken(db, tenant, tokenHash);
      if (row === undefined || row.revokedAt !== null) throw invalidToken();
    }
    const successor =
      row.successorSealed === null ? undefined : openSuccessorPair(refreshToken, row.successorSealed);
    // NOTE: the grace is measured on the database's clock, read with the row: the service's wall clock
    // may be stepped, and a token rotated while it ran ahead would come back, once it was stepped back,
    // as still within the grace. Time running backwards on the database too counts as past the grace.
    const sinceMs = row.msSinceRotation;
    if (sinceMs !== null && sinceMs >= 0 && sinceMs <= REFRESH_GRACE_MS && isTokens(successor))
      return successor;
    // The reuse is recorded on the family's rows (revoked_reason), not as an event: the event
    // catalogue is for integrators, and a reuse says nothing about their policies.
    await revokeRefreshFamily(db, row.familyId, 'reuse detected', now);
    revokedFamilies.set(row.familyId, { revoked: true, until: Number.POSITIVE_INFINITY });
    throw new AppError(
      'INVALID_TOKEN',
      'The refresh token has already been used: every session of its login has ended; log in again',
    );
  }

  /**
   * Sign-out: ends the login a refresh token belongs to (its whole family, and at once the access
   * tokens of that login). An unknown, expired or already revoked token is no error (RFC 7009): the
   * answer tells nothing about which tokens exist.
   */
  async function revoke(tenant: Tenant, refreshToken: string): Promise<void> {
    const row = await findRefreshToken(db, tenant, hashToken(refreshToken));
    if (row === undefined || row.revokedAt !== null) return;
    await revokeRefreshFamily(db, row.familyId, 'signed out', clock.now());
    revokedFamilies.set(row.familyId, { revoked: true, until: Number.POSITIVE_INFINITY });
  }

  /**
   * Checks an access token for a bearer request. `environment` is the request's environment header
   * when sent: it must then match the token's. The subject is re-read at most every 5 s, so a
   * password change ends older tokens within that time on other instances (at once on this one).
   */
  async function authenticate(
    token: string,
    environment: DataEnvironment | undefined,
  ): Promise<Policyholder | undefined> {
    const claims = await ctx.accessTokens.verify(token);
    if (claims === undefined || (environment !== undefined && environment !== claims.environment))
      return undefined;
    const key = `${claims.company}\u0000${claims.environment}\u0000${claims.sub}`;
    const nowMs = Date.now();
    let hit = subjects.get(key);
    if (hit === undefined || hit.until <= nowMs) {
      hit = {
        value: await accounts.findTokenSubject(claims.sub, claims.company, claims.environment),
        until: nowMs + SUBJECT_CACHE_MS,
      };
      if (subjects.size >= 50_000) subjects.clear();
      subjects.set(key, hit);
    }
    const subject = hit.value;
    if (subject?.active !== true || subject.sessionGeneration !== claims.gen) return undefined;
    // A token of a login whose refresh tokens were revoked (a replayed refresh token) is refused at
    // once, not when it expires. Tokens issued before families were named carry no `sid`.
    if (claims.sid !== undefined && (await familyRevoked(claims.sid))) return undefined;
    return {
      tenant: asTenant(subject.companyId, claims.environment),
      userId: subject.userId,
      userReference: claims.sub,
    };
  }

  return { refresh, revoke, authenticate };
}
