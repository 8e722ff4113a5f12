import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from './config.ts';
import { migrations } from './migrations/index.ts';
import { readSchemaSnapshot } from './migrations/snapshot.ts';
import { createLogMailer, createSmtpMailer, type Mailer } from './integrations/mail/index.ts';
import {
  createAccountService,
  setPasswordHashingConcurrency,
  type AccountService,
} from './modules/accounts/index.ts';
import { createAuthService, createThrottles, type AuthService } from './modules/auth/index.ts';
import { createCompanyService, findCompanyContact, type CompanyService } from './modules/companies/index.ts';
import { createNotificationService, type NotificationService } from './modules/notifications/index.ts';
import { createPaymentService, type PaymentService } from './modules/payments/index.ts';
import { createProductService } from './modules/products/index.ts';
import { createTemplateService } from './modules/documents/index.ts';
import { createImpactService, createRateBookService, priceRenewal } from './modules/rating/index.ts';
import { createStaffService } from './modules/staff/index.ts';
import { createErasureService, createRetentionService } from './modules/data-protection/index.ts';
import { createPolicyService, type PolicyService } from './modules/policies/index.ts';
import { createPurchaseService, createQuoteService } from './modules/quotes/index.ts';
import { createStatementService, type StatementService } from './modules/statements/index.ts';
import { createWebhookService } from './modules/webhooks/index.ts';
import {
  createDocumentService,
  createRenderPool,
  createRenderer,
  listDocumentFiles,
} from './modules/documents/index.ts';
import { countAtFaultClaimsSettled, createClaimService } from './modules/claims/index.ts';

import {
  createJourneyService,
  maintainJourneyPartitions,
  type JourneyService,
} from './modules/journeys/index.ts';
import { createUsageService } from './modules/usage/index.ts';
import { createScoreService } from './modules/scores/index.ts';
import { createMqttPositionConsumer, createTelematicsService } from './modules/telematics/index.ts';
import {
  createOfflineGeocoder,
  type Gazetteer,
  type ReverseGeocoder,
} from './integrations/geocoding/index.ts';
import { createGateways, type Gateways } from './integrations/payments/index.ts';
import { resolveAdminKey } from './admin-key.ts';
import { systemClock, type Clock } from './platform/clock.ts';
import { openConfiguredDatabase } from './configured-database.ts';
import type { DatabaseHandle } from './platform/db/database.ts';
import { createChangeFeed, type ChangeFeed } from './platform/db/change-feed.ts';
import { migrateFromSnapshot } from './platform/db/migrate.ts';
import { createMetricsRegistry } from './platform/http/observability.ts';
import { registerHousekeeping } from './platform/jobs/housekeeping.ts';
import { createJobs, type Jobs } from './platform/jobs/jobs.ts';
import type { Database } from './schema.ts';
import { createLogger } from './platform/logging.ts';
import type { Logger } from 'pino';

/** What tests (and the CLI) may replace; everything else is built from the config. */
export interface ContainerOverrides {
  readonly clock?: Clock;
  readonly database?: DatabaseHandle<Database>;
  readonly logger?: Logger;
  readonly mailer?: Mailer;
  /** Seconds between cron checks (pg-boss); tests lower it to see scheduled work quickly. */
  readonly cronIntervalSeconds?: number;
  readonly jobPollingSeconds?: number;
  /** `start` loads the geocoder in the background so no first lookup waits (default); false: at the first. */
  readonly warmGeocoder?: boolean;
}

export interface Container {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly database: DatabaseHandle<Database>;
  readonly jobs: Jobs;
  /** PostgreSQL's notifications of changed rows, which let reads be served from memory. */
  readonly changes: ChangeFeed;
  readonly metrics: Registry;
  readonly adminApiKey: string;
  readonly services: ReturnType<typeof buildServices>;
  readonly gateways: Gateways;
  /** The offline geocoder's towns and localities, for maps (GET /places). */
  readonly gazetteer: Gazetteer;
  /** Tells the container where this process listens (the sandbox gateway calls it over HTTP). */
  setListeningUrl(url: string): void;
  /**
   * Starts the background work: in the worker role, workers and schedules (the job queues themselves
   * were created with the container).
   */
  start(): Promise<void>;
  /**
   * Stops every worker loop from taking work, and waits up to SHUTDOWN_TIMEOUT_MS for the work in
   * flight; the database stays open (requests still being answered need it). Once only.
   */
  stopWorkers(): Promise<void>;
  /** `stopWorkers`, then closes the job runner, the change feed and the database. */
  close(): Promise<void>;
}

