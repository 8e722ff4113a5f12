import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Container } from './container.ts';
import { withCurrentExampleDates } from './openapi-examples.ts';
import { installCors, installRequestIdHeader } from './platform/http/cors.ts';
import { createSchemaCompilers, type SchemaCompilers } from './platform/http/schema-compilers.ts';
import { createAdminAuth } from './platform/http/admin-auth.ts';
import { installDocs } from './platform/http/docs.ts';
import {
  installObservability,
  installRequestMetrics,
  installRequestTracing,
} from './platform/http/observability.ts';
import { createClientErrorHandler, installProblemHandling, sendProblem } from './platform/http/problem.ts';
import { installInputSafety } from './platform/http/input-safety.ts';
import { installWebApp, type WebAppOptions } from './platform/http/web-app.ts';
import {
  asTenant,
  companyRoutes,
  createClientAuth,
  currentCompanyRoutes,
  type DataEnvironment,
  type Tenant,
} from './modules/companies/index.ts';
import { policyRoutes, policySearchRoutes } from './modules/policies/index.ts';
import { statementRoutes } from './modules/statements/index.ts';
import { documentRoutes } from './modules/documents/index.ts';
import { claimRoutes } from './modules/claims/index.ts';
import {
  authRoutes,
  clientOrPolicyholder,
  createPolicyholderAuth,
  policyholderOf,
} from './modules/auth/index.ts';
import { installMockPages } from './modules/demo/index.ts';
import { productRoutes } from './modules/products/index.ts';
import { templateRoutes } from './modules/documents/index.ts';
import { impactRoutes, rateBookRoutes, renewalPriceRoutes } from './modules/rating/index.ts';
import { quoteRoutes } from './modules/quotes/index.ts';
import { reportRoutes } from './modules/reports/index.ts';
import { erasureRoutes, subjectAccessRoutes } from './modules/data-protection/index.ts';
import { installStaffAccess, SESSION_COOKIE, staffRoutes } from './modules/staff/index.ts';
import { openApiWebhooks, webhookRoutes } from './modules/webhooks/index.ts';
import { notificationRoutes } from './modules/notifications/index.ts';
import { journeyRoutes } from './modules/journeys/index.ts';
import { placeRoutes } from './integrations/geocoding/index.ts';
import { usageRoutes } from './modules/usage/index.ts';
import { disputeRoutes, scoreRoutes } from './modules/scores/index.ts';
import { minimisationRoutes, telematicsRoutes } from './modules/telematics/index.ts';
import { directDebitRoutes, paymentRoutes, stripeWebhookRoutes } from './modules/payments/index.ts';
import {
  createKyselySandboxStore,
  stripeSandboxPlugin,
  type SandboxTables,
} from './integrations/payments/index.ts';
import type { Kysely } from 'kysely';
import type { AppSettings, Config } from './config.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The release, from package.json: shown at `GET /` and in the OpenAPI document. */
const SERVICE_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/**
 * Request ids: a random per-process prefix and a counter. Unique across instances and restarts, and
 * cheaper on the hot path than a UUID per request.
 */
function requestIds(): () => string {
  const prefix = randomBytes(6).toString('hex');
  let counter = 0;
  return () => `${prefix}-${(++counter).toString(36)}`;
}
const nextRequestId = requestIds();

/** Response headers a browser page may read. */
const EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'location'];
/** Longer URLs answer 414 (no route of this service needs more than a few hundred characters). */
const MAX_URL_LENGTH = 8192;

/** Each HTTP app's schema compilers, for `compileValidators`. */
const schemaCompilers = new WeakMap<FastifyInstance, SchemaCompilers>();

/**
 * Compiles every route validator of `app` not yet used, and answers how many it compiled; throws what
 * Ajv throws for a schema it cannot compile. For the test that every schema compiles: the service
 * itself compiles each on first use.
 */
export function compileValidators(app: FastifyInstance): number {
  return schemaCompilers.get(app)?.compileValidators() ?? 0;
}

/**
 * What the web app may load from elsewhere: the tile server's images when MAP_TILE_URL is set, and in
 * production with a publishable key, Stripe.js and its frames (card details never touch this service).
 */
