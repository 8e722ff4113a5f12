import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../../platform/clock.ts';
import { AppError, notFound, type FieldError } from '../../platform/errors.ts';
import { jsonBodyLimitsOf } from '../../platform/http/body-limits.ts';
import { parseJsonBody, problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, sendsClientSecret, tenantOf, type ClientAuth } from '../companies/index.ts';
import { PolicyResponseSchema } from '../policies/index.ts';
import {
  AUTH_REQUEST_TYPES,
  DetailsQuerySchema,
  FIELDS_BY_TYPE,
  JwksSchema,
  RevokeRequestSchema,
  RotateKeysBodySchema,
  TokenRequestSchema,
  TokenResponseSchema,
  UserParamsSchema,
  UserSchema,
  type TokenRequest,
} from './auth-schemas.ts';
import type { AuthService } from './auth-service.ts';
import { isMockRequest, mockLoginAnswer, mockLoginBody, mockPolicyDetails, mockUser } from '../demo/index.ts';
import { BearerHeadersSchema, policyholderOf, type PolicyholderAuth } from './policyholder-auth.ts';

const TOKEN_FIELDS = ['username', 'password', 'session', 'new_password', 'code', 'refresh_token'] as const;

/** Fields a type needs that are missing, and fields it does not take: both 422, each by path. */
function fieldProblems(body: TokenRequest): FieldError[] {
  const wanted = FIELDS_BY_TYPE[body.type];
  const errors: FieldError[] = [];
  for (const field of TOKEN_FIELDS) {
    const present = body[field] !== undefined;
    if (wanted.includes(field) && !present) errors.push({ path: `/body/${field}`, message: 'is required' });
    if (!wanted.includes(field) && present)
      errors.push({ path: `/body/${field}`, message: `is not a field of ${body.type}` });
  }
  return errors;
}

const tags = ['policyholder login'];

type App = Parameters<FastifyPluginAsyncTypebox>[0];
/** Whether a request is for the mock environment (and it is switched on). */
type IsMock = (request: FastifyRequest) => boolean;

interface AuthRouteDeps {
  auth: AuthService;
  clientAuth: ClientAuth;
  policyholderAuth: PolicyholderAuth;
  adminAuth: onRequestAsyncHookHandler;
  mockEnabled: boolean;
  clock: Clock;
  accessTokenTtlSeconds: number;
  /** DEFAULT_CLIENT_ID: the company a login without a `client_id` header goes to. */
  defaultClientId?: string | undefined;
}

/** Body parsing in this plugin's scope: as everywhere, except that a mock request's body is taken as it is. */
function registerMockTolerantParsers(app: App, mock: IsMock): void {
  // NOTE: the mock environment takes any body a real client sends (a JSON body that is not JSON,
  // such as the string "[object Object]"; no content type; an unknown one). Only in this plugin's
  // scope, and only for mock requests: everywhere else a bad body stays 422 and an unknown type 415.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, parseJsonBody(body, jsonBodyLimitsOf(request)));
    } catch (error) {
      // A body beyond the limits on its shape is refused in mock too.
      if (mock(request) && error instanceof AppError && error.code === 'MALFORMED_BODY')
        done(null, body.toString('utf8'));
      else done(error as AppError, undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    if (mock(request)) done(null, typeof body === 'string' ? body : body.toString('utf8'));
    else
      done(
        new AppError(
          'UNSUPPORTED_MEDIA_TYPE',
          `Unsupported content type ${request.headers['content-type'] ?? '(none)'}`,
        ),
        undefined,
      );
  });
}