/** What the services are built from: the config and the implementations the container picked. */
interface ServiceDeps {
  readonly config: Config;
  readonly database: DatabaseHandle<Database>;
  readonly clock: Clock;
  readonly jobs: Jobs;
  readonly mailer: Mailer;
  readonly gateways: Gateways;
  readonly logger: FastifyBaseLogger;
  readonly metrics: Registry;
  readonly geocoder: ReverseGeocoder;
  readonly changes: ChangeFeed;
}

/** Every module's service, built in the order their dependencies need. */
function buildServices(deps: ServiceDeps) {
  const { db } = deps.database;
  const { clock } = deps;
  const companies = createCompanyService({ db, clock });
  const notifications = buildNotifications(deps);
  const accounts = createAccountService({ db, clock });
  const billing = buildBillingServices(deps, notifications);
  const policyServices = buildPolicyServices(deps, { accounts, notifications, ...billing });
  const renderPool = createRenderPool(deps.config.documentRenderThreads);
  const documents = createDocumentService({
    db,
    clock,
    logger: deps.logger,
    notifications,
    // Documents read what they state through the owners' services, and are laid out on render threads.
    render: createRenderer(
      {
        policy: (tenant, reference) => policyServices.policies.get(tenant, reference),
        statement: (tenant, id) => billing.statements.get(tenant, id),
        journey: (tenant, id) => billing.journeys.get(tenant, id),
      },
      renderPool.render,
    ),
    makeConcurrency: renderPool.concurrency,
    closeRenderer: renderPool.close,
  });
  const devicesAndWebhooks = buildDeviceAndWebhookServices(deps, billing.journeys, notifications);
  const access = buildAccessServices(deps, { accounts, companies, notifications, ...policyServices });
  const dataProtection = buildDataProtectionServices(deps, access.auth);
  const purchaseDeps = { ...deps, db, accounts, ...access, ...billing, ...policyServices };
  return {
    ...access,
    ...dataProtection,
    companies,
    notifications,
    accounts,
    payments: billing.payments,
    ...policyServices,
    quotePurchases: createPurchaseService(purchaseDeps),
    rateBooks: createRateBookService({ db, clock }),
    impact: createImpactService({ db, clock }),
    journeys: billing.journeys,
    usage: billing.usage,
    ...devicesAndWebhooks,
    statements: billing.statements,
    templates: createTemplateService({ db, clock }),
    documents,
    claims: createClaimService({
      db,
      clock,
      geocoder: deps.geocoder,
      notifications,
      logger: deps.logger,
      jobs: deps.jobs,
      changes: deps.changes,
    }),
    scores: createScoreService({ db, clock, jobs: deps.jobs, notifications, logger: deps.logger }),
  };
}

/**
 * The web app's address for a company's policyholders (the welcome email's link): it carries the
 * company's public client id, which the app needs to sign in where the deployment pins no company
 * (APP_CLIENT_ID, DEFAULT_CLIENT_ID unset). Undefined when the service does not know its own address.
 */
async function webAppUrl(
  deps: ServiceDeps,
  trx: Parameters<typeof findCompanyContact>[0],
  scope: { companyId: string; environment: string },
  page = '',
): Promise<URL | undefined> {
  const base = deps.config.publicBaseUrl ?? deps.gateways.sandboxBaseUrl();
  const company = await findCompanyContact(trx, scope.companyId);
  if (base === undefined || company === undefined) return undefined;
  const url = new URL(`${base.replace(/\/+$/, '')}/app/${page}`);
  url.searchParams.set('client_id', company.clientId);
  url.searchParams.set('environment', scope.environment);
  return url;
}

/** Emails through the outbox: their documents attached where a company chose it, their links to the web app. */
function buildNotifications(deps: ServiceDeps): NotificationService {
  return createNotificationService({
    db: deps.database.db,
    clock: deps.clock,
    jobs: deps.jobs,
    mailer: deps.mailer,
    loadAttachments: async (trx, refs) =>
      (
        await listDocumentFiles(
          trx,
          refs.map((r) => ({ documentId: r.document_id, policyId: r.policy_id })),
        )
      ).map((file) => ({ filename: file.fileName, content: file.content, contentType: 'application/pdf' })),
    // The policyholders' app lists a policy's documents at /app/documents?policy=<reference>.
    documentLinks: async (trx, scope) => {
      const page = await webAppUrl(deps, trx, scope, 'documents');
      if (page === undefined) return undefined;
      return (policyReference) => {
        const url = new URL(page);
        url.searchParams.set('policy', policyReference);
        return url.toString();
      };
    },
  });
}

