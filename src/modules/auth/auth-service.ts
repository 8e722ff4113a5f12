import { randomInt, randomUUID } from 'node:crypto';
import { openSuccessorPair, sealSuccessorPair } from './successor-seal.ts';
import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { hashToken, randomToken } from '../../platform/crypto.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import {
  hashPassword,
  normaliseLogin,
  verifyPassword,
  type Account,
  type AccountService,
} from '../accounts/index.ts';
import { asTenant, type CompanyService, type DataEnvironment, type Tenant } from '../companies/index.ts';
import { resetCodeEmail, temporaryPasswordEmail, type NotificationService } from '../notifications/index.ts';
import type { PolicyResponse, PolicyService } from '../policies/index.ts';
import { createAccessTokens } from './access-tokens.ts';
import { loadCommonPasswords } from './common-passwords.ts';
import {
  consumeLoginSession,
  consumeResetCode,
  findLiveLoginSession,
  findRefreshToken,
  insertLoginSession,
  insertRefreshToken,
  insertResetCode,
  invalidateResetCodes,
  markRefreshTokenRotated,
  purgeExpired,
  revokeEverySession,
  revokeRefreshFamily,
  isFamilyRevoked,
  sealSuccessor,
  takeResetCodeAttempt,
} from './auth-repository.ts';
import type { TokenResponse, Tokens, UserView } from './auth-schemas.ts';
import {
  afterCorrectPassword,
  idpStatus,
  mayResendTemporaryPassword,
  normaliseResetCode,
  RESET_CODE_DIGITS,
  RESET_CODE_MAX_ATTEMPTS,
  RESET_CODE_TTL_SECONDS,
} from './rules/login-rules.ts';
import { checkPassword, type PasswordContext } from './rules/password-policy.ts';
import { ACCOUNT_THROTTLE, ADDRESS_THROTTLE, EMAIL_THROTTLE } from './rules/throttle.ts';
import { createThrottles, throttleOf, type Throttle } from './throttles.ts';
import { createKeyRing } from './signing-keys.ts';

export interface AuthSettings {
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlDays: number;
  readonly loginSessionTtlSeconds: number;
  readonly signingKeyRotationDays: number;
  /** `iss` of access tokens: PUBLIC_BASE_URL, or `milepost`. */
  readonly issuer: string;
}

/** Who a bearer request acts for, once its access token checks out. */
export interface Policyholder {
  readonly tenant: Tenant;
  readonly userId: string;
  readonly userReference: string;
}

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

const INVALID_CREDENTIALS = 'Incorrect username or password';
const INVALID_SESSION =
  'The session is not valid: it has expired, has been used, or belongs to another user. Log in again with USER_PASSWORD_AUTH';
const INVALID_CODE = 'The code is not valid: it is wrong, has expired, has been used or has had 5 tries';

const weakPassword = (message: string): AppError =>
  new AppError('VALIDATION_FAILED', `The new password is not accepted: it ${message}`, {
    errors: [{ path: '/body/new_password', message }],
  });

/**
 * Policyholder login: the multi-stage token flow of the interface, refresh tokens, bearer
 * authentication and the User view. Secrets are compared in constant time or through argon2id, and
 * every answer about an unknown username is the one a known username would get, after the same work.
 */