/** POST /auth/token: one step of the login flow (any body logs in, in mock). */
function registerTokenFlow(app: App, deps: AuthRouteDeps, mock: IsMock): void {
  const { auth, clientAuth } = deps;
  app.post(
    '/auth/token',
    {
      // In mock, the body is whatever arrived: it is reduced to what the mock answer needs before
      // validation, so that a missing `type` or a form body still logs in.
      preValidation: async (request) => {
        if (mock(request)) request.body = mockLoginBody(request.body, AUTH_REQUEST_TYPES);
      },
      onRequest: clientAuth({
        allowMock: true,
        secretRequired: false,
        defaultClientId: deps.defaultClientId,
      }),
      schema: {
        operationId: 'auth.token',
        tags,
        summary: 'Log in: one step of the multi-stage token flow',
        description: [
          'One endpoint for every step; `type` names it. See the state table in docs/api.md (“Policyholder login”).',
          '`USER_PASSWORD_AUTH` with the temporary password → `NEW_PASSWORD_REQUIRED` with a `session` (single use, 5 minutes); `NEW_PASSWORD_REQUIRED` → `PASSWORD_RESET`; `USER_PASSWORD_AUTH` with the personal password → `DONE` with `access_token` (15 minutes), `refresh_token` (30 days) and `expiry`. A temporary password older than 30 days answers 401 `TEMPORARY_PASSWORD_EXPIRED`.',
          '`FORGOT_PASSWORD` → `FORGOT_PASSWORD_CODE` for every username, known or not, on a temporary password or a personal one (a 6-digit code emailed; 1 hour, single use, 5 tries); `FORGOT_PASSWORD_CODE` → `PASSWORD_RESET`; `RESEND_PASSWORD` → `TEMPORARY_PASSWORD_SENT` (a new temporary password emailed; the account is back at the first step). `REFRESH_TOKEN` → `DONE` with a new pair; reusing a spent refresh token ends that login’s every session.',
          'Client credentials: `client_id` (and `environment`) identify the company; `client_secret` is checked when sent but not required, because policyholder apps run in browsers and phones and cannot keep a secret. `client_id` is required unless the deployment sets `DEFAULT_CLIENT_ID`: then a request without it logs in to that company (a single-insurer deployment’s apps need no client id).',
          'Answers never tell whether a username exists. Failures are throttled per account (after 5, a delay doubling from 1 s to 15 minutes) and per address (after 20): 429 with `Retry-After`. Setting a password ends every session of the account.',
          '`environment: mock`: no credentials; any username and password log in (`DONE`), whatever the body looks like.',
        ].join('\n\n'),
        security: [{ clientId: [] }, { clientId: [], clientSecret: [] }],
        headers: ClientHeadersSchema,
        body: TokenRequestSchema,
        response: { 200: TokenResponseSchema, ...problemResponses(401, 415, 422, 429) },
      },
    },
    async (request) => {
      if (request.environment === 'mock')
        return mockLoginAnswer(request.body, deps.clock.now(), deps.accessTokenTtlSeconds);
      const errors = fieldProblems(request.body);
      if (errors.length > 0)
        throw new AppError(
          'VALIDATION_FAILED',
          `The request is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
          { errors },
        );
      return auth.token(tenantOf(request), request.body, request.ip);
    },
  );
}

/** POST /auth/revoke: sign-out (nothing to revoke in mock). */
function registerSignOut(app: App, deps: AuthRouteDeps, mock: IsMock): void {
  const { auth, clientAuth } = deps;
  app.post(
    '/auth/revoke',
    {
      preValidation: async (request) => {
        if (mock(request)) request.body = { refresh_token: 'mock' };
      },
      onRequest: clientAuth({
        allowMock: true,
        secretRequired: false,
        defaultClientId: deps.defaultClientId,
      }),
      schema: {
        operationId: 'auth.revoke',
        tags,
        summary: 'Sign out: revoke a refresh token',
        description:
          'Ends the login the refresh token belongs to: that token, every token it was rotated into, and at once the access tokens of that login. Other logins of the account go on. Answers 204 for an unknown, expired or already revoked token too (RFC 7009), so the answer tells nothing about which tokens exist. Client credentials as for `POST /auth/token`.',
        security: [{ clientId: [] }, { clientId: [], clientSecret: [] }],
        headers: ClientHeadersSchema,
        body: RevokeRequestSchema,
        response: {
          204: Type.Null({ description: 'Revoked (or nothing to revoke).' }),
          ...problemResponses(401, 415, 422),
        },
      },
    },
    async (request, reply) => {
      if (request.environment !== 'mock') await auth.revoke(tenantOf(request), request.body.refresh_token);
      return reply.code(204).send(null);
    },
  );
}

/** GET /auth/users/:user_reference and GET /policys/details: what a login reads (demo data in mock). */
function registerPolicyholderReads(app: App, deps: AuthRouteDeps, mock: IsMock): void {
  const { auth, clientAuth, policyholderAuth } = deps;
  const holderAuth = policyholderAuth({ allowMock: true });
  const companyAuth = clientAuth();
  app.get(
    '/auth/users/:user_reference',
    {
      // The company's credentials (with the secret) reach any of its users; a policyholder's token
      // reaches only its own user. Which one applies follows from the headers sent.
      onRequest: async function userAuth(request, reply) {
        // A blank client_secret is none, as client authentication takes it.
        const hasSecret = sendsClientSecret(request);
        const hasToken = request.headers.authorization !== undefined;
        if (mock(request) || (!hasSecret && hasToken)) await holderAuth.call(this, request, reply);
        else await companyAuth.call(this, request, reply);
      },
      schema: {
        operationId: 'auth.user',
        tags,
        summary: 'Read a policyholder account (User)',
        description:
          'With client credentials (`client_id`, `client_secret`, `environment`): any user of that company and environment. With a policyholder’s access token: only that user. Anything else answers 404. `idp_status` tells the two forgot-password scenarios apart. `client_secret` and `client_secret_sandbox` are always null: secrets are shown once, at company creation, and stored only as hashes, and a policyholder must never see credentials that act for the whole company.',
        security: [{ clientId: [], clientSecret: [] }, { policyholderToken: [] }],
        params: UserParamsSchema,
        response: { 200: UserSchema, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const reference = request.params.user_reference;
      if (request.environment === 'mock') return mockUser(reference);
      if (request.policyholder !== null && request.policyholder.userReference !== reference)
        throw notFound('user');
      return auth.user(tenantOf(request), reference);
    },
  );

  app.get(
    '/policys/details',
    {
      onRequest: holderAuth,
      schema: {
        operationId: 'policies.details',
        tags,
        summary: 'The policyholder’s policy',
        description:
          'With the policyholder’s access token: the policy as `GET /policys/{policy_reference}` returns it (the bare object, with `versions`), for the current policy (the latest live one, else the latest), or the one named by `?policy_reference=`. The reference appears as top-level `policy_reference`, `policy.policy_reference` and legacy `policy.policy_ref`. Another policyholder’s policy answers 404. `environment: mock`: a deterministic demo policy with every field filled, for any Authorization or none.',
        security: [{ policyholderToken: [] }],
        headers: BearerHeadersSchema,
        querystring: DetailsQuerySchema,
        response: { 200: PolicyResponseSchema, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => {
      if (request.environment === 'mock') return mockPolicyDetails(deps.clock.now());
      return auth.details(policyholderOf(request), request.query.policy_reference);
    },
  );
}

/** GET /.well-known/jwks.json and POST /admin/signing-keys/rotate: the keys that sign access tokens. */
function registerSigningKeys(app: App, deps: AuthRouteDeps): void {
  const { auth, adminAuth } = deps;
  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        operationId: 'auth.jwks',
        tags,
        summary: 'Public keys of access tokens',
        description:
          'The Ed25519 keys (JWK, `kty: OKP`) that verify access tokens, matched by `kid`. A new key signs every 30 days (`SIGNING_KEY_ROTATION_DAYS`); a retired key stays here until every token it signed has expired.',
        response: { 200: JwksSchema },
      },
    },
    async (_request, reply) => {
      // Cacheable by shared caches, and the CORS headers depend on Origin (platform/http/cors.ts).
      void reply.header('cache-control', 'public, max-age=300').header('vary', 'Origin');
      return auth.jwks();
    },
  );

  app.post(
    '/admin/signing-keys/rotate',
    {
      onRequest: adminAuth,
      schema: {
        operationId: 'auth.rotateSigningKeys',
        tags: ['admin'],
        summary: 'Start a new access-token signing key now',
        description:
          'The new key signs from now on. Previous keys stay published until their tokens expire, unless `withdraw_previous` is true, which ends every access token they signed (refresh tokens still work).',
        security: [{ adminKey: [] }],
        body: Type.Union([RotateKeysBodySchema, Type.Null()], { description: 'Optional.' }),
        response: {
          200: Type.Object({ kid: Type.String(), withdrawn: Type.Boolean() }),
          ...problemResponses(401, 422),
        },
      },
    },
    async (request) => auth.rotateSigningKeys(request.body?.withdraw_previous === true),
  );
}

/**
 * POST /auth/token, POST /auth/revoke, GET /auth/users/:user_reference, GET /policys/details,
 * GET /.well-known/jwks.json and POST /admin/signing-keys/rotate.
 */
export function authRoutes(deps: AuthRouteDeps): FastifyPluginAsyncTypebox {
  const mock: IsMock = (request) => isMockRequest(request, deps.mockEnabled);
  return async (app) => {
    registerMockTolerantParsers(app, mock);
    registerTokenFlow(app, deps, mock);
    registerSignOut(app, deps, mock);
    registerPolicyholderReads(app, deps, mock);
    registerSigningKeys(app, deps);
  };
}
