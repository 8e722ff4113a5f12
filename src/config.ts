import path from 'node:path';
import { availableParallelism, hostname } from 'node:os';

export type Role = 'all' | 'api' | 'worker';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Validated, frozen configuration. Nothing but `loadConfig` reads `process.env`. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly role: Role;
  readonly logLevel: LogLevel;
  /** PostgreSQL connection string; undefined means embedded PGlite in `dataDir`. */
  readonly databaseUrl: string | undefined;
  /** PostgreSQL: a statement unanswered after this long fails with 503 (0: no bound). */
  readonly databaseQueryTimeoutMs: number;
  /**
   * Where the change feed's LISTEN connection goes (DATABASE_LISTEN_URL); undefined: DATABASE_URL. Behind
   * PgBouncer in transaction pooling, PostgreSQL itself: a LISTEN needs a session of its own.
   */
  readonly databaseListenUrl: string | undefined;
  readonly dataDir: string;
  /** Undefined in embedded mode until generated on first start (see container). */
  readonly adminApiKey: string | undefined;
  readonly mockEnvironment: boolean;
  readonly smtpUrl: string | undefined;
  readonly emailFrom: string;
  readonly publicBaseUrl: string | undefined;
  readonly stripeSecretKey: string | undefined;
  readonly stripeApiBase: string | undefined;
  readonly stripeWebhookSecret: string | undefined;
  /** Where the built-in Stripe sandbox is reached; undefined means this process's own URL. */
  readonly sandboxStripeApiBase: string | undefined;
  /** Days after a first failure on which a statement payment is retried. */
  readonly paymentRetryDays: readonly number[];
  /** How long a charge or collection in progress holds its payment before another process may replay it. */
  readonly paymentLeaseSeconds: number;
  readonly billingRunAt: string;
  readonly webhooksAllowPrivate: boolean;
  /** Delays between webhook delivery attempts, in milliseconds (`WEBHOOKS_RETRY_SCHEDULE`). */
  readonly webhookRetryScheduleMs: readonly number[];
  /** How often the worker looks for events to fan out and deliveries that are due. */
  readonly webhookPollIntervalMs: number;
  /** Worker threads the documents worker renders PDFs on (DOCUMENT_RENDER_THREADS; 0: its own thread). */
  readonly documentRenderThreads: number;
  /** Delivery attempts in flight at once to one endpoint, across every worker. */
  readonly webhookEndpointConcurrency: number;
  /**
   * Days events are kept: the worker drops a month of events once all of it is older than this and
   * none of its events waits to be fanned out or has a webhook delivery pending.
   */
  readonly eventRetentionDays: number;
  readonly bodyLimitBytes: number;
  readonly shutdownTimeoutMs: number;
  /** Policyholder login (issue 4): lifetimes of access tokens, refresh tokens and NEW_PASSWORD_REQUIRED sessions. */
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlDays: number;
  readonly loginSessionTtlSeconds: number;
  /** Staff console sessions end after this long unused. */
  readonly staffSessionIdleHours: number;
  /** Days each Ed25519 signing key signs before the next one takes over. */
  readonly signingKeyRotationDays: number;
  /** Fastify's trustProxy: whose X-Forwarded-For to believe for the client address (login throttling). */
  readonly trustProxy: boolean | string;
  /** Password hashes (argon2id) run at once in this process; the rest queue. */
  readonly passwordHashingConcurrency: number;
  /** Days raw telematics positions are kept; whole months past it are dropped by the worker. */
  readonly positionRetentionDays: number;
  /** Days after a policyholder's last policy ended before they may be erased without `force` (six years). */
  readonly retentionAfterEndDays: number;
  /** Days after a journey's statement was written that its detailed route is kept; then start → end only. */
  readonly routeRetentionDays: number;
  /** A trip ends when the vehicle has not moved for this long (TRIP_END_IDLE_MINUTES). */
  readonly tripEndIdleMinutes: number;
  /** The MQTT broker devices publish positions to (`mqtt:`, `mqtts:`, `ws:`, `wss:`); undefined: no MQTT. */
  readonly mqttUrl: string | undefined;
  /** The shared-subscription group workers split the position messages in (`$share/<group>/…`). */
  readonly mqttShareGroup: string;
  /**
   * This process's MQTT client id. It must outlive restarts: the broker keeps the session under it and
   * sends what was not acknowledged to the next process that connects with it.
   */
  readonly mqttClientId: string;
  /** Connections each consuming process opens (`{MQTT_CLIENT_ID}.{i}`), each storing one message at a time. */
  readonly mqttConnections: number;
  /**
   * The company `POST /auth/token` logs in to when a request sends no `client_id` header (a
   * single-insurer deployment's apps then need none); undefined: the header is required.
   */
  readonly defaultClientId: string | undefined;
  /** The policyholder web app at /app/ (served as `/app/config.json`); see `appConfig`. */
  readonly app: AppSettings;
  /**
   * OTEL_EXPORTER_OTLP_ENDPOINT: the OTLP/HTTP base URL traces are sent to (`/v1/traces` appended);
   * undefined: tracing is off and the OpenTelemetry SDK is not loaded.
   */
  readonly otelExporterEndpoint: string | undefined;
  /** OTEL_SERVICE_NAME: the `service.name` of this process's spans. */
  readonly otelServiceName: string;
}

