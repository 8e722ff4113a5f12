import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { hashToken, randomToken } from '../../platform/crypto.ts';
import { AppError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { hashPassword, verifyPassword, type Account, type AccountService } from '../accounts/index.ts';
import type { CompanyService, Tenant } from '../companies/index.ts';
import type { NotificationService } from '../notifications/index.ts';
import type { PolicyService } from '../policies/index.ts';
import { createAccessTokens } from './access-tokens.ts';
import { insertRefreshToken, revokeEverySession } from './auth-repository.ts';
import type { Tokens } from './auth-schemas.ts';
import { loadCommonPasswords } from './common-passwords.ts';
import { checkPassword, type PasswordContext } from './rules/password-policy.ts';
import { ACCOUNT_THROTTLE, EMAIL_THROTTLE } from './rules/throttle.ts';
import { createKeyRing } from './signing-keys.ts';
import { addressThrottleOf, createThrottles, throttleOf, type Throttle } from './throttles.ts';

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

/** What the auth service is built from (see `createAuthService`). */
export interface AuthDeps {
  readonly db: Executor;
  readonly clock: Clock;
  readonly accounts: AccountService;
  readonly companies: CompanyService;
  readonly policies: PolicyService;
  readonly notifications: NotificationService;
  readonly settings: AuthSettings;
}

const weakPassword = (message: string): AppError =>
  new AppError('VALIDATION_FAILED', `The new password is not accepted: it ${message}`, {
    errors: [{ path: '/body/new_password', message }],
  });

/**
 * What every use case of the auth service shares: the signing keys and access tokens, the company of a
 * tenant (read once per process), the failure throttles, the subjects of access tokens recently
 * checked (forgotten when a password changes), and the steps that issue tokens and set a password.
 */
export function createAuthContext(deps: AuthDeps) {
  const { db, clock, accounts, companies, settings } = deps;
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

  const subjects = new Map<
    string,
    { value: Awaited<ReturnType<AccountService['findTokenSubject']>>; until: number }
  >();

  const throttles = createThrottles(db, clock);

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

  return {
    ...deps,
    keys,
    accessTokens,
    dummyVerify,
    companyOf,
    subjects,
    throttles,
    signAccess,
    storeRefresh,
    setPersonalPassword,

    /** A password changed somewhere: access tokens of an older session generation fail at once here. */
    forgetSubjects: (): void => {
      subjects.clear();
    },

    /** Failed logins of an account, whichever of its username and email was typed (see `loginKey`). */
    accountThrottle: (tenant: Tenant, login: string, account: Account | undefined): Throttle =>
      throttleOf(
        ACCOUNT_THROTTLE,
        'account',
        tenant.companyId,
        tenant.environment,
        ...loginKey(login, account),
      ),
    addressThrottle: (address: string): Throttle => addressThrottleOf(['address'], address),
    /** Emails sent to an account, whichever of its username and email was typed (see `loginKey`). */
    emailThrottle: (tenant: Tenant, login: string, account: Account | undefined): Throttle =>
      throttleOf(EMAIL_THROTTLE, 'email', tenant.companyId, tenant.environment, ...loginKey(login, account)),

    /** Refuses a new password by the policy: with the context the caller can reveal (see FORGOT_PASSWORD_CODE). */
    requireStrong(password: string, context: PasswordContext): void {
      const check = checkPassword(password, context, commonPasswords);
      if (!check.ok) throw weakPassword(check.message);
    },
  };
}

export type AuthContext = ReturnType<typeof createAuthContext>;

/**
 * What a login's throttles count against: the account it names, else the login as typed.
 * NOTE: a username and an email are two logins of one account; counted as typed, each had its own
 * allowance of failures (and of reset emails), so alternating them doubled an attacker's tries. A
 * login that names no account still has a count of its own, so an unknown one behaves as a known one.
 */
const loginKey = (login: string, account: Account | undefined): string[] =>
  account === undefined ? ['login', login] : ['user', account.userReference];
