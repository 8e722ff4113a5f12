/** The closed set of error codes clients may branch on, with the HTTP status each maps to. */
export const ERROR_STATUS = {
  VALIDATION_FAILED: 422,
  MALFORMED_BODY: 422,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  MALFORMED_URL: 400,
  UNAUTHENTICATED: 401,
  INVALID_CLIENT_CREDENTIALS: 401,
  INVALID_TOKEN: 401,
  INVALID_CREDENTIALS: 401,
  TEMPORARY_PASSWORD_EXPIRED: 401,
  INVALID_SESSION: 401,
  INVALID_CODE: 401,
  FORBIDDEN: 403,
  CSRF_TOKEN_INVALID: 403,
  FOUR_EYES_REQUIRED: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  CONFLICT: 409,
  POLICY_NOT_ACTIVE: 409,
  JOURNEY_OVERLAP: 409,
  JOURNEY_OUTSIDE_COVER: 422,
  STATEMENT_PERIOD_CONFLICT: 409,
  BILLING_DATE_IN_FUTURE: 422,
  POLICY_TERM_ENDED: 422,
  UNKNOWN_PRODUCT: 422,
  NO_RATE_BOOK: 422,
  QUOTE_NOT_BINDABLE: 409,
  QUOTE_PRICING_MISMATCH: 422,
  QUOTE_RISK_MISMATCH: 422,
  EVENT_ALREADY_DISPUTED: 409,
  DISPUTE_DECIDED: 409,
  ODOMETER_NOT_MONOTONIC: 422,
  ODOMETER_IMPLAUSIBLE: 422,
  ALREADY_PAID: 409,
  PAYMENT_DECLINED: 402,
  PAYMENT_MISMATCH: 422,
  RATE_LIMITED: 429,
  UPSTREAM_UNAVAILABLE: 503,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldError {
  /** JSON pointer into the request, e.g. `/body/proposer/email` or `/headers/environment`. */
  readonly path: string;
  readonly message: string;
}

export interface AppErrorOptions {
  readonly errors?: readonly FieldError[];
  /** Seconds a client should wait before retrying (429, 503). */
  readonly retryAfterSeconds?: number;
  /** For integrations: whether the job runner should try again. */
  readonly retryable?: boolean;
  readonly cause?: unknown;
}

/** The one error type services throw; the HTTP layer turns it into problem+json. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly errors: readonly FieldError[];
  readonly retryAfterSeconds: number | undefined;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.errors = options.errors ?? [];
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.retryable = options.retryable ?? false;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`);

/** PostgreSQL's unique_violation, the same on pg and PGlite. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/** Turns a unique violation the caller expects into CONFLICT; rethrows anything else. */
export async function conflictOnDuplicate<T>(
  work: () => Promise<T>,
  constraint: string,
  message: string,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error, constraint)) throw new AppError('CONFLICT', message, { cause: error });
    throw error;
  }
}