function webAppOrigins(app: AppSettings): NonNullable<WebAppOptions['allow']> {
  const tiles = app.mapTileUrl === undefined ? [] : [tileOrigin(app.mapTileUrl)];
  const stripe = app.environment === 'production' && app.stripePublishableKey !== undefined;
  return {
    img: tiles,
    script: stripe ? ['https://js.stripe.com'] : [],
    frame: stripe ? ['https://js.stripe.com', 'https://hooks.stripe.com'] : [],
    connect: stripe ? ['https://api.stripe.com'] : [],
  };
}

/** `https://{s}.tile.example.org/{z}/{x}/{y}.png` → `https://*.tile.example.org` (a CSP source). */
const tileOrigin = (template: string): string =>
  (/^https?:\/\/[^/]+/.exec(template)?.[0] ?? template).replace(/\{[a-z]+\}/g, '*');

/**
 * A worker's HTTP server (ROLE=worker): `/healthz`, `/readyz` and `/metrics` on its PORT, and a 404
 * problem for anything else. The MQTT consumer, the job queues and the billing runs record their metrics
 * in the worker's own registry, which only the worker itself can serve.
 */
export async function buildWorkerApp(container: Container): Promise<FastifyInstance> {
  const logger: FastifyBaseLogger = container.logger;
  const app = Fastify({
    loggerInstance: logger,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : nextRequestId();
    },
    return503OnClosing: true,
    clientErrorHandler: createClientErrorHandler(nextRequestId, EXPOSED_HEADERS),
  });
  installRequestTracing(app);
  installProblemHandling(app);
  installRequestIdHeader(app);
  installRequestMetrics(app, container.metrics);
  installObservability(app, {
    ping: () => container.database.ping(),
    jobCounts: () => container.jobs.counts(),
    registry: container.metrics,
  });
  return app;
}

/**
 * The HTTP application: platform plugins, the API's documents, then every module's routes, the web apps
 * and the payment sandbox. No listening here. The steps run in this order: hooks see the routes added
 * after them, and the OpenAPI document lists routes as they were registered.
 */
export async function buildApp(container: Container): Promise<FastifyInstance> {
  const app = createHttpApp(container);
  await installPlatform(app, container);
  await installApiDocuments(app, container);
  installObservability(app, {
    ping: () => container.database.ping(),
    jobCounts: () => container.jobs.counts(),
    registry: container.metrics,
  });
  // Before the route plugins: `environment: mock` reads of the app's pages answer demo data there.
  installMockPages(app, { mockEnabled: container.config.mockEnvironment, clock: container.clock });
  // Before the route plugins too: it sees each route as it is added (roles, the audit trail).
  await app.register(cookie);
  installStaffAccess(app, {
    staff: container.services.staff,
    db: container.database.db,
    clock: container.clock,
  });
  const auth = routeAuth(container);
  await registerCompanyAndPolicyRoutes(app, container, auth);
  await registerLoginAndSetupRoutes(app, container, auth);
  await registerDrivingRoutes(app, container, auth);
  await registerBillingRoutes(app, container, auth);
  await registerDataRoutes(app, container, auth);
  await installWebApps(app, container.config);
  await installStripeSandbox(app, container);
  return app;
}

type HttpApp = ReturnType<typeof createHttpApp>;

