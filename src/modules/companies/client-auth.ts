import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../platform/errors.ts';
import type { CompanyService } from './company-service.ts';
import type { Environment, Tenant } from './tenant.ts';
import '../../platform/http/actor.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by client authentication; null in the mock environment. */
    tenant: Tenant | null;
    environment: Environment;
  }
}

/** The client headers as documented in OpenAPI; the hook, not Ajv, enforces them (so a miss is 401, not 422). */
export const ClientHeadersSchema = Type.Object({
  client_id: Type.Optional(Type.String({ description: "The calling company's public client id." })),
  client_secret: Type.Optional(
    Type.String({
      description:
        'The production secret with `environment: production`, the sandbox secret with `environment: sandbox`.',
    }),
  ),
  environment: Type.Optional(
    Type.String({
      description: '`sandbox` (the default when absent), `production` or `mock`.',
      examples: ['sandbox'],
    }),
  ),
});

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.trim() === '' ? undefined : first.trim();
};

/**
 * Whether the request sends a client secret, by the rule client authentication applies: a blank one
 * (empty or white space) is none, and the request is the client id's alone.
 */
export const sendsClientSecret = (request: FastifyRequest): boolean =>
  header(request, 'client_secret') !== undefined;

/** Reads the `environment` header; absent means sandbox, as the original service documented. */
export function environmentOf(request: FastifyRequest): Environment {
  const raw = header(request, 'environment')?.toLowerCase() ?? 'sandbox';
  if (raw === 'sandbox' || raw === 'production' || raw === 'mock') return raw;
  throw new AppError('VALIDATION_FAILED', 'The environment header must be sandbox, production or mock', {
    errors: [{ path: '/headers/environment', message: 'must be sandbox, production or mock' }],
  });
}

export interface ClientAuthOptions {
  /** Let `environment: mock` through without credentials (tenant null); otherwise it is refused. */
  readonly allowMock?: boolean;
  /** When false, a known client_id is enough and a secret is checked only if sent (POST /auth/token). */
  readonly secretRequired?: boolean;
  /**
   * The client_id of a request that sends none (DEFAULT_CLIENT_ID, POST /auth/token only): a
   * single-insurer deployment's apps then need no client id.
   */
  readonly defaultClientId?: string | undefined;
}

/**
 * Builds the one client-credential hook every client route uses, with the rules of DESIGN (Tenancy).
 * Routes run it in onRequest: it reads only headers, so a request without credentials is answered
 * before its body is read (a route's body limit is no amplifier for anonymous callers).
 */
export function createClientAuth(companies: CompanyService, mockEnabled: boolean) {
  return (options: ClientAuthOptions = {}): onRequestAsyncHookHandler =>
    async function clientAuth(request) {
      const environment = environmentOf(request);
      request.environment = environment;
      if (environment === 'mock') {
        if (!mockEnabled || options.allowMock !== true) {
          throw new AppError('VALIDATION_FAILED', 'The mock environment is not available for this route', {
            errors: [{ path: '/headers/environment', message: 'mock is not available here' }],
          });
        }
        request.tenant = null;
        return;
      }
      // A staff session (checked by the staff hook) acts for the company its console names.
      if (request.actor?.kind === 'staff') {
        const staffClientId = header(request, 'client_id');
        if (staffClientId === undefined)
          throw new AppError(
            'INVALID_CLIENT_CREDENTIALS',
            'The client_id header names the company to act for',
          );
        request.tenant = await companies.identify(staffClientId, environment);
        return;
      }
      const clientId = header(request, 'client_id') ?? options.defaultClientId;
      const clientSecret = header(request, 'client_secret');
      if (clientId === undefined)
        throw new AppError('INVALID_CLIENT_CREDENTIALS', 'The client_id header is required');
      if (clientSecret === undefined) {
        if (options.secretRequired === false) {
          request.tenant = await companies.identify(clientId, environment);
          return;
        }
        throw new AppError('INVALID_CLIENT_CREDENTIALS', 'The client_secret header is required');
      }
      request.tenant = await companies.authenticate(clientId, clientSecret, environment);
    };
}

export type ClientAuth = ReturnType<typeof createClientAuth>;

/** The tenant a client-authenticated route acts for; routes that allow mock check for null first. */
export function tenantOf(request: FastifyRequest): Tenant {
  if (request.tenant === null) throw new AppError('INTERNAL', 'route reached without a tenant');
  return request.tenant;
}