/** Card payments, journeys and the usage they count, and the statements that bill them. */
function buildBillingServices(deps: ServiceDeps, notifications: NotificationService) {
  const { db } = deps.database;
  const { clock, jobs, logger } = deps;
  const payments = createPaymentService({
    db,
    clock,
    jobs,
    gateways: deps.gateways,
    notifications,
    logger,
    retryDays: deps.config.paymentRetryDays,
    leaseMs: deps.config.paymentLeaseSeconds * 1000,
    publishableKey: deps.config.app.stripePublishableKey,
  });
  const usage = createUsageService({ db, clock, notifications, logger });
  const journeys = createJourneyService({
    db,
    prepared: (statement, values) => deps.database.prepared(statement, values),
    clock,
    geocoder: deps.geocoder,
    afterStored: (tenant, journey) => usage.afterJourney(tenant, journey),
  });
  const statements = createStatementService({
    db,
    clock,
    jobs,
    notifications,
    payments,
    logger,
    billingRunAt: deps.config.billingRunAt,
    metrics: deps.metrics,
    journeys,
  });
  return { payments, usage, journeys, statements };
}

/** Products, and the policies that name them. */
function buildPolicyServices(
  deps: ServiceDeps,
  uses: {
    accounts: AccountService;
    notifications: NotificationService;
    payments: PaymentService;
    statements: StatementService;
  },
) {
  const { db } = deps.database;
  const { clock } = deps;
  const products = createProductService({ db, clock });
  const quotes = createQuoteService({
    db,
    prepared: (statement, values) => deps.database.prepared(statement, values),
    clock,
    jobs: deps.jobs,
    notifications: uses.notifications,
    throttles: createThrottles(db, clock),
  });
  const policies = createPolicyService({
    db,
    clock,
    quotes: quotes.bindingHooks,
    checkProduct: (trx, tenant, reference) => products.checkReference(trx, tenant, reference),
    describeProduct: (trx, tenant, reference, at) => products.summaryAt(trx, tenant, reference, at),
    // Automatic renewals of policies rated by Milepost are priced by their rate book (ICOBS 6B.2).
    priceRenewal,
    // An at-fault claim settled in a term steps back the no-claims years at renewal.
    atFaultClaims: countAtFaultClaimsSettled,
    jobs: deps.jobs,
    accounts: uses.accounts,
    notifications: uses.notifications,
    payments: uses.payments.hooks,
    onEnded: (trx, tenant, ended) => uses.statements.scheduleFinal(trx, tenant, ended),
    // The welcome email's link to the web app carries the company's public client id, which the app
    // needs to sign in where the deployment pins no company (APP_CLIENT_ID, DEFAULT_CLIENT_ID unset).
    signInUrl: async (trx, tenant) => (await webAppUrl(deps, trx, tenant))?.toString(),
    // Only processes that serve reads keep policies in memory; a worker needs no LISTEN connection.
    ...(deps.config.role === 'worker' ? {} : { changes: deps.changes }),
  });
  return { products, policies, quotes };
}

/** Devices and their trips, and the webhooks that tell companies what happened. */
function buildDeviceAndWebhookServices(
  deps: ServiceDeps,
  journeys: JourneyService,
  notifications: NotificationService,
) {
  const { db } = deps.database;
  const { clock, logger, config } = deps;
  const telematics = createTelematicsService({
    db,
    prepared: (statement, values) => deps.database.prepared(statement, values),
    clock,
    positionRetentionDays: config.positionRetentionDays,
    journeys,
    jobs: deps.jobs,
    notifications,
    tripEndIdleMinutes: config.tripEndIdleMinutes,
    logger,
  });
  const webhooks = createWebhookService({
    db,
    clock,
    notifications,
    allowPrivate: config.webhooksAllowPrivate,
    retryScheduleMs: config.webhookRetryScheduleMs,
    pollIntervalMs: config.webhookPollIntervalMs,
    endpointConcurrency: config.webhookEndpointConcurrency,
    eventRetentionDays: config.eventRetentionDays,
    logger,
  });
  return { telematics, webhooks };
}

/** Policyholder login and staff sessions. */
function buildAccessServices(
  deps: ServiceDeps,
  uses: {
    accounts: AccountService;
    companies: CompanyService;
    policies: PolicyService;
    notifications: NotificationService;
  },
) {
  const { db } = deps.database;
  const { clock, config } = deps;
  const auth = createAuthService({
    db,
    clock,
    accounts: uses.accounts,
    companies: uses.companies,
    policies: uses.policies,
    notifications: uses.notifications,
    settings: {
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      refreshTokenTtlDays: config.refreshTokenTtlDays,
      loginSessionTtlSeconds: config.loginSessionTtlSeconds,
      signingKeyRotationDays: config.signingKeyRotationDays,
      issuer: config.publicBaseUrl ?? 'milepost',
    },
  });
  const staff = createStaffService({
    db,
    clock,
    settings: { sessionIdleHours: config.staffSessionIdleHours, issuer: config.app.brandName },
  });
  return { auth, staff };
}