/** The Fastify instance and its options: logging, limits, request ids, schema compilers, proxies. */
function createHttpApp(container: Container) {
  const { config } = container;
  // Typed as Fastify's logger interface, so the instance keeps Fastify's default logger type.
  const logger: FastifyBaseLogger = container.logger;
  const compilers = createSchemaCompilers();
  const app = Fastify({
    // Fastify's own request logging ('incoming request', 'request completed', route log levels),
    // through the service's logger and its redaction.
    loggerInstance: logger,
    bodyLimit: config.bodyLimitBytes,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : nextRequestId();
    },
    return503OnClosing: true,
    // Room for long URLs to reach the 414 check rather than Node's 431 for the whole header block.
    http: { maxHeaderSize: 64 * 1024 },
    clientErrorHandler: createClientErrorHandler(nextRequestId, EXPOSED_HEADERS),
    // A path segment beyond the router's limit or one that is not valid percent-encoding: answered
    // before any hook runs, so the headers every response carries are set here.
    frameworkErrors: (error, request, reply) => {
      void reply
        .header('x-request-id', request.id)
        .header('access-control-allow-origin', '*')
        .header('access-control-expose-headers', EXPOSED_HEADERS.join(', '));
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
        void sendProblem(reply, 'URI_TOO_LONG', 'A path segment of the URL is longer than 100 characters');
      else void sendProblem(reply, 'MALFORMED_URL', `The URL cannot be read: ${error.message}`);
    },
    schemaController: {
      compilersFactory: {
        buildValidator: compilers.buildValidator as never,
        buildSerializer: compilers.buildSerializer,
      },
    },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true } },
    routerOptions: { ignoreTrailingSlash: true },
    // The client address (login throttling) comes from X-Forwarded-For only behind trusted proxies.
    trustProxy: config.trustProxy,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorateRequest('tenant', null);
  app.decorateRequest('environment', 'sandbox');
  app.decorateRequest('policyholder', null);
  app.decorateRequest('actor', null);
  schemaCompilers.set(app, compilers);
  return app;
}

/** What every response goes through: problem+json, request ids, CORS, input checks, request metrics. */
async function installPlatform(app: HttpApp, container: Container): Promise<void> {
  // First: its span covers every other hook.
  installRequestTracing(app);
  installProblemHandling(app);
  installRequestIdHeader(app);
  await installCors(app, { exposedHeaders: EXPOSED_HEADERS, maxAgeSeconds: 600 });
  // After the headers every response carries, so that its errors carry them too.
  installInputSafety(app, MAX_URL_LENGTH);
  installRequestMetrics(app, container.metrics);
}

/** The OpenAPI document (`/openapi.json`), its reference pages at /docs, and the service's index at `/`. */
async function installApiDocuments(app: HttpApp, container: Container): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      // Every event type the service sends to webhook endpoints, with its payload schema.
      webhooks: openApiWebhooks() as never,
      info: {
        title: 'Milepost API',
        version: SERVICE_VERSION,
        description:
          'Pay-by-mile motor insurance: policies and their versions, policyholder login, journeys, statements and card payments. Errors are `application/problem+json` (RFC 9457) with a stable `code`.',
      },
      components: { securitySchemes: securitySchemes() },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json['$id'] === 'string' ? json['$id'] : `def-${i}`,
    },
  });
  installDocs(app, '/openapi.json');
  // The docs' curl examples carry a host: PUBLIC_BASE_URL, else the host the document was asked from.
  app.get('/openapi.json', { schema: { hide: true } }, async (request) => ({
    ...withCurrentExampleDates(app.swagger(), container.clock.now()),
    servers: [{ url: container.config.publicBaseUrl ?? `${request.protocol}://${request.host}` }],
  }));
  app.get(
    '/',
    {
      schema: {
        operationId: 'index',
        tags: ['service'],
        summary: 'What this service is, and where to start',
        response: {
          200: Type.Object({
            name: Type.String(),
            version: Type.String(),
            links: Type.Record(Type.String(), Type.String()),
          }),
        },
      },
    },
    async () => ({
      name: 'Milepost API',
      version: SERVICE_VERSION,
      links: { docs: '/docs', openapi: '/openapi.json', health: '/healthz', ready: '/readyz' },
    }),
  );
}

/** How the OpenAPI document names each way of authenticating (a new object for each app). */
const securitySchemes = () =>
  ({
    adminKey: { type: 'http', scheme: 'bearer', description: 'ADMIN_API_KEY, for /admin routes.' },
    clientId: {
      type: 'apiKey',
      in: 'header',
      name: 'client_id',
      description: 'The company’s public client id.',
    },
    clientSecret: {
      type: 'apiKey',
      in: 'header',
      name: 'client_secret',
      description:
        'Production or sandbox secret, matching the `environment` header (absent = sandbox). Proxies such as nginx drop headers with underscores unless `underscores_in_headers on` is set.',
    },
    staffSession: {
      type: 'apiKey',
      in: 'cookie',
      name: SESSION_COOKIE,
      description:
        'A staff member signed in at /console/ (POST /staff/session). Where a route takes the admin key or client credentials, the session stands in for them within its role (viewer, operations, admin); with client routes the `client_id` and `environment` headers name the company. State-changing requests also send the session’s `x-csrf-token`.',
    },
    policyholderToken: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'Access token from POST /auth/token.',
    },
  }) as const;

