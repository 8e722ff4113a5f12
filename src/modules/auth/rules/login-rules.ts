/*
 * The login state machine's decisions, as pure rules over an account's password state and the time.
 * The interface's state table, row by row, is in docs/api.md ("Policyholder login").
 */

export type IdpStatus = 'CONFIRMED' | 'FORCE_CHANGE_PASSWORD';

export interface PasswordState {
  readonly passwordIsTemporary: boolean;
  readonly temporaryPasswordExpiresAt: Date | null;
}

/** CONFIRMED once a personal password is set; FORCE_CHANGE_PASSWORD while the temporary one is in use. */
export const idpStatus = (state: PasswordState): IdpStatus =>
  state.passwordIsTemporary ? 'FORCE_CHANGE_PASSWORD' : 'CONFIRMED';

/** A temporary password is good for 30 days from when it was issued; it expires at the instant given. */
export function temporaryPasswordExpired(state: PasswordState, now: Date): boolean {
  return (
    state.passwordIsTemporary &&
    state.temporaryPasswordExpiresAt !== null &&
    now.getTime() >= state.temporaryPasswordExpiresAt.getTime()
  );
}

/** What a correct password leads to: tokens, the new-password challenge, or (expired) the resend path. */
export type PasswordLoginOutcome = 'DONE' | 'NEW_PASSWORD_REQUIRED' | 'TEMPORARY_PASSWORD_EXPIRED';

export function afterCorrectPassword(state: PasswordState, now: Date): PasswordLoginOutcome {
  if (!state.passwordIsTemporary) return 'DONE';
  return temporaryPasswordExpired(state, now) ? 'TEMPORARY_PASSWORD_EXPIRED' : 'NEW_PASSWORD_REQUIRED';
}

/** RESEND_PASSWORD issues a new temporary password only to an account that has not yet chosen its own. */
export const mayResendTemporaryPassword = (state: PasswordState | undefined): boolean =>
  state?.passwordIsTemporary === true;

export const RESET_CODE_DIGITS = 6;
export const RESET_CODE_TTL_SECONDS = 3600;
export const RESET_CODE_MAX_ATTEMPTS = 5;

/**
 * A reset code as a client may send it: a string with spaces or dashes ("123 456"), or a JSON number,
 * which loses leading zeros (012345 → 12345). Undefined when it cannot be a 6-digit code.
 */
export function normaliseResetCode(code: string | number): string | undefined {
  if (typeof code === 'number') {
    if (!Number.isInteger(code) || code < 0 || code >= 10 ** RESET_CODE_DIGITS) return undefined;
    return String(code).padStart(RESET_CODE_DIGITS, '0');
  }
  const digits = code.replace(/[\s-]/g, '');
  return new RegExp(`^\\d{${RESET_CODE_DIGITS}}$`).test(digits) ? digits : undefined;
}