/** What the policyholder web app is told at `/app/config.json`. */
export interface AppSettings {
  /** APP_CLIENT_ID; undefined: the app sends none and relies on DEFAULT_CLIENT_ID. */
  readonly clientId: string | undefined;
  readonly environment: 'sandbox' | 'production';
  readonly brandName: string;
  /** `#rrggbb`. */
  readonly brandColour: string;
  readonly stripePublishableKey: string | undefined;
  /**
   * MAP_TILE_URL: a raster tile template (`https://{s}.tile.example.org/{z}/{x}/{y}.png`) for a tiled base
   * map under the journeys' routes; undefined: the routes are drawn over an outline shipped in the app,
   * and the app makes no request off this service.
   */
  readonly mapTileUrl: string | undefined;
}

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * TRUST_PROXY: `false` (default: the socket address is the client), `true` (trust every hop), or
 * comma-separated addresses/CIDRs of the proxies to trust.
 * NOTE: `true` makes the client address the first one of X-Forwarded-For, which the client writes
 * itself wherever the proxy in front appends to the header (as most do): the addresses are the
 * setting to give there. A number of hops is not offered, since Fastify trusts none with one.
 */
function trustProxy(s: Settings): boolean | string {
  const raw = s.read('TRUST_PROXY');
  if (raw === undefined || /^(0|false|off|no)$/i.test(raw)) return false;
  if (/^(true|on|yes)$/i.test(raw)) return true;
  if (/^[\d.:a-f/,\s]+$/i.test(raw) && /[.:]/.test(raw)) return raw;
  s.problem(`TRUST_PROXY must be true, false or the proxies' addresses (got "${raw}")`);
  return false;
}

/** MQTT client ids and share group names: no topic separators or wildcards, nothing a broker may refuse. */
const MQTT_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The default MQTT client id, `milepost-<host name>`: stable across restarts of a process on one host
 * (two consuming processes on one host need MQTT_CLIENT_ID each).
 */
function defaultMqttClientId(): string {
  return `milepost-${hostname().replace(/[^A-Za-z0-9._-]/g, '-')}`.slice(0, 128);
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const ROLES: readonly Role[] = ['all', 'api', 'worker'];

/**
 * Reads every setting once and reports all problems together, each naming its variable,
 * so an operator fixes a bad deployment in one round.
 */
export function loadConfig(env: Env, cwd: string = process.cwd()): Config {
  const problems: string[] = [];
  const settings = settingsReader(env, problems);
  const config: Config = {
    ...listenSettings(settings),
    ...storageSettings(settings, cwd),
    ...authSettings(settings),
    ...mailSettings(settings),
    ...paymentSettings(settings),
    ...webhookSettings(settings),
    ...telematicsSettings(settings),
    ...retentionSettings(settings),
    ...telemetrySettings(settings),
    app: Object.freeze(webAppSettings(settings)),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** Reads settings by name, each checked: a bad value is recorded in `problems` and its fallback used. */
function settingsReader(env: Env, problems: string[]) {
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const found = allowed.find((a) => a === raw.toLowerCase());
    if (found === undefined) {
      problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
      return fallback;
    }
    return found;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (/^(1|true|on|yes)$/i.test(raw)) return true;
    if (/^(0|false|off|no)$/i.test(raw)) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const url = (name: string, protocols: readonly string[]): string | undefined => {
    const raw = read(name);
    if (raw === undefined) return undefined;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        problems.push(`${name} must start with ${protocols.join(' or ')} (got "${parsed.protocol}")`);
      }
    } catch {
      problems.push(`${name} is not a valid URL`);
    }
    return raw;
  };
  // Durations such as `5s,5m,30m,2h`: units are ms, s, m, h.
  const durationsMs = (name: string, fallback: readonly number[]): readonly number[] => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
    const parsed = raw.split(',').map((part) => {
      const match = /^(\d{1,9})(ms|s|m|h)$/.exec(part.trim());
      return match === null ? NaN : Number(match[1]) * (unitMs[match[2] ?? ''] ?? NaN);
    });
    if (parsed.length > 20 || parsed.some((ms) => !Number.isFinite(ms) || ms > 7 * 86_400_000)) {
      problems.push(
        `${name} must be up to 20 comma-separated durations such as 5s,5m,2h (units ms, s, m, h; each at most 7 days)`,
      );
      return fallback;
    }
    return Object.freeze(parsed);
  };
  const clientId = (name: string): string | undefined => {
    const raw = read(name);
    if (raw !== undefined && !/^[\w.-]{1,128}$/.test(raw))
      problems.push(`${name} must be a company's client_id (letters, digits, '_', '.', '-'; got "${raw}")`);
    return raw;
  };
  const problem = (text: string): void => {
    problems.push(text);
  };
  return { read, integer, oneOf, bool, url, durationsMs, clientId, problem };
}