/** Erasure of a policyholder, and the retention of detailed routes. */
function buildDataProtectionServices(deps: ServiceDeps, auth: AuthService) {
  const { db } = deps.database;
  const erasure = createErasureService({
    db,
    clock: deps.clock,
    retentionAfterEndDays: deps.config.retentionAfterEndDays,
    forgetTokenSubjects: auth.forgetTokenSubjects,
  });
  const retention = createRetentionService({ db, routeRetentionDays: deps.config.routeRetentionDays });
  return { erasure, retention };
}

/**
 * Builds every implementation the config chooses: PGlite or PostgreSQL (DATABASE_URL), SMTP or the
 * outbox log (SMTP_URL), positions over MQTT or not (MQTT_URL). Card payments are the exception: Stripe
 * or the built-in sandbox depends on each payment's environment, so the gateways built here
 * (integrations/payments/gateways.ts) pick one per call, from the settings passed to them.
 */
export async function createContainer(
  config: Config,
  overrides: ContainerOverrides = {},
): Promise<Container> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? systemClock;
  const database = overrides.database ?? (await openConfiguredDatabase(config));
  const { applied, fromSnapshot } = await migrateFromSnapshot(
    database.db as never,
    migrations,
    await readSchemaSnapshot(),
    logger,
  );
  if (fromSnapshot) logger.info({ migrations: applied }, 'created the schema from its snapshot');
  else if (applied.length > 0) logger.info({ migrations: applied }, 'applied migrations');

  const runWorkers = config.role !== 'api';
  setPasswordHashingConcurrency(config.passwordHashingConcurrency);
  const jobs = createJobRunner(database, runWorkers, overrides, logger);
  const mailer = overrides.mailer ?? createConfiguredMailer(config, logger);
  const gateways = createGateways({
    stripeSecretKey: config.stripeSecretKey,
    stripeApiBase: config.stripeApiBase,
    stripeWebhookSecret: config.stripeWebhookSecret,
    sandboxApiBase: config.sandboxStripeApiBase,
    clock,
  });
  // One geocoder per process: its index takes ~21 MB (RSS +35 MB once loaded, in ~130 ms).
  const geocoder = createOfflineGeocoder();
  const metrics = createMetricsRegistry();
  // Policy reads are kept in memory and dropped on PostgreSQL's notifications, and a crash's commit
  // wakes the claims worker (one connection, opened by the first subscriber). Its LISTEN connection may
  // go elsewhere than the pool: straight to PostgreSQL behind PgBouncer.
  const changes = createChangeFeed(
    {
      pglite: database.pglite,
      connectionString: config.databaseListenUrl ?? database.connectionString,
    },
    logger,
  );
  const services = buildServices({
    config,
    database,
    clock,
    jobs,
    mailer,
    gateways,
    logger,
    geocoder,
    metrics,
    changes,
  });
  const housekeeping = registerHousekeepingTasks(jobs, database, clock, services);
  const adminApiKey = await resolveAdminKey(config, logger);
  // Positions over MQTT (MQTT_URL): consumed where workers run, beside POST /telematics/positions.
  const positionsOverMqtt =
    runWorkers && config.mqttUrl !== undefined
      ? createMqttPositionConsumer({
          url: config.mqttUrl,
          clientId: config.mqttClientId,
          connections: config.mqttConnections,
          shareGroup: config.mqttShareGroup,
          ingest: (tenant, batch) => services.telematics.ingest(tenant, batch),
          recordCrash: (tenant, input, body) => services.telematics.recordCrash(tenant, input, body),
          resolveTenant: (clientId, environment) => services.companies.identify(clientId, environment),
          logger,
          metrics,
        })
      : undefined;
  // NOTE: part of the migration step, before any process serves: every queue exists before the first
  // request can enqueue into it (an API process that listened first answered a new database's first
  // POST /policys 500 "Queue notifications.send-email does not exist" while its queues were made).
  await jobs.start();
  let stopping: Promise<void> | undefined;
  const stopLoops = async (): Promise<void> => {
    // NOTE: every loop stops taking work at once and shares the one SHUTDOWN_TIMEOUT_MS. One after
    // another, each given the whole timeout, a webhook receiver that did not answer used it all, the
    // job runner took new jobs meanwhile, and the process's forced exit (SHUTDOWN_TIMEOUT_MS + 5 s)
    // came before the job runner had failed its jobs in flight for another worker to retry: they
    // waited for their expiry instead (10 minutes for an email).
    // MQTT messages and webhook attempts in flight commit, are acknowledged or record their result
    // while the database is open; jobs can still be enqueued until `close` closes the job runner.
    services.payments.stopWorkers();
    const timeoutMs = config.shutdownTimeoutMs;
    await Promise.all([
      positionsOverMqtt?.stop(timeoutMs),
      services.telematics.stopWorkers(timeoutMs),
      services.webhooks.stopWorkers(timeoutMs),
      services.documents.stopWorkers(timeoutMs),
      services.claims.stopWorkers(timeoutMs),
      jobs.stopWorking(timeoutMs),
    ]);
  };

  return {
    config,
    clock,
    logger,
    database,
    jobs,
    changes,
    metrics,
    adminApiKey,
    services,
    gateways,
    gazetteer: geocoder,
    setListeningUrl: (url) => {
      gateways.setListeningUrl(url);
    },
    async start() {
      // The geocoder loads in the background, so neither the first journey nor the first crash's draft
      // claim (a worker's, 2.4 s under load when it loaded on first use) waits; a failure is logged
      // here, and the next lookup tries again.
      if (overrides.warmGeocoder !== false)
        void geocoder.warm().catch((error: unknown) => {
          logger.error({ err: error }, 'the reverse geocoder could not load its data');
        });
      if (runWorkers) {
        await housekeeping.register();
        const { notifications, policies, quotes, quotePurchases, payments, statements, webhooks } = services;
        const first = [notifications, policies, quotes, quotePurchases, payments, statements, webhooks];
        for (const module of first) await module.registerWorkers();
        await positionsOverMqtt?.start();
        const { telematics, documents, claims, scores } = services;
        for (const module of [telematics, documents, claims, scores]) await module.registerWorkers();
      }
    },
    stopWorkers() {
      return (stopping ??= stopLoops());
    },
    async close() {
      await (stopping ??= stopLoops());
      await jobs.stop(0);
      await changes.close();
      mailer.close();
      await database.close();
    },
  };
}

