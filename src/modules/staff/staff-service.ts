import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { hashToken, randomToken } from '../../platform/crypto.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { generateTemporaryPassword, hashPassword, verifyPassword } from '../accounts/index.ts';
import {
  ACCOUNT_THROTTLE,
  ADDRESS_THROTTLE,
  checkNewPassword,
  createThrottles,
  throttleOf,
} from '../auth/index.ts';
import type { StaffRole } from './rules/roles.ts';
import {
  findLiveSession,
  findStaffByEmail,
  findStaffById,
  insertAuditRecord,
  insertSession,
  insertStaff,
  listStaff,
  purgeSessions,
  revokeSessions,
  takeTotpStep,
  updateSession,
  updateStaff,
  type SessionStage,
  type StaffRow,
} from './staff-repository.ts';
import { acceptedStep, enrolmentFor, newTotpSecret, type TotpEnrolment } from './totp.ts';

export interface StaffSettings {
  /** A session unused this long ends (STAFF_SESSION_IDLE_HOURS). */
  readonly sessionIdleHours: number;
  /** The issuer authenticator apps show beside the code (APP_BRAND_NAME). */
  readonly issuer: string;
}

/** A sign-in that has not passed every step ends sooner than a working session. */
const UNFINISHED_SIGN_IN_MS = 15 * 60_000;
/** How stale `last_seen_at` may get before a request writes it again (one write a minute, not one a request). */
const TOUCH_EVERY_MS = 60_000;

const INVALID_CREDENTIALS = 'Incorrect email or password';
const INVALID_CODE = 'The code is not valid: it is wrong, has expired or has been used';

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

/** The step after a correct password: replace a one-time password, then TOTP (mandatory for admins). */
function stageAfterPassword(
  staff: Pick<StaffRow, 'password_is_temporary' | 'totp_secret' | 'role'>,
): SessionStage {
  if (staff.password_is_temporary) return 'new_password';
  if (staff.totp_secret !== null) return 'totp';
  return staff.role === 'admin' ? 'totp_enrol' : 'active';
}

/**
 * Staff accounts and their server-side sessions. Passwords are argon2id with the policyholders'
 * rules and throttling; TOTP codes (RFC 6238) are accepted once each; a session is a random token
 * whose hash is stored, idle-expiring, and ends everywhere on demand or when its holder is deactivated.
 */
