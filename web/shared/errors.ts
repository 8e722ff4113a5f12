import { MilepostError } from '../../sdk/src/index.ts';
import { formatWait } from './format.ts';

/** What went wrong when it is not an answer of the service (a bug in the page): a sentence all the same. */
export const UNEXPECTED_FAILURE = 'Something went wrong. Please try again, or reload the page.';

/** A throttled attempt (429) as a sentence: how long to wait, when the service said. */
export function tooManyAttempts(error: MilepostError): string {
  return error.retryAfterSeconds === undefined
    ? 'Too many attempts. Please wait a moment and try again.'
    : `Too many attempts. Please wait ${formatWait(error.retryAfterSeconds)} and try again.`;
}