/** The authentication hooks the route plugins take. */
function routeAuth(container: Container) {
  const { config } = container;
  const clientAuth = createClientAuth(container.services.companies, config.mockEnvironment);
  const policyholderAuth = createPolicyholderAuth(container.services.auth, config.mockEnvironment);
  return {
    adminAuth: createAdminAuth(container.adminApiKey),
    clientAuth,
    policyholderAuth,
    // Payments, device and statement reads serve clients and a policyholder's own policies alike.
    policyholders: {
      authenticate: clientOrPolicyholder(clientAuth(), policyholderAuth()),
      ownsPolicy: async (tenant: Tenant, userId: string, reference: string) =>
        (await container.services.policies.referencesOf(tenant, userId)).includes(reference),
    },
  };
}

type RouteAuth = ReturnType<typeof routeAuth>;

/** Companies and their staff, and policies. */
async function registerCompanyAndPolicyRoutes(
  app: HttpApp,
  container: Container,
  auth: RouteAuth,
): Promise<void> {
  const { services } = container;
  const { adminAuth, clientAuth } = auth;
  await app.register(companyRoutes({ companies: services.companies, adminAuth }));
  await app.register(currentCompanyRoutes({ companies: services.companies, clientAuth }));
  await app.register(
    staffRoutes({
      staff: services.staff,
      companies: services.companies,
      db: container.database.db,
      adminAuth,
    }),
  );
  await app.register(policyRoutes({ policies: services.policies, clientAuth }));
  await app.register(policySearchRoutes({ db: container.database.db, adminAuth }));
}

/** Policyholder login, and what a company sets up: webhook endpoints, products, its emails. */
async function registerLoginAndSetupRoutes(
  app: HttpApp,
  container: Container,
  auth: RouteAuth,
): Promise<void> {
  const { config, services } = container;
  const { adminAuth, clientAuth } = auth;
  await app.register(
    authRoutes({
      auth: services.auth,
      clientAuth,
      policyholderAuth: auth.policyholderAuth,
      adminAuth,
      mockEnabled: config.mockEnvironment,
      clock: container.clock,
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      defaultClientId: config.defaultClientId,
    }),
  );
  await app.register(webhookRoutes({ webhooks: services.webhooks, clientAuth }));
  await app.register(productRoutes({ products: services.products, clientAuth }));
  await app.register(templateRoutes({ templates: services.templates, clientAuth }));
  await app.register(rateBookRoutes({ rateBooks: services.rateBooks, clientAuth }));
  await app.register(impactRoutes({ impact: services.impact, companies: services.companies, adminAuth }));
  await app.register(
    quoteRoutes({
      quotes: services.quotes,
      purchases: services.quotePurchases,
      companies: services.companies,
      clientAuth,
      adminAuth,
      clock: container.clock,
      defaultClientId: config.defaultClientId,
    }),
  );
  await app.register(renewalPriceRoutes({ db: container.database.db, clientAuth }));
  await app.register(notificationRoutes({ db: container.database.db, adminAuth }));
}

/** Journeys, the places that name their ends, and the devices that record them. */
async function registerDrivingRoutes(app: HttpApp, container: Container, auth: RouteAuth): Promise<void> {
  const { services } = container;
  await app.register(
    journeyRoutes({
      journeys: services.journeys,
      clientAuth: auth.clientAuth,
      policyholderAuth: { authenticate: auth.policyholderAuth(), policyholderOf },
    }),
  );
  // Open data for maps: no credentials (see the route's description).
  await app.register(placeRoutes({ gazetteer: container.gazetteer }));
  await app.register(
    minimisationRoutes({ db: container.database.db, clock: container.clock, adminAuth: auth.adminAuth }),
  );
  await app.register(
    telematicsRoutes({
      telematics: services.telematics,
      clientAuth: auth.clientAuth,
      readers: auth.policyholders,
    }),
  );
}

