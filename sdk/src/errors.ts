/** A field the service refused, as `errors[]` of its problem answer. */
export interface FieldProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * An answer that was not a success, or no answer at all. `message` is always a sentence a person can
 * read (the problem's `detail`), never a body; `code` is the service's stable code to branch on.
 */
export class MilepostError extends Error {
  readonly status: number;
  /** The problem's code (`INVALID_CREDENTIALS`, `RATE_LIMITED`…); `NETWORK` when nothing answered. */
  readonly code: string;
  /** 429 and 503: seconds to wait before trying again (`Retry-After`). */
  readonly retryAfterSeconds: number | undefined;
  readonly errors: readonly FieldProblem[];

  constructor(
    message: string,
    details: {
      status: number;
      code: string;
      retryAfterSeconds?: number | undefined;
      errors?: readonly FieldProblem[];
    },
  ) {
    super(message);
    this.name = 'MilepostError';
    this.status = details.status;
    this.code = details.code;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.errors = details.errors ?? [];
  }
}

const FALLBACK: Readonly<Record<number, string>> = {
  400: 'The request could not be read.',
  401: 'You are not signed in, or your session has ended. Please sign in again.',
  403: 'You are not allowed to do that.',
  404: 'That could not be found.',
  409: 'That conflicts with something that has already happened.',
  422: 'Some of the details are not valid.',
  429: 'Too many attempts. Please wait and try again.',
  503: 'The service is busy or down for a moment. Please try again shortly.',
};

function retryAfter(response: Response): number | undefined {
  const raw = response.headers.get('retry-after');
  if (raw === null) return undefined;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The error of a failed answer, from its problem+json body when it has one. */
export function errorFromResponse(response: Response, body: unknown): MilepostError {
  const problem = isRecord(body) ? body : {};
  const detail =
    typeof problem['detail'] === 'string' && problem['detail'] !== '' ? problem['detail'] : undefined;
  const code = typeof problem['code'] === 'string' ? problem['code'] : `HTTP_${response.status}`;
  const errors = Array.isArray(problem['errors'])
    ? problem['errors'].filter(
        (e): e is FieldProblem =>
          isRecord(e) && typeof e['path'] === 'string' && typeof e['message'] === 'string',
      )
    : [];
  const message =
    detail ??
    FALLBACK[response.status] ??
    (response.status >= 500
      ? 'Something went wrong on our side. Please try again later.'
      : 'The request was not accepted.');
  return new MilepostError(message, {
    status: response.status,
    code,
    retryAfterSeconds: retryAfter(response),
    errors,
  });
}

/** No answer: the network or the service is down. */
export function networkError(cause: unknown): MilepostError {
  const error = new MilepostError('The service cannot be reached. Check your connection and try again.', {
    status: 0,
    code: 'NETWORK',
  });
  error.cause = cause;
  return error;
}
