import { docUrl } from './objects.ts';

/** Stripe's error object: `{ error: { type, code, decline_code, message, param, … } }`. */
export interface StripeErrorBody {
  readonly error: {
    readonly type: 'api_error' | 'card_error' | 'idempotency_error' | 'invalid_request_error';
    readonly message: string;
    readonly code?: string;
    readonly decline_code?: string;
    readonly param?: string;
    readonly doc_url?: string;
    readonly [field: string]: unknown;
  };
}

/** An answer in Stripe's error shape, thrown by the sandbox's endpoints after any state they keep is stored. */
export class StripeApiError extends Error {
  readonly status: number;
  readonly body: StripeErrorBody;
  readonly headers: Readonly<Record<string, string>>;
  constructor(
    status: number,
    error: StripeErrorBody['error'],
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(error.message);
    this.name = 'StripeApiError';
    this.status = status;
    this.body = { error };
    this.headers = headers;
  }
}

export function invalidRequest(
  message: string,
  options: { param?: string | undefined; code?: string | undefined; status?: number } = {},
): StripeApiError {
  const { param, code, status = 400 } = options;
  return new StripeApiError(status, {
    type: 'invalid_request_error',
    message,
    ...(code === undefined ? {} : { code, doc_url: docUrl(code) }),
    ...(param === undefined ? {} : { param }),
  });
}

/** A missing object: 404 when it is the path's resource, 400 naming the parameter when it was referenced. */
export function noSuch(kind: string, id: string, param?: string): StripeApiError {
  return invalidRequest(`No such ${kind}: '${id}'`, {
    code: 'resource_missing',
    param: param ?? 'id',
    status: param === undefined ? 404 : 400,
  });
}
