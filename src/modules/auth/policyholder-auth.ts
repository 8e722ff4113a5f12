import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../platform/errors.ts';
import { environmentOf } from '../companies/index.ts';
import type { AuthService, Policyholder } from './auth-service.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `policyholderAuth`: whose token this request carries; null otherwise (and in mock). */
    policyholder: Policyholder | null;
  }
}

/** The headers of a policyholder call, as documented in OpenAPI; the hook, not Ajv, enforces them. */
export const BearerHeadersSchema = Type.Object({
  authorization: Type.Optional(
    Type.String({
      description: '`Bearer <access_token>`; the token alone, without the scheme, is accepted too.',
    }),
  ),
  environment: Type.Optional(
    Type.String({
      description:
        'When sent, must be the environment the token was issued in (`sandbox` or `production`); `mock` answers demo data without a token.',
    }),
  ),
});

/**
 * The access token of an Authorization header: `Bearer <token>` (any case), or the bare token, as some
 * clients send it. Placeholders that broken clients send (`Bearer undefined`, `null`) are no token.
 */
export function bearerToken(request: FastifyRequest): string | undefined {
  const raw = request.headers.authorization?.trim() ?? '';
  const scheme = /^bearer(?:\s+(.*))?$/is.exec(raw);
  const token = (scheme === null ? raw : (scheme[1] ?? '')).trim();
  return token === '' || token === 'undefined' || token === 'null' ? undefined : token;
}

export interface PolicyholderAuthOptions {
  /** Let `environment: mock` through without a token (tenant and policyholder null). */
  readonly allowMock?: boolean;
}

/**
 * Builds the bearer hook for policyholder routes: a valid access token sets `request.tenant` (the
 * token's company and environment) and `request.policyholder`. A missing, malformed, expired or
 * revoked token answers 401. An onRequest hook: it reads only headers, so a request without a valid
 * token is answered before its body is read.
 */
export function createPolicyholderAuth(auth: AuthService, mockEnabled: boolean) {
  return (options: PolicyholderAuthOptions = {}): onRequestAsyncHookHandler =>
    async function policyholderAuth(request) {
      const environment = environmentOf(request);
      if (environment === 'mock') {
        if (!mockEnabled || options.allowMock !== true) {
          throw new AppError('VALIDATION_FAILED', 'The mock environment is not available for this route', {
            errors: [{ path: '/headers/environment', message: 'mock is not available here' }],
          });
        }
        request.environment = 'mock';
        request.tenant = null;
        request.policyholder = null;
        return;
      }
      const token = bearerToken(request);
      if (token === undefined)
        throw new AppError(
          'UNAUTHENTICATED',
          'An access token is required: Authorization: Bearer <access_token>',
        );
      const header = request.headers['environment'];
      const sent = typeof header === 'string' && header.trim() !== '' ? environment : undefined;
      const holder = await auth.authenticate(token, sent);
      if (holder === undefined)
        throw new AppError(
          'INVALID_TOKEN',
          'The access token is not valid or has expired: refresh it or log in again',
        );
      request.environment = holder.tenant.environment;
      request.tenant = holder.tenant;
      request.policyholder = holder;
    };
}

export type PolicyholderAuth = ReturnType<typeof createPolicyholderAuth>;

/** The policyholder a bearer route acts for; routes that allow mock check for null first. */
export function policyholderOf(request: FastifyRequest): Policyholder {
  if (request.policyholder === null) throw new AppError('INTERNAL', 'route reached without a policyholder');
  return request.policyholder;
}

/**
 * One hook for routes that serve both clients and policyholders: a request with an Authorization
 * header and no `client_secret` is a policyholder's (apps send their public `client_id` everywhere);
 * any other is a client's. Either way `request.tenant` is set; `request.policyholder` only for tokens.
 */
export function clientOrPolicyholder(
  clientAuth: onRequestAsyncHookHandler,
  policyholderAuth: onRequestAsyncHookHandler,
): onRequestAsyncHookHandler {
  return async function clientOrPolicyholderAuth(request, reply) {
    const hasSecret =
      typeof request.headers['client_secret'] === 'string' && request.headers['client_secret'].trim() !== '';
    if (request.headers.authorization !== undefined && !hasSecret)
      await policyholderAuth.call(this, request, reply);
    else await clientAuth.call(this, request, reply);
  };
}
