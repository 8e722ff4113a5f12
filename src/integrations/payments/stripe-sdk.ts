import { createRequire } from 'node:module';
import type Stripe from 'stripe';
import { AppError } from '../../platform/errors.ts';

type StripeSdk = typeof Stripe;
let stripeSdk: StripeSdk | undefined;

/**
 * The Stripe SDK, loaded the first time a gateway talks to Stripe or the sandbox: it holds about 27 MB
 * of memory once loaded, which a process that never takes a payment (a worker, or an API process in
 * a quiet hour) need not pay (DESIGN §5: RSS ≤ 200 MB under load). Loaded synchronously through
 * `require` so that the gateway's methods keep their signatures; every use goes through here, so the
 * process holds one copy of the SDK and its error classes.
 */
export function loadStripe(): StripeSdk {
  return (stripeSdk ??= createRequire(import.meta.url)('stripe') as StripeSdk);
}

export const idOf = (value: string | { id: string } | null | undefined): string | null =>
  value === null || value === undefined ? null : typeof value === 'string' ? value : value.id;

/**
 * Wraps an SDK error in `AppError`: network, timeouts, 409, 5xx and rate limits are retryable; card
 * errors, invalid requests and authentication failures are not.
 */
export function toAppError(error: unknown, action: string): AppError {
  if (error instanceof AppError) return error;
  // An SDK that was never loaded threw nothing.
  const sdk = stripeSdk;
  if (sdk === undefined || !(error instanceof sdk.errors.StripeError)) {
    return new AppError('UPSTREAM_UNAVAILABLE', `payment processor: ${action} failed`, {
      retryable: false,
      cause: error,
    });
  }
  const detail = `payment processor: ${action}: ${error.message}`;
  if (error instanceof sdk.errors.StripeCardError)
    return new AppError('PAYMENT_DECLINED', detail, { retryable: false, cause: error });
  if (error instanceof sdk.errors.StripeRateLimitError) {
    const retryAfter = Number(error.headers?.['retry-after']);
    return new AppError('UPSTREAM_UNAVAILABLE', detail, {
      retryable: true,
      cause: error,
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
    });
  }
  if (error instanceof sdk.errors.StripeIdempotencyError)
    return new AppError('CONFLICT', detail, { retryable: false, cause: error });
  if (error instanceof sdk.errors.StripeInvalidRequestError) {
    const missing = error.statusCode === 404 || error.code === 'resource_missing';
    return new AppError(missing ? 'NOT_FOUND' : 'VALIDATION_FAILED', detail, {
      retryable: false,
      cause: error,
    });
  }
  if (
    error instanceof sdk.errors.StripeAuthenticationError ||
    error instanceof sdk.errors.StripePermissionError
  ) {
    return new AppError('UPSTREAM_UNAVAILABLE', detail, { retryable: false, cause: error });
  }
  if (error instanceof sdk.errors.StripeSignatureVerificationError) {
    return new AppError('UNAUTHENTICATED', `webhook signature verification failed: ${error.message}`, {
      retryable: false,
      cause: error,
    });
  }
  // StripeConnectionError (network, timeout), StripeAPIError (5xx, 409 idempotency key in use), anything else.
  return new AppError('UPSTREAM_UNAVAILABLE', detail, { retryable: true, cause: error });
}

/** Whether a failed charge request may have been carried out: the caller must reconcile, never re-charge. */
export function isAmbiguous(error: Stripe.errors.StripeError): boolean {
  const sdk = loadStripe();
  if (error instanceof sdk.errors.StripeConnectionError) return true;
  if (error instanceof sdk.errors.StripeAPIError) return true;
  return error.statusCode === undefined || error.statusCode >= 500 || error.statusCode === 409;
}

/** The SDK's client, made on first use (see loadStripe). */
export type Client = () => Stripe;

/** Runs one SDK call; whatever it throws comes out as `AppError` (see toAppError). */
export async function call<T>(action: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toAppError(error, action);
  }
}
