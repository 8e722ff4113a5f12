import createClient, { type Client } from 'openapi-fetch';
import { MilepostError, errorFromResponse, networkError } from './errors.ts';
import type { paths } from './openapi.ts';

export type { paths, components, operations } from './openapi.ts';

/** The typed client: `client.GET('/policys/details', …)`, each path, body and answer typed. */
export type MilepostClient = Client<paths>;

/** How each request reaches the service (`fetch` by default; tests and apps may wrap it). */
export type Fetch = (request: Request) => Promise<Response>;

export interface ClientOptions {
  /** The service's URL, e.g. `https://api.example.com` (no trailing slash needed). */
  readonly baseUrl: string;
  /** The company's public client id; leave it out where the service sets DEFAULT_CLIENT_ID. */
  readonly clientId?: string | undefined;
  /** `sandbox` (the service's default when absent), `production` or `mock`. */
  readonly environment?: 'sandbox' | 'production' | 'mock' | undefined;
  readonly fetch?: Fetch | undefined;
}

/** A client that sends the company's `client_id` and `environment` with every request. */
export function createMilepostClient(options: ClientOptions): MilepostClient {
  const headers: Record<string, string> = {};
  if (options.clientId !== undefined && options.clientId !== '') headers['client_id'] = options.clientId;
  if (options.environment !== undefined) headers['environment'] = options.environment;
  const send: Fetch = options.fetch ?? ((request) => globalThis.fetch(request));
  return createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), headers, fetch: send });
}

/**
 * The data of an answer, or its error thrown as a `MilepostError` (a human sentence in `message`).
 * `await unwrap(client.GET('/policys/details'))`.
 */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let answer: { data?: T; error?: unknown; response: Response };
  try {
    answer = await call;
  } catch (cause) {
    if (cause instanceof MilepostError) throw cause;
    throw networkError(cause);
  }
  const { data, error, response } = answer;
  if (!response.ok || error !== undefined) throw errorFromResponse(response, error);
  return data as T;
}
