import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import { createThrottles } from '../auth/index.ts';
import type { SessionStage, StaffRole, TotpEnrolment } from './rules/index.ts';
import type { StaffRow } from './staff-repository.ts';

export interface StaffSettings {
  /** A session unused this long ends (STAFF_SESSION_IDLE_HOURS). */
  readonly sessionIdleHours: number;
  /** The issuer authenticator apps show beside the code (APP_BRAND_NAME). */
  readonly issuer: string;
}

/** What the staff service is built from (see `createStaffService`). */
export interface StaffDeps {
  readonly db: Executor;
  readonly clock: Clock;
  readonly settings: StaffSettings;
}

/** A sign-in that has not passed every step ends sooner than a working session. */
const UNFINISHED_SIGN_IN_MS = 15 * 60_000;

/** A staff member as the API shows them. */
export interface StaffView {
  readonly staff_id: string;
  readonly email: string;
  readonly role: StaffRole;
  readonly active: boolean;
  readonly totp_enabled: boolean;
  readonly created_at: string;
  readonly last_sign_in_at: string | null;
}

export const staffView = (row: StaffRow): StaffView => ({
  staff_id: row.id,
  email: row.email,
  role: row.role,
  active: row.active,
  totp_enabled: row.totp_secret !== null,
  created_at: row.created_at.toISOString(),
  last_sign_in_at: row.last_sign_in_at?.toISOString() ?? null,
});

/** A session found from its cookie: who, at which step, and the token state-changing requests must echo. */
export interface StaffSession {
  readonly sessionId: string;
  readonly stage: SessionStage;
  readonly csrfToken: string;
  readonly expiresAt: Date;
  readonly staffId: string;
  readonly email: string;
  readonly role: StaffRole;
  readonly totpEnabled: boolean;
}

export interface SessionView {
  readonly stage: SessionStage;
  readonly csrf_token: string;
  readonly expires_at: string;
  readonly staff: { staff_id: string; email: string; role: StaffRole; totp_enabled: boolean };
  readonly totp_enrolment?: TotpEnrolment;
}

export const normaliseStaffEmail = (email: string): string => email.trim().toLowerCase();

export function requireStage(session: StaffSession, stage: SessionStage): void {
  if (session.stage !== stage)
    throw new AppError('CONFLICT', `This sign-in is at the ${session.stage} step, not at ${stage}`);
}

/** What every use case of the staff service shares: the failure throttles and a session's expiry. */
export function createStaffContext(deps: StaffDeps) {
  const idleMs = deps.settings.sessionIdleHours * 3_600_000;
  return {
    ...deps,
    throttles: createThrottles(deps.db, deps.clock),
    /** When a session at `stage` ends if unused from `now`. */
    expiryFor: (stage: SessionStage, now: Date): Date =>
      new Date(now.getTime() + (stage === 'active' ? idleMs : UNFINISHED_SIGN_IN_MS)),
  };
}

export type StaffContext = ReturnType<typeof createStaffContext>;
