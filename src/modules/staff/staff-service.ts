import { createStaffContext, type StaffDeps } from './staff-context.ts';
import { createStaffMemberService } from './staff-member-service.ts';
import { createStaffSessionService } from './staff-session-service.ts';
import { createStaffSignInService } from './staff-sign-in-service.ts';
import { createStaffTotpService } from './staff-totp-service.ts';

export type { SessionView, StaffSession, StaffSettings, StaffView } from './staff-context.ts';

/**
 * Staff accounts and their server-side sessions. Passwords are argon2id with the policyholders'
 * rules and throttling; TOTP codes (RFC 6238) are accepted once each; a session is a random token
 * whose hash is stored, idle-expiring, and ends everywhere on demand or when its holder is deactivated.
 */
export function createStaffService(deps: StaffDeps) {
  const ctx = createStaffContext(deps);
  const totp = createStaffTotpService(ctx);
  return {
    ...createStaffMemberService(ctx),
    ...createStaffSignInService(ctx, totp),
    ...createStaffSessionService(ctx, totp),
    beginEnrolment: totp.beginEnrolment,
    confirmEnrolment: totp.confirmEnrolment,
  };
}

export type StaffService = ReturnType<typeof createStaffService>;
