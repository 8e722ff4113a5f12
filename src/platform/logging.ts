import type { FastifyReply, FastifyRequest } from 'fastify';
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
/**
 * pino's numeric levels (this service defines no custom ones), as constants: a lookup by name on
 * every call was a megamorphic keyed load on the request path.
 */
const LEVEL_VALUE: Readonly<Record<LogMethod, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
};

/**
 * A request's logger: it holds the request id and the route's level, and builds the pino child the
 * first time the request logs at a level that is on. Most requests log nothing below the production
 * level, and a pino child per request cost a tenth of `GET /healthz` throughput
 * (`npm run bench -- healthz`). A class, so that a request allocates one small object rather than a
 * closure per method.
 */
class RequestLogger {
  // NOTE: `declare`d TypeScript-private fields, set once in the constructor, rather than #private ones:
  // a #field is defined through a keyed IC on every construction, 600 of the ~100,000 instructions of
  // a `GET /healthz` for these five (callgrind); `declare` emits no field definition at all.
  declare private readonly parent: Logger;
  declare private readonly bindings: Record<string, unknown>;
  /** The route's level, if it has one. */
  declare private readonly options: { level?: string };
  declare private readonly threshold: number;
  declare private child_: Logger | undefined;

  constructor(parent: Logger, bindings: Record<string, unknown>, options: { level?: string }) {
    this.parent = parent;
    this.bindings = bindings;
    this.options = options;
    this.threshold =
      options.level === undefined
        ? parent.levelVal
        : (parent.levels.values[options.level] ?? parent.levelVal);
    this.child_ = undefined;
  }

  get level(): string {
    return this.options.level ?? this.parent.level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.parent.levels.values[level] ?? 0) >= this.threshold;
  }

  child(bindings: Record<string, unknown>, options?: object): Logger {
    return this.real().child(bindings, options);
  }

  silent(): void {}
  fatal(...args: unknown[]): void {
    if (LEVEL_VALUE.fatal >= this.threshold) this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    if (LEVEL_VALUE.error >= this.threshold) this.write('error', args);
  }
  warn(...args: unknown[]): void {
    if (LEVEL_VALUE.warn >= this.threshold) this.write('warn', args);
  }
  info(...args: unknown[]): void {
    if (LEVEL_VALUE.info >= this.threshold) this.write('info', args);
  }
  debug(...args: unknown[]): void {
    if (LEVEL_VALUE.debug >= this.threshold) this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    if (LEVEL_VALUE.trace >= this.threshold) this.write('trace', args);
  }

  private write(method: LogMethod, args: unknown[]): void {
    const child = this.real();
    child[method](...(args as Parameters<Logger['info']>));
  }

  private real(): Logger {
    return (this.child_ ??= this.parent.child(this.bindings, this.options));
  }
}

/** A request's logger, lazy (see `RequestLogger`): `options.level` is its route's level, if it has one. */
export function createRequestLogger(
  parent: Logger,
  bindings: Record<string, unknown>,
  options: { level?: string },
): Logger {
  return new RequestLogger(parent, bindings, options) as unknown as Logger;
}

/**
 * How requests, replies and errors appear in request logs: Fastify's own serializers, written here
 * because the service gives Fastify no logger (observability.ts, `createMeteredLogController`).
 */
const HTTP_LOG_SERIALIZERS = {
  req: (request: FastifyRequest) => ({
    method: request.method,
    url: request.url,
    version: request.headers['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket.remotePort,
  }),
  res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
  err: pino.stdSerializers.err,
};

/** The parent of every request's logger: the service's logger with the HTTP serializers. */
export function httpLogger(logger: Logger): Logger {
  return logger.child({}, { serializers: HTTP_LOG_SERIALIZERS });
}
