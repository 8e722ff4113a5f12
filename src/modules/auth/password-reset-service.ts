import { randomInt } from 'node:crypto';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { hashPassword, normaliseLogin, verifyPassword } from '../accounts/index.ts';
import type { Tenant } from '../companies/index.ts';
import { resetCodeEmail, temporaryPasswordEmail } from '../notifications/index.ts';
import type { AuthContext } from './auth-context.ts';
import {
  consumeResetCode,
  insertResetCode,
  invalidateResetCodes,
  revokeEverySession,
  takeResetCodeAttempt,
} from './auth-repository.ts';
import {
  mayResendTemporaryPassword,
  normaliseResetCode,
  RESET_CODE_DIGITS,
  RESET_CODE_MAX_ATTEMPTS,
  RESET_CODE_TTL_SECONDS,
} from './rules/login-rules.ts';

const INVALID_CODE = 'The code is not valid: it is wrong, has expired, has been used or has had 5 tries';

/**
 * FORGOT_PASSWORD: a reset code by email, and the same answer (`FORGOT_PASSWORD_CODE`) whatever the
 * account: with a personal password, still on its temporary one (expired or not), or none at all.
 * NOTE: answering RESEND_PASSWORD for an account on its temporary password told anyone which accounts
 * were never used. The code lets such an account choose its password with FORGOT_PASSWORD_CODE: it
 * proves the same thing the emailed temporary password would, that the caller reads the mailbox.
 */
async function forgotPassword(ctx: AuthContext, tenant: Tenant, rawLogin: string) {
  const { db, clock, accounts, notifications, throttles } = ctx;
  const login = normaliseLogin(rawLogin);
  const credentials = await accounts.findCredentials(db, tenant, login);
  const perEmail = ctx.emailThrottle(tenant, login, credentials?.account);
  await throttles.ensureNotThrottled(perEmail);
  const account = credentials?.account.active === true ? credentials.account : undefined;
  const outcome = 'FORGOT_PASSWORD_CODE' as const;
  await throttles.countAgainst(perEmail);
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
  ctx: AuthContext,
  tenant: Tenant,
  rawLogin: string,
  rawCode: string | number,
  newPassword: string,
  address: string,
) {
  const { db, clock, accounts, throttles } = ctx;
  const login = normaliseLogin(rawLogin);
  const credentials = await accounts.findCredentials(db, tenant, login);
  const perAccount = ctx.accountThrottle(tenant, login, credentials?.account);
  const perAddress = ctx.addressThrottle(address);
  await throttles.ensureNotThrottled(perAccount, perAddress);
  const code = normaliseResetCode(rawCode);
  if (code === undefined)
    throw new AppError('VALIDATION_FAILED', 'The code must be the 6 digits from the email', {
      errors: [{ path: '/body/code', message: 'must be 6 digits' }],
    });
  // Only what the caller typed may shape this answer: the account's own details wait for the code.
  ctx.requireStrong(newPassword, { username: login, email: login.includes('@') ? login : undefined });
  const account = credentials?.account.active === true ? credentials.account : undefined;
  const attempt =
    account === undefined
      ? undefined
      : await takeResetCodeAttempt(db, tenant, account.id, RESET_CODE_MAX_ATTEMPTS, clock.now());
  const correct =
    attempt === undefined ? await ctx.dummyVerify(code) : await verifyPassword(attempt.codeHash, code);
  if (account === undefined || attempt === undefined || !correct) {
    await throttles.countAgainst(perAccount, perAddress);
    throw new AppError('INVALID_CODE', INVALID_CODE);
  }
  ctx.requireStrong(newPassword, { username: account.username, email: account.email });
  const hash = await hashPassword(newPassword);
  const used = await inTransaction(db, async (trx) => {
    if (!(await consumeResetCode(trx, attempt.id, clock.now()))) return false;
    await ctx.setPersonalPassword(trx, tenant, account, hash);
    return true;
  });
  if (!used) throw new AppError('INVALID_CODE', INVALID_CODE);
  await throttles.clear(perAccount);
  ctx.forgetSubjects();
  return { type: 'PASSWORD_RESET' as const };
}

/** RESEND_PASSWORD: a new temporary password by email, for an account that has not chosen its own. */
async function resendPassword(ctx: AuthContext, tenant: Tenant, rawLogin: string) {
  const { db, clock, accounts, notifications, throttles } = ctx;
  const login = normaliseLogin(rawLogin);
  const credentials = await accounts.findCredentials(db, tenant, login);
  const perEmail = ctx.emailThrottle(tenant, login, credentials?.account);
  await throttles.ensureNotThrottled(perEmail);
  await throttles.countAgainst(perEmail);
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
    ctx.forgetSubjects();
  }
  return { type: 'TEMPORARY_PASSWORD_SENT' as const };
}

/**
 * A forgotten password: FORGOT_PASSWORD (a code by email), FORGOT_PASSWORD_CODE (the code sets a new
 * password) and RESEND_PASSWORD (a new temporary password by email). Every answer is the same for an
 * unknown username, after the same work.
 */
export function createPasswordResetService(ctx: AuthContext) {
  return {
    forgotPassword: (tenant: Tenant, login: string) => forgotPassword(ctx, tenant, login),
    forgotPasswordCode: (
      tenant: Tenant,
      login: string,
      code: string | number,
      newPassword: string,
      address: string,
    ) => forgotPasswordCode(ctx, tenant, login, code, newPassword, address),
    resendPassword: (tenant: Tenant, login: string) => resendPassword(ctx, tenant, login),
  };
}
