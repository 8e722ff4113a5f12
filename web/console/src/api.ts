import type { Middleware } from 'openapi-fetch';
import { createMilepostClient, type MilepostClient } from '../../../sdk/src/client.ts';
import { errorFromResponse, MilepostError } from '../../../sdk/src/errors.ts';
import { tooManyAttempts, UNEXPECTED_FAILURE } from '../../shared/errors.ts';
import type { Tenant } from './api-types.ts';
import { takeEarlyResponse } from './early-request.ts';

/**
 * The console's typed clients of the service (the SDK's, generated from the OpenAPI document), same
 * origin: the staff cookie goes by itself.
 */
export interface ConsoleApi {
  /** Staff and admin routes. */
  readonly client: MilepostClient;
  /** A company's routes: each request carries the company's `client_id` and the environment. */
  readonly forTenant: (tenant: Tenant) => MilepostClient;
  /** The token of the current session, sent as `x-csrf-token` (undefined after signing out). */
  readonly setCsrfToken: (token: string | undefined) => void;
}

/** A problem answer's body, for its code; undefined when it has none. */
async function problemOf(response: Response): Promise<unknown> {
  if (!/json/.test(response.headers.get('content-type') ?? '')) return undefined;
  try {
    return await response.clone().json();
  } catch {
    return undefined;
  }
}

/**
 * The clients, with one middleware for all: every request that changes something carries the session's
 * CSRF token, and a 401 outside signing in (not a wrong code or password) means the session ended.
 */
export function createConsoleApi(onSessionEnded: () => void): ConsoleApi {
  let csrfToken: string | undefined;
  const session: Middleware = {
    onRequest({ request }) {
      if (!request.headers.has('accept')) request.headers.set('accept', 'application/json');
      if (request.method !== 'GET' && csrfToken !== undefined) request.headers.set('x-csrf-token', csrfToken);
      return request;
    },
    async onResponse({ request, response }) {
      if (response.status !== 401 || new URL(request.url).pathname.startsWith('/staff/session')) return;
      // A wrong code or password is the caller's to tell; any other 401 means the session is over.
      if (errorFromResponse(response, await problemOf(response)).code !== 'INVALID_CREDENTIALS')
        onSessionEnded();
    },
  };
  const clientFor = (tenant: Tenant | undefined): MilepostClient => {
    const client = createMilepostClient({
      baseUrl: window.location.origin,
      clientId: tenant?.company.client_id,
      environment: tenant?.environment,
      // The session request the entry script sent before the console loaded answers the first one.
      fetch: (request) => takeEarlyResponse(request) ?? globalThis.fetch(request),
    });
    client.use(session);
    return client;
  };
  const tenants = new Map<string, MilepostClient>();
  return {
    client: clientFor(undefined),
    forTenant(tenant) {
      const key = `${tenant.company.client_id}/${tenant.environment}`;
      let client = tenants.get(key);
      if (client === undefined) {
        client = clientFor(tenant);
        tenants.set(key, client);
      }
      return client;
    },
    setCsrfToken(token) {
      csrfToken = token;
    },
  };
}

/** A failure as a sentence for staff: the service's detail, with the fields it refused. */
export function consoleError(error: unknown): string {
  // A form the console checks itself (JSON typed into a field) names what is wrong.
  if (error instanceof SyntaxError) return error.message;
  if (!(error instanceof MilepostError)) return UNEXPECTED_FAILURE;
  if (error.code === 'RATE_LIMITED' || error.status === 429) return tooManyAttempts(error);
  const fields = error.errors.map(
    (problem) => `${problem.path.replace(/^\/body\//, '')}: ${problem.message}`,
  );
  return fields.length === 0 ? error.message : `${error.message} (${fields.join('; ')})`;
}
