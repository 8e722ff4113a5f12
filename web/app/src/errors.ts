import { MilepostError } from '../../../sdk/src/index.ts';
import { tooManyAttempts, UNEXPECTED_FAILURE } from '../../shared/errors.ts';

/** Sentences for the codes a policyholder meets, where the service's detail speaks to developers. */
const BY_CODE: Readonly<Record<string, string>> = {
  TEMPORARY_PASSWORD_EXPIRED:
    'Your temporary password has expired. We can email you a new one, or you can reset your password.',
  INVALID_TOKEN: 'Your session has ended. Please sign in again.',
  UNAUTHENTICATED: 'Please sign in.',
};

/**
 * Every failure as a sentence for a person: the service's `detail` when it is one, a plain
 * sentence otherwise; never a body, a path or a code.
 */
export function humanError(error: unknown): string {
  if (!(error instanceof MilepostError)) return UNEXPECTED_FAILURE;
  if (error.code === 'RATE_LIMITED') return tooManyAttempts(error);
  const known = BY_CODE[error.code];
  if (known !== undefined) return known;
  if (error.code === 'NETWORK') return error.message;
  // Messages that name request internals (JSON pointers, field names) are for developers.
  if (/\/body\/|\/headers\/|[{}[\]]|_[a-z]|[A-Z]+_[A-Z]/.test(error.message)) {
    if (error.status === 422) return 'Some of the details are not valid. Please check them and try again.';
    if (error.status >= 500) return 'Something went wrong on our side. Please try again later.';
    return 'That did not work. Please check the details and try again.';
  }
  return error.message;
}
