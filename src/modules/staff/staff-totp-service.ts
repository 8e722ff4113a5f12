import { AppError, notFound } from '../../platform/errors.ts';
import { ACCOUNT_THROTTLE, throttleOf } from '../auth/index.ts';
import { acceptedStep, enrolmentFor, newTotpSecret, type TotpEnrolment } from './rules/index.ts';
import { requireStage, type StaffContext, type StaffSession } from './staff-context.ts';
import { findStaffById, takeTotpStep, updateStaff, type StaffRow } from './staff-repository.ts';

const INVALID_CODE = 'The code is not valid: it is wrong, has expired or has been used';

/**
 * Staff members' authenticators (TOTP, RFC 6238): the secret to enrol (kept pending until a code
 * confirms it), and codes accepted once each, a wrong one counting against the member.
 */
export function createStaffTotpService(ctx: StaffContext) {
  const { db, clock, settings, throttles } = ctx;

  /** The pending secret's enrolment (made now if there is none) as the authenticator reads it. */
  async function enrolment(staff: StaffRow): Promise<TotpEnrolment> {
    let secret = staff.totp_pending_secret;
    if (secret === null) {
      secret = newTotpSecret();
      await updateStaff(db, staff.id, { totp_pending_secret: secret }, clock.now());
    }
    return enrolmentFor(secret, staff.email, settings.issuer);
  }

  /** A wrong code counts against the staff member like a wrong password (6 digits are few). */
  async function acceptCode(staff: StaffRow, secret: string | null, code: string): Promise<void> {
    const perAccount = throttleOf(ACCOUNT_THROTTLE, 'staff-totp', staff.id);
    await throttles.ensureNotThrottled(perAccount);
    const step = secret === null ? undefined : acceptedStep(secret, code, clock.now());
    if (step === undefined || !(await takeTotpStep(db, staff.id, step))) {
      await throttles.countAgainst(perAccount);
      throw new AppError('INVALID_CODE', INVALID_CODE);
    }
    await throttles.clear(perAccount);
  }

  /** Optional enrolment from an active session (operations and viewers). */
  async function beginEnrolment(session: StaffSession): Promise<TotpEnrolment> {
    requireStage(session, 'active');
    const staff = await findStaffById(db, session.staffId);
    if (staff === undefined) throw notFound('staff member');
    if (staff.totp_secret !== null)
      throw new AppError('CONFLICT', 'TOTP is enrolled already; an admin can reset it');
    return enrolment(staff);
  }

  async function confirmEnrolment(session: StaffSession, code: string): Promise<StaffSession> {
    requireStage(session, 'active');
    const staff = await findStaffById(db, session.staffId);
    if (staff === undefined) throw notFound('staff member');
    if (staff.totp_pending_secret === null)
      throw new AppError('CONFLICT', 'No enrolment has begun: POST /staff/me/totp first');
    await acceptCode(staff, staff.totp_pending_secret, code);
    await updateStaff(
      db,
      staff.id,
      { totp_secret: staff.totp_pending_secret, totp_pending_secret: null },
      clock.now(),
    );
    return { ...session, totpEnabled: true };
  }

  return { enrolment, acceptCode, beginEnrolment, confirmEnrolment };
}

export type StaffTotpService = ReturnType<typeof createStaffTotpService>;