export function createStaffService(deps: { db: Executor; clock: Clock; settings: StaffSettings }) {
  const { db, clock, settings } = deps;
  const throttles = createThrottles(db, clock);
  const idleMs = settings.sessionIdleHours * 3_600_000;
  let dummyHash: Promise<string> | undefined;

  const expiryFor = (stage: SessionStage, now: Date) =>
    new Date(now.getTime() + (stage === 'active' ? idleMs : UNFINISHED_SIGN_IN_MS));

  async function enrolment(staff: StaffRow): Promise<TotpEnrolment> {
    let secret = staff.totp_pending_secret;
    if (secret === null) {
      secret = newTotpSecret();
      await updateStaff(db, staff.id, { totp_pending_secret: secret }, clock.now());
    }
    return enrolmentFor(secret, staff.email, settings.issuer);
  }

  async function viewOf(session: StaffSession): Promise<SessionView> {
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
    return { ...view, totp_enrolment: await enrolment(staff) };
  }

  /** A sign-in passed its last step: the member's last sign-in, and a record in the audit trail. */
  async function signedIn(session: StaffSession, address: string, now: Date): Promise<void> {
    await updateStaff(db, session.staffId, { last_sign_in_at: now }, now);
    await insertAuditRecord(db, {
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
    session: StaffSession,
    stage: SessionStage,
    address: string,
    totpEnabled: boolean,
  ): Promise<StaffSession> {
    const now = clock.now();
    const expiresAt = expiryFor(stage, now);
    await updateSession(db, session.sessionId, { stage, last_seen_at: now, expires_at: expiresAt });
    const moved = { ...session, stage, expiresAt, totpEnabled };
    if (stage === 'active') await signedIn(moved, address, now);
    return moved;
  }

  const service = {
    /** A new staff member with a one-time password (shown once: they replace it at first sign-in). */
    async create(rawEmail: string, role: StaffRole): Promise<{ staff: StaffView; oneTimePassword: string }> {
      const email = normaliseStaffEmail(rawEmail);
      const oneTimePassword = generateTemporaryPassword();
      const row = await insertStaff(db, {
        email,
        role,
        passwordHash: await hashPassword(oneTimePassword),
        now: clock.now(),
      });
      if (row === undefined)
        throw new AppError('CONFLICT', `A staff member with the email ${email} exists already`);
      return { staff: staffView(row), oneTimePassword };
    },

    list: async (): Promise<StaffView[]> => (await listStaff(db)).map(staffView),

    /** A role change or deactivation; deactivating ends every session of theirs at once. */
    async update(id: string, changes: { role?: StaffRole; active?: boolean }): Promise<StaffView> {
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const row = await updateStaff(trx, id, changes, now);
        if (row === undefined) throw notFound('staff member');
        if (changes.active === false || changes.role !== undefined) await revokeSessions(trx, id, now);
        return staffView(row);
      });
    },

    /** A new one-time password (and TOTP to enrol again): for a forgotten password or a lost phone. */
    async resetCredentials(id: string): Promise<{ staff: StaffView; oneTimePassword: string }> {
      const now = clock.now();
      const oneTimePassword = generateTemporaryPassword();
      const passwordHash = await hashPassword(oneTimePassword);
      return inTransaction(db, async (trx) => {
        const row = await updateStaff(
          trx,
          id,
          {
            password_hash: passwordHash,
            password_is_temporary: true,
            totp_secret: null,
            totp_pending_secret: null,
            totp_last_step: null,
          },
          now,
        );
        if (row === undefined) throw notFound('staff member');
        await revokeSessions(trx, id, now);
        return { staff: staffView(row), oneTimePassword };
      });
    },

    /** The first step: email and password. A new session starts at the next step (or active). */
    async signIn(
      rawEmail: string,
      password: string,
      address: string,
    ): Promise<{ token: string; session: StaffSession }> {
      const email = normaliseStaffEmail(rawEmail);
      const perAccount = throttleOf(ACCOUNT_THROTTLE, 'staff', email);
      const perAddress = throttleOf(ADDRESS_THROTTLE, 'address', address);
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
      const row = await insertSession(db, {
        staff_id: staff.id,
        token_hash: hashToken(token),
        csrf_token: randomToken(),
        stage,
        created_at: now,
        last_seen_at: now,
        expires_at: expiryFor(stage, now),
      });
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
      if (stage === 'active') await signedIn(session, address, now);
      return { token, session };
    },

    /** The session a cookie names, if live; its idle expiry moves on (at most one write a minute). */
    async authenticate(token: string): Promise<StaffSession | undefined> {
      const now = clock.now();
      const row = await findLiveSession(db, hashToken(token), now);
      if (row === undefined) return undefined;
      let expiresAt = row.expires_at;
      if (row.stage === 'active' && now.getTime() - row.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
        expiresAt = expiryFor('active', now);
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

    view: viewOf,

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
      return moveTo(session, stageAfterPassword(staff), address, staff.totp_secret !== null);
    },

    /** A TOTP code: checks an enrolled secret (stage totp) or confirms a new one (stage totp_enrol). */
    async verifyTotp(session: StaffSession, code: string, address: string): Promise<StaffSession> {
      if (session.stage !== 'totp' && session.stage !== 'totp_enrol')
        throw new AppError('CONFLICT', `This sign-in is at the ${session.stage} step, not at a TOTP code`);
      const staff = await findStaffById(db, session.staffId);
      if (staff === undefined) throw notFound('staff member');
      const secret = session.stage === 'totp' ? staff.totp_secret : staff.totp_pending_secret;
      await acceptCode(staff, secret, code);
      if (session.stage === 'totp_enrol')
        await updateStaff(db, staff.id, { totp_secret: secret, totp_pending_secret: null }, clock.now());
      return moveTo(session, 'active', address, true);
    },

    /** Optional enrolment from an active session (operations and viewers). */
    async beginEnrolment(session: StaffSession): Promise<TotpEnrolment> {
      requireStage(session, 'active');
      const staff = await findStaffById(db, session.staffId);
      if (staff === undefined) throw notFound('staff member');
      if (staff.totp_secret !== null)
        throw new AppError('CONFLICT', 'TOTP is enrolled already; an admin can reset it');
      return enrolment(staff);
    },

    async confirmEnrolment(session: StaffSession, code: string): Promise<StaffSession> {
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
    },

    /** Housekeeping: sessions ended or expired a day ago. */
    purgeSessions: (now: Date): Promise<number> => purgeSessions(db, now),

    signOut: (session: StaffSession): Promise<void> =>
      updateSession(db, session.sessionId, { revoked_at: clock.now() }),

    signOutEverywhere: async (session: StaffSession): Promise<void> => {
      await revokeSessions(db, session.staffId, clock.now());
    },
  };

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

  return service;
}

function requireStage(session: StaffSession, stage: SessionStage): void {
  if (session.stage !== stage)
    throw new AppError('CONFLICT', `This sign-in is at the ${session.stage} step, not at ${stage}`);
}

export type StaffService = ReturnType<typeof createStaffService>;
