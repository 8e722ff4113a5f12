import type { Executor } from '../../schema.ts';

/**
 * Every sign-in credential of an account deleted, in the caller's transaction: its login challenge
 * sessions, refresh tokens and password reset codes. The erasure of a policyholder calls it with the
 * rest of their records, so that the account can never be signed into again, nor its old sessions
 * refreshed, once the erasure commits.
 */
export async function deleteAccountCredentials(trx: Executor, userId: string): Promise<void> {
  await trx.deleteFrom('auth_login_sessions').where('user_id', '=', userId).execute();
  await trx.deleteFrom('auth_refresh_tokens').where('user_id', '=', userId).execute();
  await trx.deleteFrom('auth_reset_codes').where('user_id', '=', userId).execute();
}
