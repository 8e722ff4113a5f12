import { pino, type Logger } from 'pino';

/** Paths that carry secrets or card data; pino replaces them before anything is written. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.client_secret',
  'req.headers.cookie',
  'req.headers["stripe-signature"]',
  '*.password',
  '*.new_password',
  '*.temporary_password',
  '*.client_secret',
  '*.client_secret_sandbox',
  '*.access_token',
  '*.refresh_token',
  '*.session',
  '*.code',
  '*.card',
  '*.card_number',
  '*.cvc',
  '*.payment_temporary_token',
  '*.secret',
  '*.admin_api_key',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  return destination === undefined ? pino(options) : pino(options, destination);
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
const LOG_METHODS: readonly LogMethod[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/**
 * Fastify's `childLoggerFactory`: a request's child logger (with its request id, and the route's level)
 * is built the first time the request logs at a level that is on, not for every request. Building a
 * pino child per request cost a tenth of `GET /healthz` throughput (`npm run bench -- healthz`), and
 * most requests log nothing below the production level.
 */
export function lazyChildLogger(
  logger: Logger,
  bindings: Record<string, unknown>,
  options: { level?: string },
): Logger {
  let child: Logger | undefined;
  const real = (): Logger => (child ??= logger.child(bindings, options));
  const threshold = logger.levels.values[options.level ?? logger.level] ?? 0;
  const lazy: Record<string, unknown> = {
    get level() {
      return options.level ?? logger.level;
    },
    child: (more: Record<string, unknown>, moreOptions?: object) => real().child(more, moreOptions),
    silent: () => undefined,
    isLevelEnabled: (level: string) => (logger.levels.values[level] ?? 0) >= threshold,
  };
  for (const method of LOG_METHODS) {
    const on = (logger.levels.values[method] ?? 0) >= threshold;
    const write: (...args: unknown[]) => void = (...args) => {
      const log: (...a: unknown[]) => void = real()[method].bind(child);
      log(...args);
    };
    lazy[method] = on ? write : noop;
  }
  return lazy as unknown as Logger;
}
const noop = (): void => undefined;