export function createAuthService(deps: {
  db: Executor;
  clock: Clock;
  accounts: AccountService;
  companies: CompanyService;
  policies: PolicyService;
  notifications: NotificationService;
  settings: AuthSettings;
}) {
  const { db, clock, accounts, companies, policies, notifications, settings } = deps;
  const commonPasswords = loadCommonPasswords();
  const keys = createKeyRing({
    db,
    clock,
    settings: {
      rotationSeconds: settings.signingKeyRotationDays * 86_400,
      accessTokenTtlSeconds: settings.accessTokenTtlSeconds,
    },
  });
  const accessTokens = createAccessTokens({
    keys,
    clock,
    issuer: settings.issuer,
    ttlSeconds: settings.accessTokenTtlSeconds,
  });

  // A real argon2id hash of nothing anybody knows: unknown usernames are verified against it, so
  // that they take as long as known ones.
  let dummyHash: Promise<string> | undefined;
  const dummyVerify = async (password: string): Promise<false> => {
    dummyHash ??= hashPassword(randomToken());
    await verifyPassword(await dummyHash, password);
    return false;
  };

  const companyCache = new Map<string, { companyReference: string; clientId: string }>();
  const companyOf = async (tenant: Tenant) => {
    const hit = companyCache.get(tenant.companyId);
    if (hit !== undefined) return hit;
    const company = await companies.findById(tenant.companyId);
    if (company === undefined) throw new AppError('INTERNAL', 'tenant without a company');
    const entry = { companyReference: company.company_reference, clientId: company.client_id };
    companyCache.set(tenant.companyId, entry);
    return entry;
  };

  const revokedFamilies = new Map<string, { revoked: boolean; until: number }>();
  const subjects = new Map<
    string,
    { value: Awaited<ReturnType<AccountService['findTokenSubject']>>; until: number }
  >();

  // ── Throttling ──────────────────────────────────────────────────────────────────────────────

  const throttles = createThrottles(db, clock);
  const { ensureNotThrottled, countAgainst } = throttles;
  const accountThrottle = (tenant: Tenant, login: string): Throttle =>
    throttleOf(ACCOUNT_THROTTLE, 'account', tenant.companyId, tenant.environment, login);
  const addressThrottle = (address: string): Throttle => throttleOf(ADDRESS_THROTTLE, 'address', address);
  const emailThrottle = (tenant: Tenant, login: string): Throttle =>
    throttleOf(EMAIL_THROTTLE, 'email', tenant.companyId, tenant.environment, login);

  // ── Tokens ──────────────────────────────────────────────────────────────────────────────────

  /**
   * Tokens for a login, in two steps: the access token is signed before the caller's transaction
   * (signing may read or make a key, and on PGlite nothing may query outside an open transaction),
   * the refresh token is stored inside it.
   */
  async function signAccess(tenant: Tenant, account: Account, sessionGeneration: number, familyId: string) {
    const company = await companyOf(tenant);
    return accessTokens.issue({
      userReference: account.userReference,
      companyReference: company.companyReference,
      environment: tenant.environment,
      sessionGeneration,
      familyId,
    });
  }

  async function storeRefresh(
    trx: Executor,
    tenant: Tenant,
    account: Account,
    familyId: string,
    access: { token: string; expiry: number },
  ): Promise<Tokens> {
    const now = clock.now();
    const refreshToken = randomToken('mprt_');
    await insertRefreshToken(trx, tenant, {
      familyId,
      tokenHash: hashToken(refreshToken),
      userId: account.id,
      at: now,
      expiresAt: new Date(now.getTime() + settings.refreshTokenTtlDays * 86_400_000),
    });
    return {
      username: account.username,
      refresh_token: refreshToken,
      access_token: access.token,
      expiry: access.expiry,
      type: 'DONE',
    };
  }

  const forgetSubjects = (): void => {
    subjects.clear();
  };

  /** Sets a personal password and ends every session, in one transaction (the caller's). */
  async function setPersonalPassword(trx: Executor, tenant: Tenant, account: Account, hash: string) {
    const now = clock.now();
    await accounts.setPersonalPassword(trx, tenant, account.id, hash);
    await revokeEverySession(trx, tenant, account.id, 'password changed', now);
    await recordEvent(
      trx,
      tenant,
      'account.password_changed',
      { user_reference: account.userReference },
      now,
    );
  }

  /** Refuses a new password by the policy: with the context the caller can reveal (see FORGOT_PASSWORD_CODE). */
  function requireStrong(password: string, context: PasswordContext): void {
    const check = checkPassword(password, context, commonPasswords);
    if (!check.ok) throw weakPassword(check.message);
  }

  // ── The flow ────────────────────────────────────────────────────────────────────────────────

  /** USER_PASSWORD_AUTH: DONE with tokens, or NEW_PASSWORD_REQUIRED with a session for the temporary password. */
  async function userPasswordAuth(tenant: Tenant, rawLogin: string, password: string, address: string) {
    const login = normaliseLogin(rawLogin);
    const perAccount = accountThrottle(tenant, login);
    const perAddress = addressThrottle(address);
    // Both reads at once: on PostgreSQL they overlap (PGlite serialises them anyway).
    const [hasFailures, credentials] = await Promise.all([
      ensureNotThrottled(perAccount, perAddress),
      accounts.findCredentials(db, tenant, login),
    ]);
    const correct =
      credentials === undefined
        ? await dummyVerify(password)
        : (await verifyPassword(credentials.passwordHash, password)) && credentials.account.active;
    if (credentials === undefined || !correct) {
      await countAgainst(perAccount, perAddress);
      throw new AppError('INVALID_CREDENTIALS', INVALID_CREDENTIALS);
    }
    if (hasFailures) await throttles.clear(perAccount);
    const { account } = credentials;
    const now = clock.now();
    switch (afterCorrectPassword(account, now)) {
      case 'TEMPORARY_PASSWORD_EXPIRED':
        throw new AppError(
          'TEMPORARY_PASSWORD_EXPIRED',
          'The temporary password has expired (it was not changed within 30 days). Send FORGOT_PASSWORD for a code by email, or RESEND_PASSWORD for a new temporary password',
        );
      case 'NEW_PASSWORD_REQUIRED': {
        const session = randomToken('mps_');
        await insertLoginSession(db, tenant, {
          tokenHash: hashToken(session),
          userId: account.id,
          at: now,
          expiresAt: new Date(now.getTime() + settings.loginSessionTtlSeconds * 1000),
        });
        return { username: account.username, session, type: 'NEW_PASSWORD_REQUIRED' as const };
      }
      case 'DONE': {
        // Two independent writes, no transaction: the last-login time is informational.
        const familyId = randomUUID();
        const access = await signAccess(tenant, account, credentials.sessionGeneration, familyId);
        const [tokens] = await Promise.all([
          storeRefresh(db, tenant, account, familyId, access),
          accounts.recordLogin(db, tenant, account.id),
        ]);
        return tokens;
      }
    }
  }

  /** NEW_PASSWORD_REQUIRED: the session from USER_PASSWORD_AUTH sets the first personal password. */
  async function newPasswordRequired(
    tenant: Tenant,
    rawLogin: string,
    session: string,
    newPassword: string,
    address: string,
  ) {
    const perAddress = addressThrottle(address);
    await ensureNotThrottled(perAddress);
    const login = normaliseLogin(rawLogin);
    requireStrong(newPassword, { username: login });
    const now = clock.now();
    const live = await findLiveLoginSession(db, tenant, hashToken(session), now);
    const account = live === undefined ? undefined : await accounts.findById(db, tenant, live.userId);
    if (
      live === undefined ||
      account === undefined ||
      (account.username !== login && account.email !== login)
    ) {
      await countAgainst(perAddress);
      throw new AppError('INVALID_SESSION', INVALID_SESSION);
    }
    requireStrong(newPassword, { username: account.username, email: account.email });
    const hash = await hashPassword(newPassword);
    const used = await inTransaction(db, async (trx) => {
      if (!(await consumeLoginSession(trx, tenant, live.id, clock.now()))) return false;
      await setPersonalPassword(trx, tenant, account, hash);
      return true;
    });
    if (!used) throw new AppError('INVALID_SESSION', INVALID_SESSION);
    forgetSubjects();
    return { type: 'PASSWORD_RESET' as const };
  }

  /**
   * FORGOT_PASSWORD: a reset code by email, and the same answer (`FORGOT_PASSWORD_CODE`) whatever the
   * account: with a personal password, still on its temporary one (expired or not), or none at all.
   * NOTE: answering RESEND_PASSWORD for an account on its temporary password told anyone which accounts
   * were never used. The code lets such an account choose its password with FORGOT_PASSWORD_CODE: it
   * proves the same thing the emailed temporary password would, that the caller reads the mailbox.
   */
  async function forgotPassword(tenant: Tenant, rawLogin: string) {
    const login = normaliseLogin(rawLogin);
    const perEmail = emailThrottle(tenant, login);
    await ensureNotThrottled(perEmail);
    const credentials = await accounts.findCredentials(db, tenant, login);
    const account = credentials?.account.active === true ? credentials.account : undefined;
    const outcome = 'FORGOT_PASSWORD_CODE' as const;
    await countAgainst(perEmail);
    const code = String(randomInt(0, 10 ** RESET_CODE_DIGITS)).padStart(RESET_CODE_DIGITS, '0');
    // Hashed for unknown usernames too, so both answers take the same time.
    const codeHash = await hashPassword(code);
    if (account === undefined) return { type: outcome };
    const now = clock.now();
    await inTransaction(db, async (trx) => {
      await invalidateResetCodes(trx, tenant, account.id, now);
      await insertResetCode(trx, tenant, {
        userId: account.id,
        codeHash,
        at: now,
        expiresAt: new Date(now.getTime() + RESET_CODE_TTL_SECONDS * 1000),
      });
      await recordEvent(
        trx,
        tenant,
        'account.password_reset_requested',
        { user_reference: account.userReference },
        now,
      );
      await notifications.queueEmail(
        trx,
        tenant,
        'reset-code',
        account.email,
        resetCodeEmail({
          firstNames: account.firstNames,
          username: account.username,
          code,
          validMinutes: RESET_CODE_TTL_SECONDS / 60,
        }),
      );
    });
    return { type: outcome };
  }

  /** FORGOT_PASSWORD_CODE: the emailed code sets a new personal password. */
  async function forgotPasswordCode(
    tenant: Tenant,
    rawLogin: string,
    rawCode: string | number,
    newPassword: string,
    address: string,
  ) {
    const login = normaliseLogin(rawLogin);
    const perAccount = accountThrottle(tenant, login);
    const perAddress = addressThrottle(address);
    await ensureNotThrottled(perAccount, perAddress);
    const code = normaliseResetCode(rawCode);
    if (code === undefined)
      throw new AppError('VALIDATION_FAILED', 'The code must be the 6 digits from the email', {
        errors: [{ path: '/body/code', message: 'must be 6 digits' }],
      });
    // Only what the caller typed may shape this answer: the account's own details wait for the code.
    requireStrong(newPassword, { username: login, email: login.includes('@') ? login : undefined });
    const credentials = await accounts.findCredentials(db, tenant, login);
    const account = credentials?.account.active === true ? credentials.account : undefined;
    const attempt =
      account === undefined
        ? undefined
        : await takeResetCodeAttempt(db, tenant, account.id, RESET_CODE_MAX_ATTEMPTS, clock.now());
    const correct =
      attempt === undefined ? await dummyVerify(code) : await verifyPassword(attempt.codeHash, code);
    if (account === undefined || attempt === undefined || !correct) {
      await countAgainst(perAccount, perAddress);
      throw new AppError('INVALID_CODE', INVALID_CODE);
    }
    requireStrong(newPassword, { username: account.username, email: account.email });
    const hash = await hashPassword(newPassword);
    const used = await inTransaction(db, async (trx) => {
      if (!(await consumeResetCode(trx, attempt.id, clock.now()))) return false;
      await setPersonalPassword(trx, tenant, account, hash);
      return true;
    });
    if (!used) throw new AppError('INVALID_CODE', INVALID_CODE);
    await throttles.clear(perAccount);
    forgetSubjects();
    return { type: 'PASSWORD_RESET' as const };
  }

  /** RESEND_PASSWORD: a new temporary password by email, for an account that has not chosen its own. */
  async function resendPassword(tenant: Tenant, rawLogin: string) {
    const login = normaliseLogin(rawLogin);
    const perEmail = emailThrottle(tenant, login);
    await ensureNotThrottled(perEmail);
    await countAgainst(perEmail);
    const credentials = await accounts.findCredentials(db, tenant, login);
    const account = credentials?.account.active === true ? credentials.account : undefined;
    // Prepared (hashed) for every username, so that the answer takes the same time either way.
    const password = await accounts.preparePassword();
    if (account !== undefined && mayResendTemporaryPassword(account)) {
      const now = clock.now();
      await inTransaction(db, async (trx) => {
        const updated = await accounts.resetTemporaryPassword(trx, tenant, account.id, password);
        await revokeEverySession(trx, tenant, account.id, 'temporary password reissued', now);
        await recordEvent(
          trx,
          tenant,
          'account.temporary_password_reissued',
          { user_reference: account.userReference },
          now,
        );
        await notifications.queueEmail(
          trx,
          tenant,
          'temporary-password',
          account.email,
          temporaryPasswordEmail({
            firstNames: account.firstNames,
            username: account.username,
            temporaryPassword: password.plain,
            expiresOn: updated?.temporaryPasswordExpiresAt?.toISOString().slice(0, 10) ?? '',
          }),
        );
      });
      forgetSubjects();
    }
    return { type: 'TEMPORARY_PASSWORD_SENT' as const };
  }

  /**
   * REFRESH_TOKEN: a new pair; the presented token is spent. Presented again within
   * REFRESH_GRACE_MS of its rotation on the database's clock (a client's parallel requests), it answers
   * the same pair; later, presenting a spent token ends its family (a stolen token is being replayed).
   */
  async function refresh(tenant: Tenant, refreshToken: string): Promise<Tokens> {
    const invalid = () => new AppError('INVALID_TOKEN', 'The refresh token is not valid: log in again');
    const tokenHash = hashToken(refreshToken);
    let row = await findRefreshToken(db, tenant, tokenHash);
    const now = clock.now();
    if (row === undefined || row.revokedAt !== null || row.expiresAt <= now) throw invalid();
    if (row.rotatedAt === null) {
      const account = await accounts.findById(db, tenant, row.userId);
      if (account?.active !== true) throw invalid();
      const company = await companyOf(tenant);
      const subject = await accounts.findTokenSubject(
        account.userReference,
        company.companyReference,
        tenant.environment,
      );
      if (subject === undefined) throw invalid();
      const access = await signAccess(tenant, account, subject.sessionGeneration, row.familyId);
      const spent = row;
      const result = await inTransaction(db, async (trx) => {
        if (!(await markRefreshTokenRotated(trx, spent.id))) return undefined;
        const tokens = await storeRefresh(trx, tenant, account, spent.familyId, access);
        await sealSuccessor(trx, spent.id, sealSuccessorPair(refreshToken, tokens));
        return tokens;
      });
      if (result !== undefined) return result;
      // Another request spent it at this moment: answer as it was answered.
      row = await findRefreshToken(db, tenant, tokenHash);
      if (row === undefined || row.revokedAt !== null) throw invalid();
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

  return {
    keys,
    accessTokens,

    /** POST /auth/token for a real tenant: one step of the flow. Fields are checked by the route. */
    async token(
      tenant: Tenant,
      body: {
        type: string;
        username?: string | undefined;
        password?: string | undefined;
        session?: string | undefined;
        new_password?: string | undefined;
        code?: string | number | undefined;
        refresh_token?: string | undefined;
      },
      address: string,
    ): Promise<TokenResponse> {
      const { username = '', password = '', session = '', new_password: newPassword = '' } = body;
      switch (body.type) {
        case 'USER_PASSWORD_AUTH':
          return userPasswordAuth(tenant, username, password, address);
        case 'NEW_PASSWORD_REQUIRED':
          return newPasswordRequired(tenant, username, session, newPassword, address);
        case 'FORGOT_PASSWORD':
          return forgotPassword(tenant, username);
        case 'FORGOT_PASSWORD_CODE':
          return forgotPasswordCode(tenant, username, body.code ?? '', newPassword, address);
        case 'RESEND_PASSWORD':
          return resendPassword(tenant, username);
        case 'REFRESH_TOKEN':
          return refresh(tenant, body.refresh_token ?? '');
        default:
          throw new AppError('VALIDATION_FAILED', `Unknown type ${body.type}`, {
            errors: [{ path: '/body/type', message: 'is not a known type' }],
          });
      }
    },

    /**
     * Sign-out: ends the login a refresh token belongs to (its whole family, and at once the access
     * tokens of that login). An unknown, expired or already revoked token is no error (RFC 7009): the
     * answer tells nothing about which tokens exist.
     */
    async revoke(tenant: Tenant, refreshToken: string): Promise<void> {
      const row = await findRefreshToken(db, tenant, hashToken(refreshToken));
      if (row === undefined || row.revokedAt !== null) return;
      await revokeRefreshFamily(db, row.familyId, 'signed out', clock.now());
      revokedFamilies.set(row.familyId, { revoked: true, until: Number.POSITIVE_INFINITY });
    },

    /**
     * Checks an access token for a bearer request. `environment` is the request's environment header
     * when sent: it must then match the token's. The subject is re-read at most every 5 s, so a
     * password change ends older tokens within that time on other instances (at once on this one).
     */
    async authenticate(
      token: string,
      environment: DataEnvironment | undefined,
    ): Promise<Policyholder | undefined> {
      const claims = await accessTokens.verify(token);
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
    },

    /** The User of the interface; another tenant's user is not found. */
    async user(tenant: Tenant, userReference: string): Promise<UserView> {
      const account = await accounts.findByReference(db, tenant, userReference);
      if (account === undefined) throw notFound('user');
      const [company, references] = await Promise.all([
        companyOf(tenant),
        policies.referencesOf(tenant, account.id),
      ]);
      return {
        f_names: account.firstNames,
        l_names: account.lastNames,
        email: account.email,
        username: account.username,
        client_id: company.clientId,
        client_secret: null,
        client_secret_sandbox: null,
        role: 'policyholder',
        active: account.active,
        created_at: account.createdAt.toISOString(),
        updated_at: account.updatedAt.toISOString(),
        idp_status: idpStatus(account),
        company_reference: company.companyReference,
        user_reference: account.userReference,
        policies: references,
      };
    },

    /** GET /policys/details: the policyholder's policy (current, or the one named); never another's. */
    details: (holder: Policyholder, policyReference?: string): Promise<PolicyResponse> =>
      policies.getForPolicyholder(holder.tenant, holder.userId, policyReference),

    jwks: () => keys.jwks(),

    async rotateSigningKeys(withdrawPrevious: boolean) {
      const result = await keys.rotate(withdrawPrevious);
      if (withdrawPrevious) accessTokens.forget();
      return result;
    },

    /** Housekeeping: expired sessions, codes, refresh tokens, quiet throttles and unpublished keys. */
    purgeExpired: (now: Date) => purgeExpired(db, now),
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
