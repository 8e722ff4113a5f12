import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { generateTemporaryPassword, hashPassword } from '../accounts/index.ts';
import type { StaffRole } from './rules/index.ts';
import { normaliseStaffEmail, staffView, type StaffContext, type StaffView } from './staff-context.ts';
import { insertStaff, listStaff, revokeSessions, updateStaff } from './staff-repository.ts';

/** Staff members as admins manage them: created with a one-time password, listed, changed, reset. */
export function createStaffMemberService(ctx: StaffContext) {
  const { db, clock } = ctx;
  return {
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

    /** The active staff a claim may be assigned to (the `claims` and `admin` roles), by email. */
    claimHandlers: async (): Promise<Array<{ staff_id: string; email: string; role: 'claims' | 'admin' }>> =>
      (await listStaff(db)).flatMap((row) =>
        row.active && (row.role === 'claims' || row.role === 'admin')
          ? [{ staff_id: row.id, email: row.email, role: row.role }]
          : [],
      ),

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
  };
}
