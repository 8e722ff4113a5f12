import type { StaffRole } from './roles.ts';

/** The steps of a sign-in: the one-time password replaced, then TOTP enrolled or checked, then active. */
export type SessionStage = 'new_password' | 'totp_enrol' | 'totp' | 'active';

/** The step after a correct password: replace a one-time password, then TOTP (mandatory for admins). */
export function stageAfterPassword(staff: {
  readonly password_is_temporary: boolean;
  readonly totp_secret: string | null;
  readonly role: StaffRole;
}): SessionStage {
  if (staff.password_is_temporary) return 'new_password';
  if (staff.totp_secret !== null) return 'totp';
  return staff.role === 'admin' ? 'totp_enrol' : 'active';
}