type Settings = ReturnType<typeof settingsReader>;

/** Where and how this process serves: address, role, logs, request limits, proxies. */
function listenSettings(
  s: Settings,
): Pick<
  Config,
  | 'port'
  | 'host'
  | 'role'
  | 'logLevel'
  | 'publicBaseUrl'
  | 'bodyLimitBytes'
  | 'shutdownTimeoutMs'
  | 'trustProxy'
> {
  return {
    port: s.integer('PORT', 3000, 0, 65535),
    host: s.read('HOST') ?? '127.0.0.1',
    role: s.oneOf('ROLE', ROLES, 'all'),
    logLevel: s.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    publicBaseUrl: s.url('PUBLIC_BASE_URL', ['http:', 'https:']),
    bodyLimitBytes: s.integer('BODY_LIMIT_BYTES', 1_048_576, 1024, 104_857_600),
    shutdownTimeoutMs: s.integer('SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    trustProxy: trustProxy(s),
  };
}

/** The database: PostgreSQL (and where its LISTEN connection goes), or embedded PGlite in DATA_DIR. */
function storageSettings(
  s: Settings,
  cwd: string,
): Pick<Config, 'databaseUrl' | 'databaseQueryTimeoutMs' | 'databaseListenUrl' | 'dataDir'> {
  const databaseUrl = s.url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const databaseListenUrl = s.url('DATABASE_LISTEN_URL', ['postgres:', 'postgresql:']);
  if (databaseListenUrl !== undefined && databaseUrl === undefined)
    s.problem('DATABASE_LISTEN_URL needs DATABASE_URL (the embedded database has no LISTEN connection)');
  return {
    databaseUrl,
    databaseQueryTimeoutMs: s.integer('DATABASE_QUERY_TIMEOUT_MS', 30_000, 0, 3_600_000),
    databaseListenUrl,
    dataDir: path.resolve(cwd, s.read('DATA_DIR') ?? 'data'),
  };
}

/** The admin key, the mock environment, policyholder and staff sessions, password hashing. */
function authSettings(
  s: Settings,
): Pick<
  Config,
  | 'adminApiKey'
  | 'mockEnvironment'
  | 'accessTokenTtlSeconds'
  | 'refreshTokenTtlDays'
  | 'loginSessionTtlSeconds'
  | 'staffSessionIdleHours'
  | 'signingKeyRotationDays'
  | 'passwordHashingConcurrency'
  | 'defaultClientId'
> {
  const adminApiKey = s.read('ADMIN_API_KEY');
  if (adminApiKey !== undefined && adminApiKey.length < 32)
    s.problem('ADMIN_API_KEY must be at least 32 characters');
  return {
    adminApiKey,
    mockEnvironment: s.bool('MOCK_ENVIRONMENT', true),
    accessTokenTtlSeconds: s.integer('ACCESS_TOKEN_TTL_SECONDS', 900, 60, 86_400),
    refreshTokenTtlDays: s.integer('REFRESH_TOKEN_TTL_DAYS', 30, 1, 365),
    loginSessionTtlSeconds: s.integer('LOGIN_SESSION_TTL_SECONDS', 300, 60, 3600),
    staffSessionIdleHours: s.integer('STAFF_SESSION_IDLE_HOURS', 12, 1, 168),
    signingKeyRotationDays: s.integer('SIGNING_KEY_ROTATION_DAYS', 30, 1, 365),
    passwordHashingConcurrency: s.integer(
      'PASSWORD_HASHING_CONCURRENCY',
      Math.max(1, availableParallelism() - 1),
      1,
      256,
    ),
    defaultClientId: s.clientId('DEFAULT_CLIENT_ID'),
  };
}

/** `name@domain` or `Display Name <name@domain>`: what an SMTP server takes as a sender. */
const EMAIL_SENDER = /^(?:[^<>\r\n]*<[^<>@\s]+@[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+)$/;

function mailSettings(s: Settings): Pick<Config, 'smtpUrl' | 'emailFrom'> {
  const emailFrom = s.read('EMAIL_FROM') ?? 'Milepost <no-reply@milepost.invalid>';
  // NOTE: a sender without an address passes nodemailer and is refused by the SMTP server at each
  // email, so a deployment found out from emails failing one by one, hours after it started.
  if (!EMAIL_SENDER.test(emailFrom))
    s.problem(`EMAIL_FROM must be an address, or a name and <address> (got "${emailFrom}")`);
  return { smtpUrl: s.url('SMTP_URL', ['smtp:', 'smtps:']), emailFrom };
}

/** Card payments (Stripe or the sandbox), the billing run and the dunning schedule. */
function paymentSettings(
  s: Settings,
): Pick<
  Config,
  | 'stripeSecretKey'
  | 'stripeApiBase'
  | 'stripeWebhookSecret'
  | 'sandboxStripeApiBase'
  | 'paymentRetryDays'
  | 'paymentLeaseSeconds'
  | 'billingRunAt'
> {
  const stripeSecretKey = s.read('STRIPE_SECRET_KEY');
  if (stripeSecretKey !== undefined && !/^(sk|rk)_(live|test)_/.test(stripeSecretKey)) {
    s.problem(
      'STRIPE_SECRET_KEY must be a Stripe secret key (sk_live_…, sk_test_… or a restricted rk_… key)',
    );
  }
  const billingRunAt = s.read('BILLING_RUN_AT') ?? '02:00';
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(billingRunAt)) {
    s.problem(`BILLING_RUN_AT must be HH:MM in Europe/London time (got "${billingRunAt}")`);
  }
  const retryDaysRaw = s.read('PAYMENT_RETRY_DAYS') ?? '1,3,5,7';
  const paymentRetryDays = retryDaysRaw.split(',').map((d) => Number(d.trim()));
  if (
    paymentRetryDays.some((d) => !Number.isInteger(d) || d < 1 || d > 60) ||
    paymentRetryDays.some((d, i) => i > 0 && d <= (paymentRetryDays[i - 1] ?? 0))
  ) {
    s.problem(
      `PAYMENT_RETRY_DAYS must be increasing whole days from 1 to 60, comma-separated (got "${retryDaysRaw}")`,
    );
  }
  // Without its prefix it is another value pasted in its place (the key, the endpoint's id), and every
  // Stripe event would be refused as badly signed.
  const stripeWebhookSecret = s.read('STRIPE_WEBHOOK_SECRET');
  if (stripeWebhookSecret !== undefined && !/^whsec_\S+$/.test(stripeWebhookSecret))
    s.problem("STRIPE_WEBHOOK_SECRET must be a webhook endpoint's signing secret (whsec_…)");
  return {
    stripeSecretKey,
    stripeApiBase: s.url('STRIPE_API_BASE', ['http:', 'https:']),
    stripeWebhookSecret,
    sandboxStripeApiBase: s.url('SANDBOX_STRIPE_API_BASE', ['http:', 'https:']),
    paymentRetryDays,
    paymentLeaseSeconds: s.integer('PAYMENT_LEASE_SECONDS', 30, 5, 3600),
    billingRunAt,
  };
}

/** Webhook deliveries, and how long the events they carry are kept. */
function webhookSettings(
  s: Settings,
): Pick<
  Config,
  | 'webhooksAllowPrivate'
  | 'webhookRetryScheduleMs'
  | 'webhookPollIntervalMs'
  | 'webhookEndpointConcurrency'
  | 'eventRetentionDays'
  | 'documentRenderThreads'
> {
  return {
    // NOTE: off unless asked for: on a shared service a sandbox endpoint at a private address is a way
    // into the operator's network (its answers are read back in the delivery log), and a receiver on
    // an integrator's own machine is reachable only from a service run on that machine anyway.
    webhooksAllowPrivate: s.bool('WEBHOOKS_ALLOW_PRIVATE', false),
    webhookRetryScheduleMs: s.durationsMs(
      'WEBHOOKS_RETRY_SCHEDULE',
      [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    ),
    webhookPollIntervalMs: s.integer('WEBHOOKS_POLL_INTERVAL_MS', 1000, 10, 60_000),
    webhookEndpointConcurrency: s.integer('WEBHOOKS_ENDPOINT_CONCURRENCY', 4, 1, 100),
    eventRetentionDays: s.integer('EVENT_RETENTION_DAYS', 400, 1, 36_500),
    documentRenderThreads: s.integer('DOCUMENT_RENDER_THREADS', availableParallelism(), 0, 64),
  };
}

/** Devices: positions kept, trips cut, and the MQTT broker they publish to. */
function telematicsSettings(
  s: Settings,
): Pick<
  Config,
  | 'positionRetentionDays'
  | 'tripEndIdleMinutes'
  | 'mqttUrl'
  | 'mqttShareGroup'
  | 'mqttClientId'
  | 'mqttConnections'
> {
  const mqttName = (name: string, fallback: string): string => {
    const raw = s.read(name) ?? fallback;
    if (!MQTT_NAME.test(raw))
      s.problem(`${name} must be 1 to 128 letters, digits, '.', '_' or '-' (got "${raw}")`);
    return raw;
  };
  return {
    positionRetentionDays: s.integer('POSITION_RETENTION_DAYS', 400, 1, 36_500),
    tripEndIdleMinutes: s.integer('TRIP_END_IDLE_MINUTES', 5, 1, 240),
    mqttUrl: s.url('MQTT_URL', ['mqtt:', 'mqtts:', 'ws:', 'wss:']),
    mqttShareGroup: mqttName('MQTT_SHARE_GROUP', 'milepost'),
    mqttClientId: mqttName('MQTT_CLIENT_ID', defaultMqttClientId()),
    mqttConnections: s.integer('MQTT_CONNECTIONS', 8, 1, 32),
  };
}

/** How long personal data is kept: policyholders after their last policy, detailed routes. */
function retentionSettings(s: Settings): Pick<Config, 'retentionAfterEndDays' | 'routeRetentionDays'> {
  return {
    retentionAfterEndDays: s.integer('RETENTION_AFTER_END_DAYS', 2190, 0, 36_500),
    routeRetentionDays: s.integer('ROUTE_RETENTION_DAYS', 400, 1, 36_500),
  };
}

/** Traces over OTLP/HTTP: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
function telemetrySettings(s: Settings): Pick<Config, 'otelExporterEndpoint' | 'otelServiceName'> {
  const otelExporterEndpoint = s.url('OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']);
  const otelServiceName = s.read('OTEL_SERVICE_NAME') ?? 'milepost';
  if (!/^[\w.-]{1,100}$/.test(otelServiceName))
    s.problem(
      `OTEL_SERVICE_NAME must be 1 to 100 letters, digits, '_', '.' or '-' (got "${otelServiceName}")`,
    );
  return { otelExporterEndpoint, otelServiceName };
}

/** The policyholder web app's settings (see `AppSettings`). */
function webAppSettings(s: Settings): AppSettings {
  const brandName = s.read('APP_BRAND_NAME') ?? 'Milepost';
  if (brandName.length > 60) s.problem('APP_BRAND_NAME must be at most 60 characters');
  const brandColour = s.read('APP_BRAND_COLOUR') ?? '#1f5f8b';
  if (!/^#[0-9a-f]{6}$/i.test(brandColour))
    s.problem(`APP_BRAND_COLOUR must be a colour as #rrggbb (got "${brandColour}")`);
  const stripePublishableKey = s.read('STRIPE_PUBLISHABLE_KEY');
  if (stripePublishableKey !== undefined && !/^pk_(live|test)_\w+$/.test(stripePublishableKey))
    s.problem('STRIPE_PUBLISHABLE_KEY must be a Stripe publishable key (pk_live_… or pk_test_…)');
  const mapTileUrl = s.read('MAP_TILE_URL');
  if (mapTileUrl !== undefined && !/^https?:\/\/[^/\s]+\/\S*\{z\}\S*\{x\}\S*\{y\}\S*$/.test(mapTileUrl))
    s.problem(`MAP_TILE_URL must be an http(s) tile template with {z}, {x} and {y} (got "${mapTileUrl}")`);
  return {
    clientId: s.clientId('APP_CLIENT_ID'),
    environment: s.oneOf('APP_ENVIRONMENT', ['sandbox', 'production'] as const, 'sandbox'),
    brandName,
    brandColour: brandColour.toLowerCase(),
    stripePublishableKey,
    mapTileUrl,
  };
}
