import { randomUUID } from 'node:crypto';
import { hashToken, randomToken } from '../../platform/crypto.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import { hashPassword, normaliseLogin, verifyPassword } from '../accounts/index.ts';
import type { Tenant } from '../companies/index.ts';
import type { AuthContext } from './auth-context.ts';
import { consumeLoginSession, findLiveLoginSession, insertLoginSession } from './auth-repository.ts';
import { afterCorrectPassword } from './rules/login-rules.ts';

const INVALID_CREDENTIALS = 'Incorrect username or password';
const INVALID_SESSION =
  'The session is not valid: it has expired, has been used, or belongs to another user. Log in again with USER_PASSWORD_AUTH';

/**
 * Signing in with a password: USER_PASSWORD_AUTH, and NEW_PASSWORD_REQUIRED for an account still on its
 * temporary password. Failures count against the account and the address.
 */
export function createSignInService(ctx: AuthContext) {
  const { db, clock, accounts, settings, throttles } = ctx;
  const { ensureNotThrottled, countAgainst } = throttles;

  /** A single-use login session to choose the first personal password with (NEW_PASSWORD_REQUIRED). */
  async function challenge(tenant: Tenant, account: { id: string; username: string }, now: Date) {
    const session = randomToken('mps_');
    await insertLoginSession(db, tenant, {
      tokenHash: hashToken(session),
      userId: account.id,
      at: now,
      expiresAt: new Date(now.getTime() + settings.loginSessionTtlSeconds * 1000),
    });
    return { username: account.username, session, type: 'NEW_PASSWORD_REQUIRED' as const };
  }

  return {
    /** USER_PASSWORD_AUTH: DONE with tokens, or NEW_PASSWORD_REQUIRED with a session for the temporary password. */
    async userPasswordAuth(tenant: Tenant, rawLogin: string, password: string, address: string) {
      const login = normaliseLogin(rawLogin);
      const credentials = await accounts.findCredentials(db, tenant, login);
      const perAccount = ctx.accountThrottle(tenant, login, credentials?.account);
      const perAddress = ctx.addressThrottle(address);
      const hasFailures = await ensureNotThrottled(perAccount, perAddress);
      const correct =
        credentials === undefined
          ? await ctx.dummyVerify(password)
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
        case 'NEW_PASSWORD_REQUIRED':
          return challenge(tenant, account, now);
        case 'DONE': {
          const familyId = randomUUID();
          const access = await ctx.signAccess(tenant, account, credentials.sessionGeneration, familyId);
          // NOTE: the password was checked outside any transaction. A change of it committed since (the
          // generation moved on, every session revoked) would miss a refresh token stored after it, so
          // the login is refused; a change still running waits for this one, then revokes its token.
          const tokens = await inTransaction(db, async (trx) =>
            (await accounts.recordLogin(trx, tenant, account.id, credentials.sessionGeneration))
              ? ctx.storeRefresh(trx, tenant, account, familyId, access)
              : undefined,
          );
          if (tokens === undefined) throw new AppError('INVALID_CREDENTIALS', INVALID_CREDENTIALS);
          return tokens;
        }
      }
    },

    /** NEW_PASSWORD_REQUIRED: the session from USER_PASSWORD_AUTH sets the first personal password. */
    async newPasswordRequired(
      tenant: Tenant,
      rawLogin: string,
      session: string,
      newPassword: string,
      address: string,
    ) {
      const perAddress = ctx.addressThrottle(address);
      await ensureNotThrottled(perAddress);
      const login = normaliseLogin(rawLogin);
      ctx.requireStrong(newPassword, { username: login });
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
      ctx.requireStrong(newPassword, { username: account.username, email: account.email });
      const hash = await hashPassword(newPassword);
      const used = await inTransaction(db, async (trx) => {
        if (!(await consumeLoginSession(trx, tenant, live.id, clock.now()))) return false;
        await ctx.setPersonalPassword(trx, tenant, account, hash);
        return true;
      });
      if (!used) throw new AppError('INVALID_SESSION', INVALID_SESSION);
      ctx.forgetSubjects();
      return { type: 'PASSWORD_RESET' as const };
    },
  };
}