/** pg-boss in the same database; its workers run only where `runWorkers` (roles all and worker). */
function createJobRunner(
  database: DatabaseHandle<Database>,
  runWorkers: boolean,
  overrides: ContainerOverrides,
  logger: Logger,
): Jobs {
  return createJobs({
    connectionString: database.connectionString,
    pglite: database.pglite,
    runWorkers,
    cronIntervalSeconds: overrides.cronIntervalSeconds,
    pollingIntervalSeconds: overrides.jobPollingSeconds,
    onError: (error) => {
      logger.error({ err: error }, 'job runner error');
    },
  });
}

/**
 * SMTP when SMTP_URL is set; else emails are logged and kept in the outbox, which a PostgreSQL
 * deployment (production) is warned of.
 */
function createConfiguredMailer(config: Config, logger: Logger): Mailer {
  if (config.smtpUrl !== undefined) return createSmtpMailer(config.smtpUrl, config.emailFrom);
  if (config.databaseUrl !== undefined)
    logger.warn(
      'SMTP_URL is unset: emails are not sent, only kept in the outbox (GET /admin/emails); set SMTP_URL in production',
    );
  return createLogMailer(logger);
}

/** The hourly housekeeping job's tasks: expired rows purged, partitions kept, routes coarsened. */
function registerHousekeepingTasks(
  jobs: Jobs,
  database: DatabaseHandle<Database>,
  clock: Clock,
  services: ReturnType<typeof buildServices>,
) {
  return registerHousekeeping(jobs, database.db, clock, [
    (now) => services.auth.purgeExpired(now),
    (now) => services.staff.purgeSessions(now),
    (now) => services.webhooks.purgeDeliveryLog(now),
    // Positions' monthly partitions: next months created ahead, months past retention dropped.
    async (now) => (await services.telematics.maintainPartitions(now)).deletedDefaultRows,
    // Events' monthly partitions: months created ahead, delivered months past EVENT_RETENTION_DAYS dropped.
    async (now) => (await services.webhooks.maintainEventPartitions(now)).deletedDefaultRows,
    // Journeys' monthly partitions: months created ahead (journeys are kept: nothing is dropped).
    async (now) => (await maintainJourneyPartitions(database.db, now)).deletedDefaultRows,
    // Routes billed more than ROUTE_RETENTION_DAYS ago, coarsened to start → end in bounded batches:
    // hourly, a backlog drains in short runs; counted with the purged rows.
    (now) => services.retention.applyRouteRetention(now),
  ]);
}
