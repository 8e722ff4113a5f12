import { hashToken } from '../../platform/crypto.ts';
import { notFound } from '../../platform/errors.ts';
import type { SessionView, StaffContext, StaffSession } from './staff-context.ts';
import {
  findLiveSession,
  findStaffById,
  purgeSessions,
  revokeSessions,
  updateSession,
} from './staff-repository.ts';
import type { StaffTotpService } from './staff-totp-service.ts';

/** How stale `last_seen_at` may get before a request writes it again (one write a minute, not one a request). */
const TOUCH_EVERY_MS = 60_000;

/**
 * Staff sessions once started: found from the cookie's token (whose hash alone is stored) with an
 * idle expiry that moves on, shown to the console, ended here or everywhere, and purged when long gone.
 */
export function createStaffSessionService(ctx: StaffContext, totp: StaffTotpService) {
  const { db, clock } = ctx;
  return {
    /** The session a cookie names, if live; its idle expiry moves on (at most one write a minute). */
    async authenticate(token: string): Promise<StaffSession | undefined> {
      const now = clock.now();
      const row = await findLiveSession(db, hashToken(token), now);
      if (row === undefined) return undefined;
      let expiresAt = row.expires_at;
      if (row.stage === 'active' && now.getTime() - row.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
        expiresAt = ctx.expiryFor('active', now);
        await updateSession(db, row.session_id, { last_seen_at: now, expires_at: expiresAt });
      }
      return {
        sessionId: row.session_id,
        stage: row.stage,
        csrfToken: row.csrf_token,
        expiresAt,
        staffId: row.staff_id,
        email: row.email,
        role: row.role,
        totpEnabled: row.totp_secret !== null,
      };
    },

    /** The session as the console shows it; at the TOTP enrolment step, with the QR code to scan. */
    async view(session: StaffSession): Promise<SessionView> {
      const view: SessionView = {
        stage: session.stage,
        csrf_token: session.csrfToken,
        expires_at: session.expiresAt.toISOString(),
        staff: {
          staff_id: session.staffId,
          email: session.email,
          role: session.role,
          totp_enabled: session.totpEnabled,
        },
      };
      if (session.stage !== 'totp_enrol') return view;
      const staff = await findStaffById(db, session.staffId);
      if (staff === undefined) throw notFound('staff member');
      return { ...view, totp_enrolment: await totp.enrolment(staff) };
    },

    /** Housekeeping: sessions ended or expired a day ago. */
    purgeSessions: (now: Date): Promise<number> => purgeSessions(db, now),

    signOut: (session: StaffSession): Promise<void> =>
      updateSession(db, session.sessionId, { revoked_at: clock.now() }),

    signOutEverywhere: async (session: StaffSession): Promise<void> => {
      await revokeSessions(db, session.staffId, clock.now());
    },
  };
}
