import path from 'node:path';

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
  readonly dataDir: string;
  /** Undefined in embedded mode until generated on first start (see container). */
  readonly adminApiKey: string | undefined;
  readonly mockEnvironment: boolean;
  readonly smtpUrl: string | undefined;
  readonly emailFrom: string;
  readonly publicBaseUrl: string | undefined;
  readonly stripeSecretKey: string | undefined;
  readonly stripeApiBase: string | undefined;
  readonly billingRunAt: string;
  readonly webhooksAllowPrivate: boolean;
  readonly bodyLimitBytes: number;
  readonly shutdownTimeoutMs: number;
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

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const ROLES: readonly Role[] = ['all', 'api', 'worker'];

/**
 * Reads every setting once and reports all problems together, each naming its variable,
 * so an operator fixes a bad deployment in one round.
 */
export function loadConfig(env: Env, cwd: string = process.cwd()): Config {
  const problems: string[] = [];
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

  const adminApiKey = read('ADMIN_API_KEY');
  if (adminApiKey !== undefined && adminApiKey.length < 32) {
    problems.push('ADMIN_API_KEY must be at least 32 characters');
  }
  const host = read('HOST') ?? '127.0.0.1';
  const billingRunAt = read('BILLING_RUN_AT') ?? '02:00';
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(billingRunAt)) {
    problems.push(`BILLING_RUN_AT must be HH:MM in Europe/London time (got "${billingRunAt}")`);
  }
  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const stripeSecretKey = read('STRIPE_SECRET_KEY');
  if (stripeSecretKey !== undefined && !/^(sk|rk)_(live|test)_/.test(stripeSecretKey)) {
    problems.push(
      'STRIPE_SECRET_KEY must be a Stripe secret key (sk_live_…, sk_test_… or a restricted rk_… key)',
    );
  }

  const config: Config = {
    port: integer('PORT', 3000, 0, 65535),
    host,
    role: oneOf('ROLE', ROLES, 'all'),
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    databaseUrl,
    dataDir: path.resolve(cwd, read('DATA_DIR') ?? 'data'),
    adminApiKey,
    mockEnvironment: bool('MOCK_ENVIRONMENT', true),
    smtpUrl: url('SMTP_URL', ['smtp:', 'smtps:']),
    emailFrom: read('EMAIL_FROM') ?? 'Milepost <no-reply@milepost.invalid>',
    publicBaseUrl: url('PUBLIC_BASE_URL', ['http:', 'https:']),
    stripeSecretKey,
    stripeApiBase: url('STRIPE_API_BASE', ['http:', 'https:']),
    billingRunAt,
    webhooksAllowPrivate: bool('WEBHOOKS_ALLOW_PRIVATE', true),
    bodyLimitBytes: integer('BODY_LIMIT_BYTES', 1_048_576, 1024, 104_857_600),
    shutdownTimeoutMs: integer('SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
