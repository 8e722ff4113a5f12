import { hashToken, randomToken } from '../../platform/crypto.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { hashPassword, verifyPassword } from '../accounts/index.ts';
import { ACCOUNT_THROTTLE, addressThrottleOf, checkNewPassword, throttleOf } from '../auth/index.ts';
import { stageAfterPassword, type SessionStage } from './rules/index.ts';
import { normaliseStaffEmail, requireStage, type StaffContext, type StaffSession } from './staff-context.ts';
import {
  findStaffByEmail,
  findStaffById,
  insertAuditRecord,
  insertSession,
  lockUnchangedStaff,
  updateSession,
  updateStaff,
} from './staff-repository.ts';
import type { StaffTotpService } from './staff-totp-service.ts';

const INVALID_CREDENTIALS = 'Incorrect email or password';

/** A sign-in passed its last step: the member's last sign-in, and a record in the audit trail. */
async function signedIn(ctx: StaffContext, session: StaffSession, address: string, now: Date): Promise<void> {
  await updateStaff(ctx.db, session.staffId, { last_sign_in_at: now }, now);
  await insertAuditRecord(ctx.db, {
    occurred_at: now,
    request_id: `sign-in:${session.sessionId}`,
    actor: `staff:${session.email}`,
    staff_id: session.staffId,
    role: session.role,
    action: 'staff.signIn',
    resource: `staff:${session.email}`,
    company_id: null,
    environment: null,
    policy_id: null,
    source_address: address,
    outcome: 'ok',
  });
}

/** The session at its next step (`totpEnabled`: whether the member has TOTP now). */
async function moveTo(
  ctx: StaffContext,
  session: StaffSession,
  stage: SessionStage,
  address: string,
  totpEnabled: boolean,
): Promise<StaffSession> {
  const now = ctx.clock.now();
  const expiresAt = ctx.expiryFor(stage, now);
  await updateSession(ctx.db, session.sessionId, { stage, last_seen_at: now, expires_at: expiresAt });
  const moved = { ...session, stage, expiresAt, totpEnabled };
  if (stage === 'active') await signedIn(ctx, moved, address, now);
  return moved;
}

/**
 * The steps of a staff sign-in: email and password (argon2id, throttled like the policyholders'),
 * the one-time password replaced, then a TOTP code; the last step passed makes the session active.
 */
export function createStaffSignInService(ctx: StaffContext, totp: StaffTotpService) {
  const { db, clock, throttles } = ctx;
  let dummyHash: Promise<string> | undefined;

  return {
    /** The first step: email and password. A new session starts at the next step (or active). */
    async signIn(
      rawEmail: string,
      password: string,
      address: string,
    ): Promise<{ token: string; session: StaffSession }> {
      const email = normaliseStaffEmail(rawEmail);
      const perAccount = throttleOf(ACCOUNT_THROTTLE, 'staff', email);
      const perAddress = addressThrottleOf(['address'], address);
      const [hasFailures, staff] = await Promise.all([
        throttles.ensureNotThrottled(perAccount, perAddress),
        findStaffByEmail(db, email),
      ]);
      // An unknown email costs the same hash as a known one: the answer and its timing tell nothing.
      dummyHash ??= hashPassword(randomToken());
      const correct =
        staff === undefined
          ? await verifyPassword(await dummyHash, password).then(() => false)
          : (await verifyPassword(staff.password_hash, password)) && staff.active;
      if (staff === undefined || !correct) {
        await throttles.countAgainst(perAccount, perAddress);
        throw new AppError('INVALID_CREDENTIALS', INVALID_CREDENTIALS);
      }
      if (hasFailures) await throttles.clear(perAccount);
      const now = clock.now();
      const token = randomToken('mps_');
      const stage = stageAfterPassword(staff);
      // NOTE: the password was checked outside any transaction. A credentials reset or deactivation
      // committed since then revoked the member's sessions before this one existed, so the session is
      // started only if the row still holds the password checked, under its lock.
      const row = await inTransaction(db, async (trx) =>
        (await lockUnchangedStaff(trx, staff.id, staff.password_hash))
          ? insertSession(trx, {
              staff_id: staff.id,
              token_hash: hashToken(token),
              csrf_token: randomToken(),
              stage,
              created_at: now,
              last_seen_at: now,
              expires_at: ctx.expiryFor(stage, now),
            })
          : undefined,
      );
      if (row === undefined) throw new AppError('INVALID_CREDENTIALS', INVALID_CREDENTIALS);
      const session: StaffSession = {
        sessionId: row.id,
        stage: row.stage,
        csrfToken: row.csrf_token,
        expiresAt: row.expires_at,
        staffId: staff.id,
        email: staff.email,
        role: staff.role,
        totpEnabled: staff.totp_secret !== null,
      };
      if (stage === 'active') await signedIn(ctx, session, address, now);
      return { token, session };
    },

    /** Replaces the one-time password (stage new_password), then on to TOTP or active. */
    async changePassword(session: StaffSession, newPassword: string, address: string): Promise<StaffSession> {
      requireStage(session, 'new_password');
      const problem = checkNewPassword(newPassword, { email: session.email });
      if (problem !== undefined)
        throw new AppError('VALIDATION_FAILED', `The new password is not accepted: it ${problem}`, {
          errors: [{ path: '/body/new_password', message: problem }],
        });
      const now = clock.now();
      const staff = await updateStaff(
        db,
        session.staffId,
        { password_hash: await hashPassword(newPassword), password_is_temporary: false },
        now,
      );
      if (staff === undefined) throw notFound('staff member');
      return moveTo(ctx, session, stageAfterPassword(staff), address, staff.totp_secret !== null);
    },

    /** A TOTP code: checks an enrolled secret (stage totp) or confirms a new one (stage totp_enrol). */
    async verifyTotp(session: StaffSession, code: string, address: string): Promise<StaffSession> {
      if (session.stage !== 'totp' && session.stage !== 'totp_enrol')
        throw new AppError('CONFLICT', `This sign-in is at the ${session.stage} step, not at a TOTP code`);
      const staff = await findStaffById(db, session.staffId);
      if (staff === undefined) throw notFound('staff member');
      const secret = session.stage === 'totp' ? staff.totp_secret : staff.totp_pending_secret;
      await totp.acceptCode(staff, secret, code);
      if (session.stage === 'totp_enrol')
        await updateStaff(db, staff.id, { totp_secret: secret, totp_pending_secret: null }, clock.now());
      return moveTo(ctx, session, 'active', address, true);
    },
  };
}