/** Card payments, mileage budgets, the processor's webhooks and statements. */
async function registerBillingRoutes(app: HttpApp, container: Container, auth: RouteAuth): Promise<void> {
  const { services } = container;
  const { adminAuth, clientAuth, policyholders } = auth;
  await app.register(paymentRoutes({ payments: services.payments, clientAuth, policyholders }));
  await app.register(directDebitRoutes({ payments: services.payments, policyholders, adminAuth }));
  await app.register(usageRoutes({ usage: services.usage, authenticate: policyholders.authenticate }));
  await app.register(scoreRoutes({ scores: services.scores, authenticate: policyholders.authenticate }));
  await app.register(
    disputeRoutes({
      disputes: services.scores.disputes,
      authenticate: policyholders.authenticate,
      adminAuth,
    }),
  );
  await app.register(stripeWebhookRoutes({ payments: services.payments }));
  await app.register(
    statementRoutes({
      statements: services.statements,
      companies: services.companies,
      clientAuth,
      adminAuth,
      policyholders,
    }),
  );
  await app.register(documentRoutes({ documents: services.documents, clientAuth, policyholders }));
  await app.register(claimRoutes({ claims: services.claims, clientAuth, policyholders }));
}

/** Finance reports, subject access exports and erasure. */
async function registerDataRoutes(app: HttpApp, container: Container, auth: RouteAuth): Promise<void> {
  const { adminAuth } = auth;
  await app.register(reportRoutes({ db: container.database.db, adminAuth, clock: container.clock }));
  await app.register(
    subjectAccessRoutes({
      db: container.database.db,
      adminAuth,
      clock: container.clock,
      // Cards are described by the processor: Stripe, or the built-in sandbox for the sandbox environment.
      cardDetails: (subject, paymentMethodId) =>
        container.services.payments.cardDetails(
          asTenant(subject.companyId, subject.environment as DataEnvironment),
          paymentMethodId,
        ),
    }),
  );
  await app.register(erasureRoutes({ erasure: container.services.erasure, adminAuth }));
}

/** The policyholder web app (web/app) and the staff console (web/console), built by `npm ci` (prepare). */
async function installWebApps(app: HttpApp, config: Config): Promise<void> {
  // The policyholder web app, built into web/dist/app.
  await installWebApp(app, {
    prefix: '/app/',
    root: fileURLToPath(new URL('../web/dist/app/', import.meta.url)),
    buildCommand: 'npm run build:web',
    allow: webAppOrigins(config.app),
    config: {
      client_id: config.app.clientId ?? null,
      environment: config.app.environment,
      brand_name: config.app.brandName,
      brand_colour: config.app.brandColour,
      stripe_publishable_key: config.app.stripePublishableKey ?? null,
      map_tile_url: config.app.mapTileUrl ?? null,
    },
  });
  // The staff console, from the same build.
  await installWebApp(app, {
    prefix: '/console/',
    root: fileURLToPath(new URL('../web/dist/console/', import.meta.url)),
    buildCommand: 'npm run build:web',
    allow: { img: config.app.mapTileUrl === undefined ? [] : [tileOrigin(config.app.mapTileUrl)] },
    config: {
      brand_name: config.app.brandName,
      environment_default: config.app.environment,
      map_tile_url: config.app.mapTileUrl ?? null,
    },
  });
}

/** The built-in Stripe-compatible sandbox: what the sandbox environment's payments talk to, over HTTP. */
async function installStripeSandbox(app: HttpApp, container: Container): Promise<void> {
  await app.register(
    stripeSandboxPlugin({
      store: createKyselySandboxStore(container.database.db as unknown as Kysely<SandboxTables>),
      clock: container.clock,
      webhook: {
        url: () => {
          const base = container.gateways.sandboxBaseUrl();
          return base === undefined ? undefined : `${base}/webhooks/stripe`;
        },
        secret: container.gateways.sandboxWebhookSecret,
      },
      // Bacs payments settle on their settlement day without anyone asking.
      settlementSweepMs: 60_000,
    }),
    { prefix: '/sandbox/stripe' },
  );
}
